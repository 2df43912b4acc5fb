/* The one-call-at-a-time rule, and who is inside the API.
 *
 * One 32-bit word, `hold`, carries both: flag bits (below UFORM_HOLD_FLAGS) say who may fork
 * the workers now, and the bits above count the threads inside the API on this executor
 * (ENTERED units). A synchronous call enters and takes the executor with a single CAS when
 * nothing is queued or waiting (the fork-join fast path), and releases and leaves with another.
 * Everything else (waiting for earlier deferred calls, the leader waiting for a synchronous call,
 * drains, free) goes through the mutex, where sleeping is allowed. A second thread's synchronous
 * call never waits: it gets CONTENDED.
 *
 * Why the count: uform_executor_free releases the mutex and the memory. A thread that is still
 * between a check and its last touch of the executor (a verb between its CLOSING check and its
 * hold, a finishing call about to broadcast, a drain waking its workers) would touch freed
 * memory. Free therefore waits, under the mutex, until it is the only thread counted in; a thread
 * leaving while CLOSING is set counts itself out under the mutex and broadcasts, so once free sees
 * the count drop, the leaver's last touch (its unlock) is behind it. POSIX makes destroying a
 * mutex right after another thread unlocked it safe, which is all free relies on. */
#include "core/error.h"
#include "executor/executor_internal.h"
#include "executor/executor_test_hooks.h"

void (*_Atomic uform__test_before_leave)(void); /* static storage: starts NULL */

static inline _Atomic uint32_t *hold_of(const uform_executor_t *executor) {
    return (_Atomic uint32_t *)&executor->hold; /* counting in is no change to the executor's value */
}

static uint32_t entered(uint32_t hold) { return hold / UFORM_HOLD_ENTERED; }

static bool condition_holds(uform_executor_t *executor, uform__wait_t what, uint64_t target) {
    uint32_t hold = atomic_load(&executor->hold);
    /* A synchronous call held by the bias is in the word as BIASED once revoked: every waiter
     * revokes before it waits, and no bias is granted while one waits (WAITERS is set). */
    switch (what) {
    case UFORM_WAIT_CLAIM:
        /* Earlier deferred calls first (submission order), and the leader off the workers. */
        return (hold & UFORM_HOLD_CLOSING) || (executor->completed >= target && !(hold & UFORM_HOLD_LEADER));
    case UFORM_WAIT_LEADER:
        /* Not while a synchronous call runs, nor ahead of a claimer it is not owed. */
        return !(hold & UFORM_HOLD_RUNNING) && !((hold & UFORM_HOLD_CLAIM) && target > executor->claim_target);
    case UFORM_WAIT_IDLE:
    case UFORM_WAIT_CLOSED: {
        bool idle = executor->completed >= target && !(hold & (UFORM_HOLD_RUNNING | UFORM_HOLD_CLAIM));
        return what == UFORM_WAIT_IDLE ? idle : idle && entered(hold) == 1; /* free: the only one left */
    }
    }
    return true;
}

void uform__wait_locked(uform_executor_t *executor, uform__wait_t what, uint64_t target) {
    /* Announce first, then test: a fast-path release either happened before the announcement
     * (the test sees it) or sees WAITERS and broadcasts under the lock we hold. */
    if (executor->waiters++ == 0) atomic_fetch_or(&executor->hold, UFORM_HOLD_WAITERS);
    while (!condition_holds(executor, what, target)) pthread_cond_wait(&executor->changed, &executor->lock);
    if (--executor->waiters == 0) atomic_fetch_and(&executor->hold, ~(uint32_t)UFORM_HOLD_WAITERS);
}

static uform_status_t closing_error(const char *caller) {
    return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the executor is being freed by another thread", caller);
}

uint32_t uform__enter(const uform_executor_t *executor) {
    return atomic_fetch_add(hold_of(executor), UFORM_HOLD_ENTERED);
}

/** Subtracts `amount` (ENTERED, plus any hold bits the leaver owns) from the word; under the
 *  mutex with a broadcast when someone may be waiting for it (WAITERS or CLOSING). */
