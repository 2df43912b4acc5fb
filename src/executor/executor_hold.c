/* The one-call-at-a-time rule. A synchronous call takes the executor with a single CAS when
 * nothing is queued or waiting (the fork-join fast path); everything else (waiting for earlier
 * deferred calls, the leader waiting for a synchronous call, drains, free) goes through the
 * mutex, where sleeping is allowed. A second thread's synchronous call never waits: it gets
 * CONTENDED. The WAITERS bit is set while anyone sleeps on `changed`, so a releaser on the
 * fast path knows it must broadcast. */
#include "core/error.h"
#include "executor/executor_internal.h"

static bool condition_holds(uform_executor_t *executor, uform__wait_t what, uint64_t target) {
    uint32_t hold = atomic_load(&executor->hold);
    switch (what) {
    case UFORM_WAIT_CLAIM:
        /* Earlier deferred calls first (submission order), and the leader off the workers. */
        return (hold & UFORM_HOLD_CLOSING) || (executor->completed >= target && !(hold & UFORM_HOLD_LEADER));
    case UFORM_WAIT_LEADER:
        /* Not while a synchronous call runs, nor ahead of a claimer it is not owed. */
        return !(hold & UFORM_HOLD_SYNC) && !((hold & UFORM_HOLD_CLAIM) && target > executor->claim_target);
    case UFORM_WAIT_IDLE:
        return executor->completed >= target && !(hold & (UFORM_HOLD_SYNC | UFORM_HOLD_CLAIM));
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

static uform_status_t closing_error(void) {
    return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "the executor is being freed by another thread");
}

uform_status_t uform__hold_sync(uform_executor_t *executor) {
    uint32_t expected = 0;
    if (atomic_load_explicit(&executor->outstanding, memory_order_acquire) == 0 &&
        atomic_compare_exchange_strong(&executor->hold, &expected, UFORM_HOLD_SYNC))
        return UFORM_STATUS_OK;

    pthread_mutex_lock(&executor->lock);
    uint32_t hold = atomic_load(&executor->hold);
    for (;;) {
        if (hold & UFORM_HOLD_CLOSING) {
            pthread_mutex_unlock(&executor->lock);
            return closing_error();
        }
        if (hold & (UFORM_HOLD_SYNC | UFORM_HOLD_CLAIM)) {
            pthread_mutex_unlock(&executor->lock);
            return uform__fail(UFORM_STATUS_CONTENDED,
                               "another thread's call holds this executor (an executor runs one call at a time)");
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
        return closing_error();
    }
    while (!atomic_compare_exchange_weak(&executor->hold, &hold, (hold & ~(uint32_t)UFORM_HOLD_CLAIM) | UFORM_HOLD_SYNC)) {
    }
    pthread_mutex_unlock(&executor->lock);
    return UFORM_STATUS_OK;
}

void uform__release_sync(uform_executor_t *executor) {
    uint32_t previous = atomic_fetch_and(&executor->hold, ~(uint32_t)UFORM_HOLD_SYNC);
    if (previous & UFORM_HOLD_WAITERS) {
        pthread_mutex_lock(&executor->lock);
        pthread_cond_broadcast(&executor->changed);
        pthread_mutex_unlock(&executor->lock);
    }
}

void uform__hold_leader_locked(uform_executor_t *executor, uint64_t sequence) {
    for (;;) {
        uform__wait_locked(executor, UFORM_WAIT_LEADER, sequence);
        uint32_t hold = atomic_load(&executor->hold);
        /* A fast-path synchronous call may slip in between the test and this CAS: retry. */
        if (!(hold & UFORM_HOLD_SYNC) &&
            atomic_compare_exchange_strong(&executor->hold, &hold, hold | UFORM_HOLD_LEADER))
            return;
    }
}

void uform__release_leader(uform_executor_t *executor) {
    /* The caller broadcasts `changed` under the lock right after (a deferred call finished). */
    atomic_fetch_and(&executor->hold, ~(uint32_t)UFORM_HOLD_LEADER);
}
