/* Deferred calls: a ring of `deferred_limit` slots under the executor's mutex, drained in
 * submission order by the leader thread (worker 0), which forks the other workers exactly as
 * a synchronous caller would. Handles are reference-counted between the caller and the
 * executor, so either may let go first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/memory.h"
#include "executor/executor_internal.h"

void (*_Atomic uform__test_after_cancel_claim)(void); /* static storage: starts NULL */

static void deallocate_handle(uform_deferred_t *deferred) {
    uform__deallocate(deferred->job.arguments);
    uform__deallocate(deferred);
}

static void release_handle(uform_deferred_t *deferred) {
    if (atomic_fetch_sub(&deferred->references, 1) == 1) deallocate_handle(deferred);
}

static void finish(uform_deferred_t *deferred, uform_status_t status) {
    deferred->status = status;
    /* The running thread's own message, set during this call (cleared before it): the driver's
     * error name of a GPU call, the first failing callback's words, or the cancel's. */
    if (status != UFORM_STATUS_OK) snprintf(deferred->message, sizeof deferred->message, "%s", uform_last_error());
    atomic_store_explicit(&deferred->finished, 1, memory_order_release);
    uform__futex_wake((const uint32_t *)&deferred->finished, -1);
}

/** Calls finished so far: every one before the first still in the table (calls finish in
 *  submission order, but for cancelled ones, which drop_cancelled_locked takes out early). */
static void note_completed_locked(uform_executor_t *executor) {
    executor->completed =
        executor->queue_count ? executor->queue[executor->queue_head]->sequence - 1 : executor->submitted;
}

/** Takes out of the table the queued calls a cancel has finished, keeping the others in order:
 *  otherwise each keeps its slot until the leader reaches it, which a long call ahead of them
 *  may delay without end, and a caller submitting and cancelling behind it finds the table
 *  full. The leader holds only the head across an unlock, and only while it runs (RUNNING),
 *  so what this removes is nothing the leader uses. */
static void drop_cancelled_locked(uform_executor_t *executor) {
    size_t limit = executor->deferred_limit, kept = 0;
    for (size_t i = 0; i < executor->queue_count; i++) {
        uform_deferred_t *deferred = executor->queue[(executor->queue_head + i) % limit];
        if (atomic_load(&deferred->state) == UFORM_DEFERRED_CANCELLED) {
            atomic_fetch_sub(&executor->outstanding, 1);
            release_handle(deferred);
            continue;
        }
        executor->queue[(executor->queue_head + kept++) % limit] = deferred;
    }
    if (kept == executor->queue_count) return;
    executor->queue_count = kept;
    note_completed_locked(executor);
    pthread_cond_broadcast(&executor->changed);
}

uform_status_t uform__deferred_submit(uform_executor_t *executor, const uform__job_t *job, uform_deferred_t **out) {
    uform_deferred_t *deferred = uform__allocate_zeroed(1, sizeof *deferred);
    if (!deferred) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "deferred call handle");
    deferred->job = *job;
    deferred->job.done = &deferred->done;
    deferred->job.cancel_handle = &deferred->cancelled;
    deferred->job.arguments = NULL;
    if (job->arguments_bytes) {
        /* A BODY job's arguments live in the submitting frame: the handle keeps a copy. */
        deferred->job.arguments = uform__allocate(job->arguments_bytes);
        if (!deferred->job.arguments) {
            uform__deallocate(deferred);
            return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "deferred call arguments");
        }
        memcpy(deferred->job.arguments, job->arguments, job->arguments_bytes);
    }
    deferred->executor = executor;
    deferred->fork_generation = uform__fork_generation();
    atomic_init(&deferred->references, 2);
    if (!executor) {
        /* The NULL executor owns no threads: the call runs now, and the handle is finished. */
        atomic_store(&deferred->references, 1);
        atomic_store(&deferred->state, UFORM_DEFERRED_RUNNING);
        uform__fail(UFORM_STATUS_OK, "%s", ""); /* this call's message only */
        uform_status_t status = uform__job_cancelled(&deferred->job)
                                    ? uform__fail(UFORM_STATUS_INTERRUPTED, "cancelled before it started")
                                    : uform__run_inline(NULL, &deferred->job);
        finish(deferred, status);
        *out = deferred;
        return UFORM_STATUS_OK;
    }
    /* Counted in until the mutex is released: a free racing this submission waits for it. */
    uform_status_t entered = uform__enter_call(executor, "deferred call");
    if (entered != UFORM_STATUS_OK) {
        deallocate_handle(deferred);
        return entered;
    }
    if (deferred->job.kind == UFORM_JOB_FOR_THREADS) deferred->job.n = deferred->job.total = executor->threads;
    pthread_mutex_lock(&executor->lock);
    /* Revoked here, where the submitter is most often the owner (free of cost), rather than by
     * the leader, for whom it would be another thread's bias (a barrier); no bias is granted
     * while this call is outstanding. */
    uform__bias_revoke_locked(executor);
    if (atomic_load(&executor->hold) & UFORM_HOLD_CLOSING) {
        pthread_mutex_unlock(&executor->lock);
        uform__leave(executor);
        deallocate_handle(deferred);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "the executor is being freed by another thread");
    }
    if (executor->queue_count == executor->deferred_limit) drop_cancelled_locked(executor);
    if (executor->queue_count == executor->deferred_limit) {
        size_t limit = executor->deferred_limit;
        pthread_mutex_unlock(&executor->lock);
        uform__leave(executor);
        deallocate_handle(deferred);
        return uform__fail(UFORM_STATUS_CONTENDED,
                           "the executor's deferred table is full (%zu calls queued or running)", limit);
    }
    size_t slot = (executor->queue_head + executor->queue_count) % executor->deferred_limit;
    executor->queue[slot] = deferred;
    executor->queue_count++;
    deferred->sequence = ++executor->submitted;
    atomic_fetch_add(&executor->outstanding, 1);
    pthread_cond_signal(&executor->queued);
    pthread_mutex_unlock(&executor->lock);
    uform__leave(executor);
    *out = deferred;
    return UFORM_STATUS_OK;
}

