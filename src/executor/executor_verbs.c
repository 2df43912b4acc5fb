/* The public verbs: validate, build a job, and run it synchronously (fork-join on the caller)
 * or queue it (deferred). All four verbs share one path so contention, fork and re-entrancy
 * rules can't differ between them. */
#include <stddef.h>
#include <stdio.h>

#include "core/error.h"
#include "executor/executor_internal.h"

/** A call's status in the caller's words: cancelled, or the first failing callback's own message
 *  (left as the thread's last error by the fork-join), else which status it returned. */
static uform_status_t call_failed(bool cancelled, uform_status_t status, const char *caller) {
    if (status == UFORM_STATUS_OK) return status;
    if (status == UFORM_STATUS_INTERRUPTED && cancelled)
        return uform__fail(status, "%s: cancelled; tasks not yet started did not run", caller);
    char message[UFORM_FAILURE_MESSAGE_];
    snprintf(message, sizeof message, "%s", uform_last_error());
    if (!message[0]) return uform__fail(status, "%s: a callback returned %s", caller, uform_status_name(status));
    return uform__fail(status, "%s: a callback returned %s: %s", caller, uform_status_name(status), message);
}

/* The path below takes the job by value and inline into each verb: its fields are then
 * constants and registers, and only the paths that hand it on (a fork-join, a deferred call)
 * build it in memory, from a copy. A 1-thread call builds none (bench/RESULTS.md). */

/** The job as the paths that take it by address see it, with its progress spacing: reports
 *  come at most ~256 times a call, and per task for small calls; FOR_THREADS: every thread
 *  reports (its total is the thread count by now). */
static inline uform__job_t handed_on(uform__job_t job) {
    size_t step = job.total / 256;
    job.progress_step = job.kind == UFORM_JOB_FOR_THREADS || !step ? 1 : step;
    return job;
}

/** Whether a held call is a fork-join of the job the executor has published already: then the
 *  job need not be built in memory at all: not cancelled (uform__run_job's first test), not a
 *  device executor's (whose layer uform__run_job asks again for a fault; those take the general
 *  path), tasks, on more than one thread (uform__fork_join's test), the same job. */
static inline bool forks_published(const uform_executor_t *executor, const uform__job_t *job) {
    return !uform__job_cancelled(job) && !executor->ops && job->kind != UFORM_JOB_BODY &&
           uform__job_forks(job, executor->threads) && uform__job_same(&executor->job, job);
}

/** The synchronous call on an executor, once `job` is complete: hold, run on the caller (and
 *  the workers), release. */
static inline __attribute__((always_inline)) uform_status_t run_held(uform_executor_t *executor, uform__job_t job,
                                                                     const char *caller) {
    /* Holding also counts this thread in: free waits for it until the release below. */
    uintptr_t biased = 0;
    uform_status_t status = uform__hold_sync(executor, caller, &biased);
    if (status != UFORM_STATUS_OK) return status;
    if (job.kind == UFORM_JOB_FOR_THREADS) job.n = job.total = executor->threads; /* read once counted in */
    if (job.progress) {
        atomic_store(&executor->progress_done_sync, 0);
        job.done = &executor->progress_done_sync;
    }
    /* A faulted layer (a device executor's GPU) answers before any callback runs, with the
     * fault's own words (uform__run_job checks again for deferred calls). */
    if (executor->ops && (status = executor->ops->fault(executor, caller)) != UFORM_STATUS_OK) {
        uform__release_sync(executor, biased);
        return status;
    }
    uform__membership_t membership;
    uform__membership_push(&membership, executor);
    if (uform__job_on_caller_alone(&job, executor->threads)) {
        /* What uform__run_job would come to, its checks already made: a plain job has no cancel
         * flag, and the layer's fault was read just above. */
        status = uform__run_plain_on_caller(executor->fork_generation, job.first, job.n, (uform_task_t)job.function,
                                            job.context);
    } else {
        uform__job_t held = handed_on(job);
        if (forks_published(executor, &held)) {
            status = uform__fork_join_published(executor);
        } else {
            uform__job_t in_memory = held; /* its address taken here alone: `held` stays in registers */
            status = uform__run_job(executor, &in_memory);
        }
    }
    uform__membership_pop(&membership);
    if (status == UFORM_STATUS_FORKED && uform__forked_since(executor->fork_generation))
        /* A callback fork()ed and this is the child: its workers and any lock holder are gone,
         * so leave the executor as it is (freeing it here answers FORKED and releases memory). */
        return uform__fail(UFORM_STATUS_FORKED, "%s: a callback called fork(); this is the child, where the "
                                                "executor's threads do not exist",
                           caller);
    uform__release_sync(executor, biased);
    if (job.kind == UFORM_JOB_BODY || status == UFORM_STATUS_OK) return status;
    return call_failed(uform__job_cancelled(&job), status, caller);
}

