/* The fork-join core. The forking thread (a synchronous caller, or the leader for deferred
 * calls) publishes a job and bumps `generation`; workers waiting on it run their share and
 * count up `finished`; the forking thread runs share 0 and waits for `finished` to reach
 * its target.
 * Every wait spins first (pause, and yield when oversubscribed) and then sleeps on a futex, so
 * a preempted thread never leaves others spinning without end. */
#include <limits.h>
#include <string.h>

#include "executor/executor_internal.h"

static inline size_t split_begin(size_t n, size_t threads, size_t thread) {
    size_t quotient = n / threads, remainder = n % threads;
    return thread * quotient + (thread < remainder ? thread : remainder);
}

static void record_failure(_Atomic uint32_t *failure, uform_status_t status) {
    uint32_t expected = UFORM_STATUS_OK;
    atomic_compare_exchange_strong(failure, &expected, (uint32_t)status);
}

static void report_progress(const uform__job_t *job, uform__progress_state_t *state, size_t finished) {
    size_t done = atomic_fetch_add(job->done, finished) + finished;
    if (!job->progress) return;
    bool last = done == job->total;
    if (!last && done < atomic_load_explicit(&state->reported, memory_order_relaxed) + job->progress_step) return;
    uint32_t unlocked = 0;
    if (!atomic_compare_exchange_strong(&state->lock, &unlocked, 1)) {
        if (!last) return; /* someone is reporting; a later report covers this one */
        /* The final report must happen: wait for the one in progress (it may hold the GIL). */
        for (;;) {
            unlocked = 0;
            if (atomic_compare_exchange_weak(&state->lock, &unlocked, 1)) break;
            uform__thread_yield();
        }
    }
    size_t now = atomic_load(job->done);
    if (now > atomic_load_explicit(&state->reported, memory_order_relaxed)) {
        atomic_store_explicit(&state->reported, now, memory_order_relaxed);
        job->progress(job->progress_context, now, job->total);
    }
    atomic_store(&state->lock, 0);
}

/** Runs task `i`, counting it towards progress; false when the call must stop. */
static inline bool run_task(const uform__job_t *job, size_t i, size_t thread, _Atomic uint32_t *failure,
                            uform__progress_state_t *progress, size_t *finished) {
    if (atomic_load_explicit(failure, memory_order_relaxed) != UFORM_STATUS_OK) return false;
    uform_status_t status = ((uform_task_t)job->function)(job->context, i, thread);
    if (status != UFORM_STATUS_OK) {
        record_failure(failure, status);
        return false;
    }
    if (job->done && ++*finished == job->progress_step) {
        report_progress(job, progress, *finished);
        *finished = 0;
    }
    return true;
}

/** Runs thread `thread`'s share of `job` among `threads`. */
static void run_share(const uform__job_t *job, size_t thread, size_t threads, _Atomic uint32_t *failure,
                      _Atomic size_t *dynamic_next, uform__progress_state_t *progress) {
    size_t finished = 0;
    switch (job->kind) {
    case UFORM_JOB_FOR_N: {
        size_t end = split_begin(job->n, threads, thread + 1);
        for (size_t i = split_begin(job->n, threads, thread); i < end; i++)
            if (!run_task(job, i, thread, failure, progress, &finished)) break;
        break;
    }
    case UFORM_JOB_FOR_N_DYNAMIC: {
        for (;;) {
            size_t i = atomic_fetch_add_explicit(dynamic_next, 1, memory_order_relaxed);
            if (i >= job->n || !run_task(job, i, thread, failure, progress, &finished)) break;
        }
        break;
    }
    case UFORM_JOB_FOR_THREADS: {
        uform_status_t status = ((uform_task_t)job->function)(job->context, thread, thread);
        if (status != UFORM_STATUS_OK)
            record_failure(failure, status);
        else
            finished = 1;
        break;
    }
    case UFORM_JOB_FOR_SLICES: {
        size_t first = split_begin(job->n, threads, thread);
        size_t count = split_begin(job->n, threads, thread + 1) - first;
        if (!count) break;
        uform_status_t status = ((uform_slice_t)job->function)(job->context, first, count, thread);
        if (status != UFORM_STATUS_OK)
            record_failure(failure, status);
        else
            finished = count;
        break;
    }
    }
    if (job->done && finished) report_progress(job, progress, finished);
}

/** A call without tasks forks nobody; its progress still ends with done == total == 0. */
static uform_status_t run_empty(const uform__job_t *job) {
    if (job->progress) job->progress(job->progress_context, 0, 0);
    return UFORM_STATUS_OK;
}