void *uform__leader_main(void *argument) {
    uform__worker_t *worker = argument;
    uform_executor_t *executor = worker->executor;
    uform__membership_t membership;
    uform__membership_push(&membership, executor);
    /* The process barrier's registration, here where no call waits for it (executor_bias.c). */
    uform__process_barrier_ready();
    pthread_mutex_lock(&executor->lock);
    for (;;) {
        /* Deferred calls aren't latency-critical: the leader sleeps whatever the mood. */
        while (!executor->queue_count && !atomic_load(&executor->stopping))
            pthread_cond_wait(&executor->queued, &executor->lock);
        if (!executor->queue_count) break; /* stopping, queue empty */
        uform_deferred_t *deferred = executor->queue[executor->queue_head];
        /* A call cancelled while queued was finished by its cancel: only its slot is left. */
        uint32_t queued = UFORM_DEFERRED_QUEUED;
        bool runs = atomic_compare_exchange_strong(&deferred->state, &queued, UFORM_DEFERRED_RUNNING);
        uform_status_t status = UFORM_STATUS_OK;
        if (runs) {
            uform__hold_leader_locked(executor, deferred->sequence);
            pthread_mutex_unlock(&executor->lock);

            uform__fail(UFORM_STATUS_OK, "%s", ""); /* this call's message only */
            status = uform__run_job(executor, &deferred->job);
            /* A callback fork()ed and this is the child: it has no caller to return to, and the
             * parent's waiters are in another process. End it, as executor.h documents. */
            if (uform__forked_since(executor->fork_generation)) _exit(UFORM_FORKED_CHILD_EXIT_);
            if (status == UFORM_STATUS_INTERRUPTED && uform__job_cancelled(&deferred->job))
                uform__fail(status, "deferred call cancelled; tasks not yet started did not run");

            uform__release_leader(executor);
            pthread_mutex_lock(&executor->lock);
        }
        /* The slot stays taken until the call finishes: the table bounds calls in flight. */
        executor->queue_head = (executor->queue_head + 1) % executor->deferred_limit;
        executor->queue_count--;
        note_completed_locked(executor);
        atomic_fetch_sub(&executor->outstanding, 1);
        if (runs) finish(deferred, status);
        release_handle(deferred);
        pthread_cond_broadcast(&executor->changed);
    }
    pthread_mutex_unlock(&executor->lock);
    uform__membership_pop(&membership);
    return NULL;
}

uform_status_t uform_deferred_poll(const uform_deferred_t *deferred) {
    if (!deferred) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_deferred_poll: handle is NULL");
    if (atomic_load_explicit(&deferred->finished, memory_order_acquire)) return UFORM_STATUS_OK;
    return uform__fail(UFORM_STATUS_TIMEOUT, "uform_deferred_poll: the call has not finished");
}

/** Why waiting for this unfinished handle could never end, or OK. */
static uform_status_t check_waitable(const uform_deferred_t *deferred, const char *caller) {
    if (atomic_load_explicit(&deferred->finished, memory_order_acquire)) return UFORM_STATUS_OK;
    if (uform__forked_since(deferred->fork_generation))
        return uform__fail(UFORM_STATUS_FORKED, "%s: the call belongs to the parent process (before fork()); it never runs here", caller);
    if (deferred->executor && uform__thread_belongs_to(deferred->executor))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: waiting from a callback of the executor that must run the call would never end", caller);
    return UFORM_STATUS_OK;
}