static void leave_with(const uform_executor_t *constant, uint32_t amount) {
    uform_executor_t *executor = (uform_executor_t *)constant;
    void (*hook)(void) = atomic_load_explicit(&uform__test_before_leave, memory_order_relaxed);
    if (hook) hook();
    uint32_t hold = atomic_load_explicit(&executor->hold, memory_order_relaxed);
    for (;;) {
        if (hold & (UFORM_HOLD_WAITERS | UFORM_HOLD_CLOSING)) {
            /* CLOSING is sticky and set under the mutex, so free cannot see the count drop
             * before we unlock: our last touch of the executor is that unlock. */
            pthread_mutex_lock(&executor->lock);
            atomic_fetch_sub(&executor->hold, amount);
            pthread_cond_broadcast(&executor->changed);
            pthread_mutex_unlock(&executor->lock);
            return;
        }
        if (atomic_compare_exchange_weak_explicit(&executor->hold, &hold, hold - amount, memory_order_release,
                                                  memory_order_relaxed))
            return;
    }
}

void uform__leave(const uform_executor_t *executor) { leave_with(executor, UFORM_HOLD_ENTERED); }

static uform_status_t forked_error(const char *caller) {
    return uform__fail(UFORM_STATUS_FORKED, "%s: this executor was created before fork(); its threads do not exist "
                                            "in this process",
                       caller);
}

/** The checks every call makes once counted in (not before: until then free may release the
 *  executor, so counting in is the first touch). */
static uform_status_t checks_once_entered(const uform_executor_t *executor, uint32_t hold, const char *caller) {
    if (uform__forked_since(executor->fork_generation))
        return forked_error(caller); /* not left again: the mutex may be held by a thread that is gone */
    if (uform__thread_belongs_to(executor)) {
        uform__leave(executor);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: called from inside one of this executor's own callbacks", caller);
    }
    if (hold & UFORM_HOLD_CLOSING) {
        uform__leave(executor);
        return closing_error(caller);
    }
    return UFORM_STATUS_OK;
}

uform_status_t uform__enter_call(const uform_executor_t *executor, const char *caller) {
    return checks_once_entered(executor, uform__enter(executor), caller);
}

static uform_status_t contended_error(const char *caller) {
    return uform__fail(UFORM_STATUS_CONTENDED,
                       "%s: another thread's call holds this executor (an executor runs one call at a time)", caller);
}

/** The word's fast path took SYNC, then found a bias its first read missed: one granted behind
 *  that read (by a thread that has released since) or being revoked. Settled under the lock:
 *  the owner found inside keeps the executor and this call is CONTENDED. */
static uform_status_t settle_raced_bias(uform_executor_t *executor, const char *caller) {
    pthread_mutex_lock(&executor->lock);
    bool owner_inside = uform__bias_revoke_locked(executor);
    if (owner_inside) atomic_fetch_sub(&executor->hold, UFORM_HOLD_SYNC);
    pthread_cond_broadcast(&executor->changed);
    pthread_mutex_unlock(&executor->lock);
    if (!owner_inside) return UFORM_STATUS_OK;
    uform__leave(executor);
    return contended_error(caller);
}

uform_status_t uform__hold_forked_error(const char *caller) { return forked_error(caller); }

