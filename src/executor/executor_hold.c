/* The one-call-at-a-time rule. A synchronous call takes the executor with a single CAS when
 * nothing is queued (the fork-join fast path); everything else (waiting for earlier deferred
 * calls, the leader waiting for a synchronous call, drains) goes through the mutex, where
 * sleeping is allowed. A second thread's synchronous call never waits: it gets CONTENDED. */
#include "core/error.h"
#include "executor/executor_internal.h"

/* Sleeps on `changed` until `busy(hold)` is false; the WAITERS bit makes the releaser signal. */
static void wait_while_locked(uform_executor_t *executor, uint32_t busy_bits, bool include_outstanding) {
    for (;;) {
        uint32_t hold = atomic_fetch_or(&executor->hold, UFORM_HOLD_WAITERS) | UFORM_HOLD_WAITERS;
        bool busy = (hold & busy_bits) != 0 || (include_outstanding && atomic_load(&executor->outstanding) > 0);
        if (!busy) return;
        pthread_cond_wait(&executor->changed, &executor->lock);
    }
}

uform_status_t uform__hold_sync(uform_executor_t *executor) {
    uint32_t expected = 0;
    if (atomic_load_explicit(&executor->outstanding, memory_order_acquire) == 0 &&
        atomic_compare_exchange_strong(&executor->hold, &expected, UFORM_HOLD_SYNC))
        return UFORM_STATUS_OK;

    pthread_mutex_lock(&executor->lock);
    for (;;) {
        uint32_t hold = atomic_load(&executor->hold);
        if (hold & (UFORM_HOLD_SYNC | UFORM_HOLD_CLAIM)) {
            pthread_mutex_unlock(&executor->lock);
            return uform__fail(UFORM_STATUS_CONTENDED,
                               "another thread's call holds this executor (an executor runs one call at a time)");
        }
        if (atomic_compare_exchange_weak(&executor->hold, &hold, hold | UFORM_HOLD_CLAIM)) break;
    }
    /* Deferred calls submitted before this one run first: submission order. */
    wait_while_locked(executor, UFORM_HOLD_LEADER, true);
    uint32_t hold = atomic_load(&executor->hold);
    while (!atomic_compare_exchange_weak(&executor->hold, &hold,
                                         (hold & ~(uint32_t)UFORM_HOLD_CLAIM) | UFORM_HOLD_SYNC)) {
    }
    pthread_mutex_unlock(&executor->lock);
    return UFORM_STATUS_OK;
}

void uform__release_sync(uform_executor_t *executor) {
    uint32_t previous = atomic_exchange(&executor->hold, 0);
    if (previous & UFORM_HOLD_WAITERS) {
        pthread_mutex_lock(&executor->lock);
        pthread_cond_broadcast(&executor->changed);
        pthread_mutex_unlock(&executor->lock);
    }
}

void uform__hold_leader_locked(uform_executor_t *executor) {
    for (;;) {
        uint32_t hold = atomic_load(&executor->hold);
        if (hold & UFORM_HOLD_SYNC) {
            wait_while_locked(executor, UFORM_HOLD_SYNC, false);
            continue;
        }
        if (atomic_compare_exchange_weak(&executor->hold, &hold, hold | UFORM_HOLD_LEADER)) return;
    }
}

void uform__release_leader(uform_executor_t *executor) {
    /* The caller broadcasts `changed` under the lock right after (a deferred call finished). */
    atomic_fetch_and(&executor->hold, ~(uint32_t)(UFORM_HOLD_LEADER | UFORM_HOLD_WAITERS));
}