uform_status_t uform_deferred_wait(uform_deferred_t *deferred, double timeout_seconds) {
    if (!deferred) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_deferred_wait: handle is NULL");
    if (isnan(timeout_seconds))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_deferred_wait: the timeout is NaN");
    uform_status_t waitable = check_waitable(deferred, "uform_deferred_wait");
    if (waitable != UFORM_STATUS_OK) return waitable;
    bool forever = timeout_seconds < 0 || isinf(timeout_seconds);
    uint64_t start = uform__now_ns();
    uint64_t budget = forever ? 0 : (timeout_seconds > 1e9 ? (uint64_t)1e18 : (uint64_t)(timeout_seconds * 1e9));
    while (!atomic_load_explicit(&deferred->finished, memory_order_acquire)) {
        int64_t remaining = -1;
        if (!forever) {
            uint64_t elapsed = uform__now_ns() - start;
            if (elapsed >= budget)
                return uform__fail(UFORM_STATUS_TIMEOUT, "uform_deferred_wait: not finished after %g s",
                                   timeout_seconds);
            remaining = (int64_t)(budget - elapsed);
        }
        uform__futex_wait((const uint32_t *)&deferred->finished, 0, remaining);
    }
    uform_status_t status = deferred->status;
    if (status != UFORM_STATUS_OK)
        uform__fail(status, "deferred call failed: %s", deferred->message[0] ? deferred->message
                                                                             : uform_status_message(status));
    return status;
}

uform_status_t uform_deferred_cancel(uform_deferred_t *deferred) {
    if (!deferred) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_deferred_cancel: handle is NULL");
    if (atomic_load_explicit(&deferred->finished, memory_order_acquire)) return UFORM_STATUS_OK; /* it stands */
    if (uform__forked_since(deferred->fork_generation))
        return uform__fail(UFORM_STATUS_FORKED,
                           "uform_deferred_cancel: the call belongs to the parent process (before fork())");
    /* A reference of its own while it touches the handle: once the state below leaves QUEUED,
     * the leader may drop the slot's reference, and once `finished` is set a waiter may return
     * and drop the caller's (uform_deferred_wait, then uform_deferred_free, on another thread). */
    atomic_fetch_add(&deferred->references, 1);
    /* Running: its threads stop taking tasks. Queued: whoever moves it out of QUEUED first
     * decides, so the leader never starts a call its cancel has finished. */
    atomic_store(&deferred->cancelled, 1);
    uint32_t queued = UFORM_DEFERRED_QUEUED;
    if (atomic_compare_exchange_strong(&deferred->state, &queued, UFORM_DEFERRED_CANCELLED)) {
        void (*hook)(void) = atomic_load_explicit(&uform__test_after_cancel_claim, memory_order_relaxed);
        if (hook) hook();
        /* The message goes through this thread's last error, which the caller did not ask for. */
        char kept[UFORM_FAILURE_MESSAGE_];
        snprintf(kept, sizeof kept, "%s", uform_last_error());
        uform__fail(UFORM_STATUS_INTERRUPTED, "deferred call cancelled before it started");
        finish(deferred, UFORM_STATUS_INTERRUPTED);
        uform__fail(UFORM_STATUS_OK, "%s", kept);
    }
    release_handle(deferred);
    return UFORM_STATUS_OK;
}

uform_status_t uform_deferred_progress(const uform_deferred_t *deferred, size_t *done, size_t *total) {
    if (!deferred) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_deferred_progress: handle is NULL");
    if (done) *done = atomic_load(&((uform_deferred_t *)deferred)->done);
    if (total) *total = deferred->job.total;
    return UFORM_STATUS_OK;
}

void uform_deferred_free(uform_deferred_t *deferred) {
    if (!deferred) return;
    if (!atomic_load_explicit(&deferred->finished, memory_order_acquire)) {
        if (uform__forked_since(deferred->fork_generation)) {
            deallocate_handle(deferred); /* the parent's leader holds the other reference, in another process */
            return;
        }
        if (deferred->executor && uform__thread_belongs_to(deferred->executor)) {
            release_handle(deferred); /* the leader frees it when the call ends */
            return;
        }
    }
    while (!atomic_load_explicit(&deferred->finished, memory_order_acquire))
        uform__futex_wait((const uint32_t *)&deferred->finished, 0, -1);
    release_handle(deferred);
}