uform_status_t uform__run_inline(const uform__job_t *job, size_t threads) {
    /* The NULL executor is one thread; a job for THREADS on it runs thread 0 of 1. */
    (void)threads;
    if (!job->total) return run_empty(job);
    _Atomic uint32_t failure = UFORM_STATUS_OK;
    _Atomic size_t next = 0;
    uform__progress_state_t progress = {0, 0};
    run_share(job, 0, 1, &failure, &next, &progress);
    return (uform_status_t)atomic_load(&failure);
}

/* ---- waiting ---------------------------------------------------------------------------- */

/* After this long without a change a spinner starts offering its CPU (sched_yield) between
 * bursts: if the thread it waits for shares its CPU (an unpinned caller landing on a pinned
 * worker's core, or oversubscription), that thread runs at once instead of after a time slice.
 * Back-to-back calls land well inside the first, pure-pause burst. */
#define UFORM_PURE_SPIN_NS 4000u
#define UFORM_YIELD_EVERY_NS 1000u

/** Spins on `*word == value` for at most `budget_ns` (unbounded while `mood` is SPINNING);
 *  true if it changed meanwhile, false when the budget ran out. */
static bool spin_while_equal(const _Atomic uint32_t *word, uint32_t value, uint64_t budget_ns, bool oversubscribed,
                             const _Atomic uint32_t *mood_or_null) {
    uint64_t start = 0, next_yield = 0;
    /* Oversubscribed, a spinner always shares its core with a thread that has work: yield on
     * every turn, and read the clock every turn since a yield may last a whole time slice. */
    unsigned clock_every = oversubscribed ? 1 : 16;
    for (unsigned spins = 1;; spins++) {
        if (atomic_load_explicit(word, memory_order_acquire) != value) return true;
        uform__cpu_relax();
        if (oversubscribed) uform__thread_yield();
        if (spins % clock_every) continue;
        uint64_t now = uform__now_ns();
        if (!start) {
            start = now;
            next_yield = now + UFORM_PURE_SPIN_NS;
            continue;
        }
        bool spinning_mood =
            mood_or_null && atomic_load_explicit(mood_or_null, memory_order_relaxed) == UFORM_MOOD_SPINNING;
        if (!spinning_mood && now - start >= budget_ns) return false;
        if (!oversubscribed && now >= next_yield) {
            uform__thread_yield();
            next_yield = uform__now_ns() + UFORM_YIELD_EVERY_NS;
        }
    }
}

static void wait_for_job(uform_executor_t *executor, uint32_t seen) {
    for (;;) {
        if (spin_while_equal(&executor->generation, seen, executor->spin_ns, executor->oversubscribed,
                             &executor->mood))
            return;
        /* Dekker with the forking thread: it bumps `generation` then reads `sleepers`; we bump
         * `sleepers` then re-read `generation`. One of us sees the other. */
        atomic_fetch_add(&executor->sleepers, 1);
        if (atomic_load(&executor->generation) == seen && atomic_load(&executor->mood) == UFORM_MOOD_PARKED)
            uform__futex_wait((const uint32_t *)&executor->generation, seen, -1);
        atomic_fetch_sub(&executor->sleepers, 1);
    }
}

/** Takes a worker's share of `generation` if nobody has; true for whoever got it. Claims only
 *  move forward (wrap-aware): a worker holding a stale generation, having been preempted while
 *  the forking thread stole that share and moved on, must not claim a newer job's share. */
static bool claim_share(uform__worker_t *worker, uint32_t generation) {
    uint32_t claimed = atomic_load_explicit(&worker->claimed, memory_order_relaxed);
    while ((int32_t)(generation - claimed) > 0)
        if (atomic_compare_exchange_weak(&worker->claimed, &claimed, generation)) return true;
    return false;
}

/* A worker that has not even started its share this long after the fork is asleep in the
 * kernel or preempted: the forking thread runs that share itself rather than wait for it. */
#define UFORM_STEAL_AFTER_NS 4000u

static void finish_share(uform_executor_t *executor) {
    atomic_fetch_add(&executor->finished, 1);
    if (atomic_load(&executor->joiner_sleeping)) uform__futex_wake((const uint32_t *)&executor->finished, 1);
}

/** Runs the shares no worker has claimed yet (not for FOR_THREADS: those belong to each thread). */
static void steal_unclaimed(uform_executor_t *executor, uint32_t generation) {
    if (executor->job.kind == UFORM_JOB_FOR_THREADS) return;
    for (size_t i = 1; i < executor->threads; i++) {
        uform__worker_t *worker = &executor->workers[i];
        if (!claim_share(worker, generation)) continue;
        run_share(&executor->job, i, executor->threads, &executor->failure, &executor->dynamic_next,
                  &executor->progress);
        atomic_fetch_add(&executor->finished, 1); /* we are the joiner: no wake needed */
    }
}