/** Every verb's path: validation of `call`, then synchronous (fork-join or body on the caller)
 *  or deferred. */
static inline __attribute__((always_inline)) uform_status_t
run_call(uform_executor_t *executor, const uform_call_t *call, uform__job_t job, const char *caller) {
    uform__call_clear_deferred(call);
    if (!job.function && !job.body)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the callback is NULL", caller);
    /* The layout before `cancel` is still read, without it. */
    if (call && call->struct_size < UFORM_CALL_SIZE_BEFORE_CANCEL_)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: call->struct_size is %zu, expected %zu (initialise with UFORM_CALL_INIT)", caller,
                           call->struct_size, sizeof(uform_call_t));
    bool deferred = call && call->deferred;
    if (call) {
        job.progress = call->progress;
        job.progress_context = call->progress_context;
        job.cancel = uform__call_cancel(call);
    }
    if (deferred) {
        uform__job_t queued = handed_on(job);
        return uform__deferred_submit(executor, &queued, call->deferred);
    }
    if (!executor) {
        _Atomic size_t done = 0;
        uform__job_t inline_job = handed_on(job);
        if (inline_job.progress) inline_job.done = &done;
        if (uform__job_cancelled(&inline_job)) return call_failed(true, UFORM_STATUS_INTERRUPTED, caller);
        /* The tasks first, then the flag: a cancel during the call says so (C leaves the order
         * of a call's arguments open, so not in one expression). */
        uform_status_t status = uform__run_inline(NULL, &inline_job);
        return call_failed(uform__job_cancelled(&inline_job), status, caller);
    }
    return run_held(executor, job, caller);
}

uform_status_t uform__run_call(uform_executor_t *executor, const uform_call_t *call, uform__job_t *job,
                               const char *caller) {
    return run_call(executor, call, *job, caller);
}

/** A fork-join verb's job, every field set explicitly, so that each is a value the compiler
 *  follows through run_call (a `= {...}` initializer once zeroed the whole struct in memory with
 *  `rep stos`, 15% of a 1-thread call). The assertion makes whoever adds a field come here. */
static inline uform__job_t job_of(uform__job_kind_t kind, size_t n, size_t first, void *function, void *context,
                                  size_t total) {
    uform__job_t job;
    _Static_assert(sizeof(uform__job_t) == offsetof(uform__job_t, n) + 16 * sizeof(size_t),
                   "a new job field: set it in job_of");
    job.kind = kind;
    job.n = n;
    job.first = first;
    job.function = function;
    job.context = context;
    job.progress = NULL;
    job.done = NULL;
    job.total = total;
    job.progress_step = 0;
    job.quotient = 0;
    job.remainder = 0;
    job.cancel = NULL;
    job.cancel_handle = NULL;
    job.progress_context = NULL;
    job.body = NULL;
    job.arguments = NULL;
    job.arguments_bytes = 0;
    return job;
}

uform_status_t uform_executor_for_n(uform_executor_t *executor, const uform_call_t *call, size_t n, uform_task_t task,
                                    void *context) {
    return run_call(executor, call, job_of(UFORM_JOB_FOR_N, n, 0, (void *)task, context, n), "uform_executor_for_n");
}

uform_status_t uform_executor_for_n_dynamic(uform_executor_t *executor, const uform_call_t *call, size_t n,
                                            uform_task_t task, void *context) {
    return run_call(executor, call, job_of(UFORM_JOB_FOR_N_DYNAMIC, n, 0, (void *)task, context, n),
                    "uform_executor_for_n_dynamic");
}

uform_status_t uform_executor_for_threads(uform_executor_t *executor, const uform_call_t *call, uform_task_t task,
                                          void *context) {
    /* The thread count is read once the call is counted in (see run and the deferred submission). */
    return run_call(executor, call, job_of(UFORM_JOB_FOR_THREADS, 1, 0, (void *)task, context, 1),
                    "uform_executor_for_threads");
}

uform_status_t uform_executor_for_slices(uform_executor_t *executor, const uform_call_t *call, size_t n,
                                         uform_slice_t slice, void *context) {
    return run_call(executor, call, job_of(UFORM_JOB_FOR_SLICES, n, 0, (void *)slice, context, n),
                    "uform_executor_for_slices");
}

uform_status_t uform__test_for_n_dynamic_from(uform_executor_t *executor, size_t first, size_t n, uform_task_t task,
                                              void *context) {
    if (first > n) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "first %zu is past n %zu", first, n);
    return run_call(executor, NULL, job_of(UFORM_JOB_FOR_N_DYNAMIC, n, first, (void *)task, context, n - first),
                    "uform__test_for_n_dynamic_from");
}