uform_status_t uform__hold_sync_unbiased(uform_executor_t *executor, const char *caller, uintptr_t bias,
                                         uform__bias_entry_t entry) {
    uform_status_t status;
    if (bias > UFORM_BIAS_OFF) {
        /* Another thread's bias (the slow path takes it back), or ours going (the owner's entry
         * found it revoked or deferred calls queued, and stepped out counted in). */
        if (entry == UFORM_BIAS_STEPPED_OUT)
            status = checks_once_entered(executor, atomic_load(&executor->hold), caller);
        else
            status = uform__enter_call(executor, caller);
    } else if (bias == UFORM_BIAS_REVOKED) {
        /* A revocation under way, or the owner's converted call running: the slow path, whose
         * checks come first (one of that call's own callbacks is refused, not CONTENDED). */
        status = uform__enter_call(executor, caller);
    } else {
        /* Fast path: nothing queued, no flag set: enter and hold in one CAS. */
        uform__bias_widen(2);
        uint32_t hold = atomic_load_explicit(&executor->hold, memory_order_relaxed);
        if (!(hold & UFORM_HOLD_FLAGS) && atomic_load_explicit(&executor->outstanding, memory_order_acquire) == 0 &&
            atomic_compare_exchange_strong(&executor->hold, &hold, hold + UFORM_HOLD_ENTERED + UFORM_HOLD_SYNC)) {
            /* Held (so no callback of this executor runs: nobody can belong to it), unless forked. */
            if (uform__forked_since(executor->fork_generation)) return forked_error(caller);
            /* Read again after the CAS: a bias granted before it, by the thread whose release the
             * CAS followed, is seen here. (The first read said NONE or OFF: no biased call ran
             * then, and one of a later owner's callbacks cannot be this thread, which was
             * already calling.) */
            bias = atomic_load(&executor->bias);
            if (bias == UFORM_BIAS_NONE || bias == UFORM_BIAS_OFF) return UFORM_STATUS_OK;
            return settle_raced_bias(executor, caller);
        }
        status = uform__enter_call(executor, caller);
    }
    if (status != UFORM_STATUS_OK) return status;

    pthread_mutex_lock(&executor->lock);
    /* Under the lock from here to CLAIM: no bias is granted behind this revocation. */
    uform__bias_revoke_locked(executor);
    uint32_t hold = atomic_load(&executor->hold);
    for (;;) {
        if (hold & UFORM_HOLD_CLOSING) {
            pthread_mutex_unlock(&executor->lock);
            uform__leave(executor);
            return closing_error(caller);
        }
        if (hold & (UFORM_HOLD_RUNNING | UFORM_HOLD_CLAIM)) {
            pthread_mutex_unlock(&executor->lock);
            uform__leave(executor);
            return contended_error(caller);
        }
        if (atomic_compare_exchange_weak(&executor->hold, &hold, hold | UFORM_HOLD_CLAIM)) break;
    }
    executor->claim_target = executor->submitted;
    uform__wait_locked(executor, UFORM_WAIT_CLAIM, executor->claim_target);
    hold = atomic_load(&executor->hold);
    if (hold & UFORM_HOLD_CLOSING) {
        atomic_fetch_and(&executor->hold, ~(uint32_t)UFORM_HOLD_CLAIM);
        pthread_cond_broadcast(&executor->changed);
        pthread_mutex_unlock(&executor->lock);
        uform__leave(executor);
        return closing_error(caller);
    }
    while (!atomic_compare_exchange_weak(&executor->hold, &hold, (hold & ~(uint32_t)UFORM_HOLD_CLAIM) | UFORM_HOLD_SYNC)) {
    }
    pthread_mutex_unlock(&executor->lock);
    return UFORM_STATUS_OK;
}

void uform__release_sync_unbiased(uform_executor_t *executor) {
    uform__bias_grant(executor); /* before the release: a grant needs the hold */
    leave_with(executor, UFORM_HOLD_ENTERED + UFORM_HOLD_SYNC);
}

void uform__hold_leader_locked(uform_executor_t *executor, uint64_t sequence) {
    for (;;) {
        /* No bias is granted while we hold the lock or wait (WAITERS), nor while a deferred call
         * is outstanding, as this one is: revoked here, it stays revoked. */
        uform__bias_revoke_locked(executor);
        uform__wait_locked(executor, UFORM_WAIT_LEADER, sequence);
        uint32_t hold = atomic_load(&executor->hold);
        /* A fast-path synchronous call may slip in between the test and this CAS: retry. */
        if (!(hold & UFORM_HOLD_RUNNING) &&
            atomic_compare_exchange_strong(&executor->hold, &hold, hold | UFORM_HOLD_LEADER))
            return;
    }
}

void uform__release_leader(uform_executor_t *executor) {
    /* The caller broadcasts `changed` under the lock right after (a deferred call finished). */
    atomic_fetch_and(&executor->hold, ~(uint32_t)UFORM_HOLD_LEADER);
}