static void wait_for_workers(uform_executor_t *executor, uint32_t generation, bool workers_were_asleep) {
    /* Workers that slept take a hypervisor's or scheduler's wake-up (tens of microseconds on a
     * VM); do their shares now instead. */
    if (workers_were_asleep) steal_unclaimed(executor, generation);
    bool stolen = workers_were_asleep;
    for (;;) {
        uint32_t finished = atomic_load_explicit(&executor->finished, memory_order_acquire);
        if ((int32_t)(finished - executor->finished_target) >= 0) return;
        uint64_t budget = stolen ? executor->spin_ns : UFORM_STEAL_AFTER_NS;
        if (spin_while_equal(&executor->finished, finished, budget, executor->oversubscribed, NULL)) continue;
        if (!stolen) {
            steal_unclaimed(executor, generation);
            stolen = true;
            continue;
        }
        atomic_store(&executor->joiner_sleeping, 1);
        finished = atomic_load(&executor->finished);
        if ((int32_t)(finished - executor->finished_target) < 0)
            uform__futex_wait((const uint32_t *)&executor->finished, finished, -1);
        atomic_store(&executor->joiner_sleeping, 0);
    }
}

static bool same_job(const uform__job_t *a, const uform__job_t *b) {
    return a->kind == b->kind && a->n == b->n && a->function == b->function && a->context == b->context &&
           a->progress == b->progress && a->progress_context == b->progress_context && a->done == b->done &&
           a->total == b->total && a->progress_step == b->progress_step;
}

/* ---- the two sides ------------------------------------------------------------------------ */

/* The forking thread is the user's and is never pinned; if the scheduler moved it onto a core
 * where one of our pinned workers lives, the two would take turns on one core while another
 * idles. Swap that worker onto the core the forking thread left. Rare (a migration), one
 * syscall; the check is a read of the rseq CPU id. */
static void follow_forking_thread(uform_executor_t *executor) {
    int current = uform__current_cpu();
    if (current < 0 || current == executor->slot0_cpu) return;
    for (size_t i = 1; i < executor->threads; i++) {
        uform__worker_t *worker = &executor->workers[i];
        if (worker->cpu != current) continue;
        if (executor->slot0_cpu >= 0 && uform__thread_pin(worker->thread, executor->slot0_cpu))
            worker->cpu = executor->slot0_cpu;
        break;
    }
    executor->slot0_cpu = current;
}

uform_status_t uform__fork_join(uform_executor_t *executor, const uform__job_t *job) {
    size_t threads = executor->threads;
    if (threads == 1 || !job->total) return uform__run_inline(job, 1);
    if (!executor->oversubscribed) follow_forking_thread(executor);
    /* Rewrite the job only if it changed: a loop calling the same function leaves the line
     * shared in every worker's cache, saving one transfer per call. */
    if (!same_job(&executor->job, job)) executor->job = *job;
    /* Touch only the lines this job needs: every store here is a line the workers re-fetch. */
    if (atomic_load_explicit(&executor->failure, memory_order_relaxed) != UFORM_STATUS_OK)
        atomic_store_explicit(&executor->failure, UFORM_STATUS_OK, memory_order_relaxed);
    if (job->kind == UFORM_JOB_FOR_N_DYNAMIC) atomic_store_explicit(&executor->dynamic_next, 0, memory_order_relaxed);
    if (job->progress) atomic_store_explicit(&executor->progress.reported, 0, memory_order_relaxed);
    executor->finished_target += (uint32_t)(threads - 1);
    uint32_t generation = atomic_fetch_add(&executor->generation, 1) + 1; /* publishes the job (seq_cst) */
    bool asleep = atomic_load(&executor->sleepers) != 0;
    if (asleep) uform__futex_wake((const uint32_t *)&executor->generation, INT_MAX);
    run_share(&executor->job, 0, threads, &executor->failure, &executor->dynamic_next, &executor->progress);
    wait_for_workers(executor, generation, asleep);
    return (uform_status_t)atomic_load_explicit(&executor->failure, memory_order_relaxed);
}

void (*_Atomic uform__test_before_claim)(size_t worker); /* static storage: starts NULL */

void *uform__worker_main(void *argument) {
    uform__worker_t *worker = argument;
    uform_executor_t *executor = worker->executor;
    uform__current_executor = executor;
    /* Workers start before the executor is returned, so no job precedes generation 0. */
    uint32_t seen = 0;
    for (;;) {
        wait_for_job(executor, seen);
        seen = atomic_load_explicit(&executor->generation, memory_order_acquire);
        if (atomic_load_explicit(&executor->stopping, memory_order_acquire)) break;
        void (*hook)(size_t) = atomic_load_explicit(&uform__test_before_claim, memory_order_relaxed);
        if (hook) hook(worker->index);
        if (!claim_share(worker, seen)) continue; /* the forking thread ran it meanwhile */
        run_share(&executor->job, worker->index, executor->threads, &executor->failure, &executor->dynamic_next,
                  &executor->progress);
        finish_share(executor);
    }
    return NULL;
}
