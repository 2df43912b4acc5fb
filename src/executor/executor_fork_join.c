/* The fork-join core. The forking thread (a synchronous caller, or the leader for deferred
 * calls) publishes a job and bumps `generation`; workers waiting on it claim and run their share
 * and store the generation in their own `done` word; the forking thread runs share 0, then
 * reads the workers' `done` words in order until every share is finished.
 *
 * What grows with the thread count is kept off shared lines: each worker finishes by a store to
 * its own line (no shared counter every worker increments), the static split is computed once
 * per call (no division per share), and a dynamic job gives each thread a block of its own to
 * take tasks from, on its own line, with no counter shared by all (see run_dynamic).
 *
 * Every wait spins first (pause, and yield when the cores are shared) and then sleeps on a
 * futex, so a preempted thread never leaves others spinning without end; in the SPINNING mood
 * neither workers nor the joining caller ever sleep. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "executor/executor_internal.h"

/* ---- how one thread runs its share ----------------------------------------------------------- */

typedef struct share_env_t {
    const uform__job_t *job;
    size_t threads;
    _Atomic uint32_t *failure;
    uform__worker_t *workers; /* their dynamic blocks; NULL inline (one thread: no blocks) */
    uform__progress_state_t *progress;
    const uform_executor_t *executor; /* NULL inline: nobody to notice fork() for */
    char *failure_message; /* UFORM_FAILURE_MESSAGE_ bytes: the first failing callback's words */
} share_env_t;

/** Where thread `thread`'s part of the static split of tasks [first, n) begins. */
static inline size_t split_begin(const uform__job_t *job, size_t thread) {
    return job->first + thread * job->quotient + (thread < job->remainder ? thread : job->remainder);
}

static bool record_failure(_Atomic uint32_t *failure, uform_status_t status) {
    uint32_t expected = UFORM_STATUS_OK;
    return atomic_compare_exchange_strong(failure, &expected, (uint32_t)status);
}

/** A callback returned `status`: the call stops with it, and when this is the first failure
 *  and the callback recorded a message on this thread (its error serial moved since `serial`),
 *  that message is the call's (a refused re-entry keeps its reason). */
static void callback_failed(const share_env_t *env, uform_status_t status, unsigned serial) {
    if (record_failure(env->failure, status) && uform__error_serial() != serial)
        snprintf(env->failure_message, UFORM_FAILURE_MESSAGE_, "%s", uform_last_error());
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

/** Around callbacks: did one fork()? Then this is the child, whose other threads are gone, and
 *  the call stops (FORKED recorded). */
static inline bool check_not_forked(const share_env_t *env) {
    if (env->executor && uform__forked_since(env->executor->fork_generation)) {
        record_failure(env->failure, UFORM_STATUS_FORKED);
        return false;
    }
    return true;
}

/** False once the call has failed or was cancelled (then INTERRUPTED is recorded). */
static inline bool not_stopped(const share_env_t *env) {
    if (atomic_load_explicit(env->failure, memory_order_relaxed) != UFORM_STATUS_OK) return false;
    if (uform__job_cancelled(env->job)) {
        record_failure(env->failure, UFORM_STATUS_INTERRUPTED);
        return false;
    }
    return true;
}

/** Before a share's first callback: false only in a fork()ed child (then FORKED is recorded;
 *  it may come after another call's callback forked on this thread), or once the call is
 *  FORKED. Neither a cancel nor another share's failure stops it: the call has begun, and a
 *  task of another slot may be waiting for this one (executor.h: a barrier between slots ends),
 *  so every share's first task starts; a share's later tasks stop (not_stopped). */
static inline bool may_begin(const share_env_t *env) {
    if (atomic_load_explicit(env->failure, memory_order_relaxed) == UFORM_STATUS_FORKED) return false;
    return check_not_forked(env);
}

/** Runs task `i`, counting it towards progress; false when the call must stop. Only code of
 *  the user's runs between two tasks of a share (the task, a progress report), so one fork
 *  check after each of them covers the next task too. A share's first task (`first`) is
 *  checked by may_begin instead. */
static inline bool run_task(const share_env_t *env, size_t i, size_t thread, size_t *finished, unsigned serial,
                            bool first) {
    const uform__job_t *job = env->job;
    if (!(first ? may_begin(env) : not_stopped(env))) return false;
    uform_status_t status = ((uform_task_t)job->function)(job->context, i, thread);
    if (!check_not_forked(env)) return false;
    if (status != UFORM_STATUS_OK) {
        callback_failed(env, status, serial);
        return false;
    }
    if (job->done && ++*finished == job->progress_step) {
        report_progress(job, env->progress, *finished);
        *finished = 0;
        if (!check_not_forked(env)) return false; /* the progress callback forked */
    }
    return true;
}

/** Takes one of a block's `left` tasks; false when none is left. A bounded CAS, not a
 *  fetch_sub: `left` never goes below 0, so a thief that finds it empty leaves it as it is. */
static inline bool take_one(_Atomic size_t *left) {
    size_t tasks = atomic_load_explicit(left, memory_order_relaxed);
    while (tasks)
        if (atomic_compare_exchange_weak_explicit(left, &tasks, tasks - 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    return false;
}

/** A dynamic job's share: thread `thread` runs its part of the static split front to back,
 *  then takes the tasks nobody has started yet from the back of the other threads' parts, one
 *  at a time (pthreadpool's scheme). Each part is a block on its runner's line: its runner's
 *  claims stay in its own cache, and a line moves between threads only when one has run out
 *  and takes another's tasks. A counter shared by all moved its line on every claim: at 16
 *  tasks on 2 threads of the AMD guest, the dynamic split cost 2.5x the static one that way
 *  (bench/RESULTS.md). Every task runs exactly once, for any n up to SIZE_MAX: a task is
 *  taken by decrementing `left` above 0, the runner's from the front and the others' from
 *  `back`, so the two ends never meet and nothing counts past n. The forking thread fills in
 *  the block of every thread of the call before it publishes the call (fill_blocks), so no
 *  thread can find a block not yet filled in and leave while its tasks wait: a late runner's
 *  tasks are taken by the others, and a task may wait for any other task of the call, as with
 *  a shared counter. A call with fewer tasks than threads fills in and steps over its
 *  participants' blocks alone (env->threads): the others may still hold tasks a failed call
 *  left, which nobody takes. */
static void run_dynamic(const share_env_t *env, size_t thread, size_t *finished, unsigned serial) {
    const uform__job_t *job = env->job;
    size_t begin = split_begin(job, thread), end = split_begin(job, thread + 1);
    if (!env->workers) { /* inline: one thread, nobody to take from or give to */
        for (size_t i = begin; i < end; i++)
            if (!run_task(env, i, thread, finished, serial, i == begin)) return;
        return;
    }
    if (begin < end) {
        /* The first task is not in the block: nobody else may take it, so every slot with
         * tasks runs one (executor.h: a barrier between tasks of different slots ends). */
        _Atomic size_t *left = &env->workers[thread].block.left;
        if (!run_task(env, begin, thread, finished, serial, true)) return;
        for (size_t i = begin + 1; take_one(left); i++)
            if (!run_task(env, i, thread, finished, serial, false)) return;
    }
    for (size_t step = 1; step < env->threads; step++) {
        size_t other = thread + step < env->threads ? thread + step : thread + step - env->threads;
        uform__block_t *block = &env->workers[other].block;
        while (take_one(&block->left)) {
            size_t i = atomic_fetch_sub_explicit(&block->back, 1, memory_order_relaxed) - 1;
            if (!run_task(env, i, thread, finished, serial, false)) return;
        }
    }
}

/** Fills in the blocks of the call's `participants` threads for a dynamic job, before the call
 *  is published: the stores are released by the generation's bump and acquired with it, so every
 *  thread of the call sees them. No thread of the call before is still taking from them: that
 *  call ended only once every share, stealing included, was done. The other threads' blocks are
 *  left as they are: no thread of this call looks at them (run_dynamic steps over the call's
 *  threads alone). */
static void fill_blocks(uform_executor_t *executor, const uform__job_t *job, size_t participants) {
    for (size_t t = 0; t < participants; t++) {
        size_t begin = split_begin(job, t), end = split_begin(job, t + 1);
        uform__block_t *block = &executor->workers[t].block;
        atomic_store_explicit(&block->left, end > begin ? end - begin - 1 : 0, memory_order_relaxed);
        atomic_store_explicit(&block->back, end, memory_order_relaxed);
    }
}

/** Tasks [begin, end) of a plain job (plain_tasks), begin < end: run_task's checks without the
 *  progress and cancel branches it would test on every task. The same rules: the first task
 *  starts unless the call is FORKED or this is a fork()ed child (may_begin); a later one only
 *  while no task of the call has failed; a fork() in a task stops the share at once. Also the
 *  NULL executor's loop (uform__run_inline); a 1-thread executor's call takes
 *  uform__run_plain_on_caller instead, the same rules without the share's state. Inline into
 *  run_share: one frame for a share, not two (a 1-task share of a 2-thread call, 94 to 83
 *  instructions, callgrind). */
static inline __attribute__((always_inline)) void run_plain_tasks(const share_env_t *env, size_t begin, size_t end,
                                                                  size_t thread, unsigned serial) {
    uform_task_t task = (uform_task_t)env->job->function;
    void *context = env->job->context;
    if (!may_begin(env)) return;
    for (size_t i = begin;;) {
        uform_status_t status = task(context, i, thread);
        if (!check_not_forked(env)) return;
        if (status != UFORM_STATUS_OK) {
            callback_failed(env, status, serial);
            return;
        }
        if (++i == end) return;
        if (atomic_load_explicit(env->failure, memory_order_relaxed) != UFORM_STATUS_OK) return;
    }
}

/** Runs thread `thread`'s share of the job. */
static void run_share(const share_env_t *env, size_t thread) {
    const uform__job_t *job = env->job;
    size_t finished = 0;
    unsigned serial = uform__error_serial();
    switch (job->kind) {
    case UFORM_JOB_FOR_N: {
        size_t end = split_begin(job, thread + 1);
        if (uform__job_plain(job)) {
            size_t begin = split_begin(job, thread);
            if (begin < end) run_plain_tasks(env, begin, end, thread, serial);
            return; /* no progress to report */
        }
        for (size_t begin = split_begin(job, thread), i = begin; i < end; i++)
            if (!run_task(env, i, thread, &finished, serial, i == begin)) break;
        break;
    }
    case UFORM_JOB_FOR_N_DYNAMIC: run_dynamic(env, thread, &finished, serial); break;
    case UFORM_JOB_BODY: break; /* never forked: uform__run_job runs its body on thread 0 */
    case UFORM_JOB_FOR_THREADS: {
        if (!may_begin(env)) break; /* a stolen or late share of a failed or forked call */
        uform_status_t status = ((uform_task_t)job->function)(job->context, thread, thread);
        if (!check_not_forked(env)) break;
        if (status != UFORM_STATUS_OK)
            callback_failed(env, status, serial);
        else
            finished = 1;
        break;
    }
    case UFORM_JOB_FOR_SLICES: {
        size_t first = split_begin(job, thread);
        size_t count = split_begin(job, thread + 1) - first;
        if (!count || !may_begin(env)) break;
        uform_status_t status = ((uform_slice_t)job->function)(job->context, first, count, thread);
        if (!check_not_forked(env)) break;
        if (status != UFORM_STATUS_OK)
            callback_failed(env, status, serial);
        else
            finished = count;
        break;
    }
    }
    /* Not in a fork()ed child: there the call stops at once, with no further callback. */
    if (job->done && finished && check_not_forked(env)) report_progress(job, env->progress, finished);
}

/** Fills in what the shares need and every caller of run_share computes the same way. */
static void prepare_job(uform__job_t *job, size_t threads) {
    job->quotient = (job->n - job->first) / threads;
    job->remainder = (job->n - job->first) % threads;
}

/** A call's end once every share is done: a cancelled call's last progress report says what
 *  ran (reports are spaced, so the last may be behind); a failed call leaves the first failing
 *  callback's message, or none, as the thread's last error. */
static uform_status_t finish_call(const uform__job_t *job, uform__progress_state_t *state, uform_status_t status,
                                  const char *message) {
    if (status == UFORM_STATUS_OK || status == UFORM_STATUS_FORKED) return status;
    if (status == UFORM_STATUS_INTERRUPTED && job->progress && job->done) {
        size_t now = atomic_load(job->done);
        if (now > atomic_load_explicit(&state->reported, memory_order_relaxed)) {
            atomic_store_explicit(&state->reported, now, memory_order_relaxed);
            job->progress(job->progress_context, now, job->total);
        }
    }
    return uform__fail(status, "%s", message);
}

/** A call without tasks forks nobody; its progress still ends with done == total == 0. */
static uform_status_t run_empty(const uform__job_t *job) {
    if (job->progress) job->progress(job->progress_context, 0, 0);
    return UFORM_STATUS_OK;
}

uform_status_t uform__run_inline(const uform_executor_t *executor_or_null, const uform__job_t *job_in) {
    /* The NULL executor is one thread; a job for THREADS on it runs thread 0 of 1. */
    if (!job_in->total) return run_empty(job_in);
    _Atomic uint32_t failure = UFORM_STATUS_OK;
    uform__progress_state_t progress = {0, 0};
    char message[UFORM_FAILURE_MESSAGE_];
    message[0] = 0; /* not the whole buffer: this runs on every inline call */
    if ((job_in->kind == UFORM_JOB_FOR_N || job_in->kind == UFORM_JOB_FOR_N_DYNAMIC) && uform__job_plain(job_in) &&
        job_in->first < job_in->n) {
        /* Tasks [first, n) in order, as the split of one thread would give them: no copy of the
         * job to hold a split, no share dispatch. */
        share_env_t env = {job_in, 1, &failure, NULL, &progress, executor_or_null, message};
        run_plain_tasks(&env, job_in->first, job_in->n, 0, uform__error_serial());
        uform_status_t status = (uform_status_t)atomic_load_explicit(&failure, memory_order_relaxed);
        return status == UFORM_STATUS_OK ? status : finish_call(job_in, &progress, status, message);
    }
    uform__job_t job = *job_in;
    prepare_job(&job, 1);
    /* With an executor, a callback that fork()s stops the call in the child (FORKED), as on the
     * forked path: a 1-thread executor and single-task calls come here. */
    share_env_t env = {&job, 1, &failure, NULL, &progress, executor_or_null, message};
    run_share(&env, 0);
    return finish_call(&job, &progress, (uform_status_t)atomic_load(&failure), message);
}

/** A task of a call on the calling thread failed with `status`: the call's failure, in the
 *  words the task left on this thread if it left any (its error serial moved since `serial`),
 *  as run_inline's finish_call gives it. Out of line: the loop below stays short. */
static __attribute__((noinline, cold)) uform_status_t plain_on_caller_failed(uform_status_t status, unsigned serial) {
    char message[UFORM_FAILURE_MESSAGE_];
    message[0] = 0;
    if (uform__error_serial() != serial) snprintf(message, sizeof message, "%s", uform_last_error());
    return uform__fail(status, "%s", message);
}

uform_status_t uform__run_plain_on_caller(uint32_t fork_generation, size_t i, size_t end, uform_task_t task,
                                          void *context) {
    if (i >= end) return UFORM_STATUS_OK; /* no task: nothing to check either, as run_empty */
    /* may_begin's check: a fork()ed child (an earlier callback of this thread forked) runs no task. */
    if (uform__forked_since(fork_generation)) return UFORM_STATUS_FORKED;
    unsigned serial = uform__error_serial();
    do {
        uform_status_t status = task(context, i, 0);
        if (uform__forked_since(fork_generation)) return UFORM_STATUS_FORKED; /* the task forked */
        if (status != UFORM_STATUS_OK) return plain_on_caller_failed(status, serial);
    } while (++i < end);
    return UFORM_STATUS_OK;
}

/* ---- waiting ---------------------------------------------------------------------------- */

/* After this long without a change a spinner starts offering its CPU (sched_yield) between
 * bursts: if the thread it waits for shares its CPU (an unpinned caller landing on a pinned
 * worker's core), that thread runs soon instead of after a time slice. Back-to-back calls land
 * well inside the first, pure-pause burst. The gap between yields doubles while nothing
 * happens, up to 64 us: a yield is a syscall (about a microsecond on a VM) during which the
 * spinner cannot see the next call, so a long-idle SPINNING worker yields rarely. */
#define UFORM_PURE_SPIN_NS 4000u
#define UFORM_YIELD_FIRST_GAP_NS 1000u
#define UFORM_YIELD_MAX_GAP_NS 64000u

/** How a spinner treats its core: alone on it; sharing it with another executor's threads
 *  (yield every microsecond once the pure spin is over, never stretching the gap: the threads
 *  sharing a core are each other's work, and yielding on every turn would starve them of it);
 *  or oversubscribed (more threads than cores in this executor: yield on every turn). */
typedef enum core_use_t { CORE_ALONE, CORE_SHARED, CORE_OVERSUBSCRIBED } core_use_t;

/** Spins until `(*word == value) == until_equal`, for at most `budget_ns` (unbounded while
 *  `mood_or_null` reads SPINNING); true if that happened, false when the budget ran out. Where
 *  `spun_ns_or_null` is given, it receives about how long the spin took (0 for under a
 *  microsecond or so: the clock is read every 16 turns). */
static bool spin_for(const _Atomic uint64_t *word, uint64_t value, bool until_equal, uint64_t budget_ns,
                     core_use_t use, const _Atomic uint32_t *mood_or_null, uint64_t *spun_ns_or_null) {
    uint64_t start = 0, next_yield = 0, gap = UFORM_YIELD_FIRST_GAP_NS;
    /* Oversubscribed, a spinner always competes with a thread that has work: yield on every
     * turn, and read the clock every turn since a yield may last a whole time slice. */
    bool every_turn = use == CORE_OVERSUBSCRIBED;
    unsigned clock_mask = every_turn ? 0 : 15; /* a mask, not a modulo: no division per turn */
    for (unsigned spins = 1;; spins++) {
        if ((atomic_load_explicit(word, memory_order_acquire) == value) == until_equal) {
            if (spun_ns_or_null) *spun_ns_or_null = start ? uform__now_ns() - start : 0;
            return true;
        }
        uform__cpu_relax();
        if (every_turn) uform__thread_yield();
        if (spins & clock_mask) continue;
        uint64_t now = uform__now_ns();
        if (!start) {
            start = now;
            next_yield = now + UFORM_PURE_SPIN_NS;
            continue;
        }
        bool spinning_mood =
            mood_or_null && atomic_load_explicit(mood_or_null, memory_order_relaxed) == UFORM_MOOD_SPINNING;
        if (!spinning_mood && now - start >= budget_ns) {
            if (spun_ns_or_null) *spun_ns_or_null = now - start;
            return false;
        }
        if (!every_turn && now >= next_yield) {
            uform__thread_yield();
            next_yield = uform__now_ns() + gap;
            if (use == CORE_ALONE && gap < UFORM_YIELD_MAX_GAP_NS) gap *= 2;
        }
    }
}

static inline core_use_t core_use(const uform_executor_t *executor) {
    if (executor->oversubscribed) return CORE_OVERSUBSCRIBED;
    return atomic_load_explicit(&executor->sharing, memory_order_relaxed) ? CORE_SHARED : CORE_ALONE;
}

/* A PARKED joiner waiting for a worker still running its share spins for a budget it learns
 * from its waits before, up to UFORM_LEARNED_SPIN_MAX_FACTOR times UFORM_SPIN_MICROSECONDS (1 ms
 * by default; at most 2 ms more than it), before it sleeps. Waking a sleeping thread costs a scheduler's and on a VM a
 * hypervisor's wake-up, hundreds of microseconds at times on the AMD guest: with the plain 50 us
 * budget the static N-body split at 1024 bodies (1.2 ms steps, whose shares end up to 0.4 ms
 * apart) took 1.27-1.34x as long PARKED as SPINNING (bench/RESULTS.md). The joiner spins only
 * inside a call, so this costs no idle time. Only where the cores are the executor's own: a
 * joiner that shares its core would spin on the time the worker needs. */
/** Learns a spin budget from one wait: `spun_ns` spinning, then `slept_ns` asleep if it
 *  `slept`. A sleep after a wait shorter than the cap would have cost less spun through, so the
 *  next waits spin up to the cap; a longer wait means sleeping is right, and the next ones sleep
 *  after the plain budget. Waits that spinning covered let the budget shrink back slowly (a
 *  64th per wait, never under twice such a wait): waits that stay short keep it. */
void uform__learn_spin(uint64_t *budget_ns, uint64_t plain_ns, uint64_t spun_ns, bool slept, uint64_t slept_ns) {
    uint64_t cap = plain_ns * UFORM_LEARNED_SPIN_MAX_FACTOR, budget = *budget_ns, wanted;
    if (cap > plain_ns + UFORM_LEARNED_SPIN_MAX_EXTRA_NS) cap = plain_ns + UFORM_LEARNED_SPIN_MAX_EXTRA_NS;
    if (slept)
        wanted = spun_ns + slept_ns <= cap ? cap : plain_ns;
    else
        wanted = budget - budget / 64 > 2 * spun_ns ? budget - budget / 64 : 2 * spun_ns;
    *budget_ns = wanted < plain_ns ? plain_ns : wanted > cap ? cap : wanted;
}

void (*_Atomic uform__test_claim_window)(int where); /* static storage: starts NULL */
_Atomic size_t uform__test_shares_stolen;

static inline void widen_claim(int where) {
    void (*hook)(int) = atomic_load_explicit(&uform__test_claim_window, memory_order_relaxed);
    if (hook) hook(where);
}

/* An idle worker waiting for the next call spins the plain budget only: what it spins for may
 * never come, and a longer spin would be paid after every burst of calls (PARKED idle cost).
 * With the joiner's learned spin (join_workers), the N-body static split at 1024 bodies came
 * out 1.00-1.04x its SPINNING time PARKED, learning on the workers' side as well 1.00-1.06x
 * (bench/RESULTS.md): nothing to gain there. */
static void wait_for_job(uform_executor_t *executor, uform__worker_t *worker, uint64_t seen) {
    /* Sharing its core, or oversubscribed, a worker is preempted often: it stays marked, so the
     * forking thread may take its share instead of waiting for its next time slice. */
    if (core_use(executor) != CORE_ALONE) atomic_store_explicit(&worker->stealable, 1, memory_order_relaxed);
    for (;;) {
        if (spin_for(&executor->generation, seen, false, executor->spin_ns, core_use(executor),
                     &executor->mood, NULL))
            return;
        /* From here the forking thread may steal this worker's share (see "claims" below):
         * marked before the count, so a forking thread that sees the count sees the mark. */
        atomic_store_explicit(&worker->stealable, 1, memory_order_relaxed);
        widen_claim(2);
        /* Dekker with the forking thread: it bumps `generation` then reads `sleepers`; we bump
         * `sleepers` then re-read `generation`. One of us sees the other. */
        atomic_fetch_add(&executor->sleepers, 1);
        if (atomic_load(&executor->generation) == seen && atomic_load(&executor->mood) == UFORM_MOOD_PARKED)
            uform__futex_wait(uform__generation_word(executor), (uint32_t)seen, -1);
        atomic_fetch_sub(&executor->sleepers, 1);
    }
}

/* ---- claims ------------------------------------------------------------------------------
 *
 * Each share runs once: its worker and the forking thread (stealing it from a worker that is
 * asleep or stalled) claim it by moving the worker's `claimed` to the generation. A CAS by both
 * sides would make every worker's claim a locked instruction, and on the line the joiner is
 * reading `done` on, so the worker would wait for that line before its task could start: 4-13%
 * of a 2-thread call in the AMD guest's fast latency mode (bench/RESULTS.md, "Issue 20, tenth
 * session"). So only a worker marked `stealable` is ever stolen from, and only its claim is a
 * CAS. It marks itself before it counts itself into `sleepers` (the forking thread that sees
 * the count, and wakes it, sees the mark), and clears the mark after its next successful claim,
 * before it stores that share's `done`, whose release carries the clear to the joiner (and,
 * through the hold, to the next forking thread). A worker that never marked itself since then
 * claims with a plain store: no stealer can be at its word, since a stealer tests the mark
 * first and steals only from a marked worker. A marked worker that loses its CAS stays marked,
 * as the stolen share's `done`, stored by the stealer, carries no clear.
 *
 * So a worker that is awake but late (preempted) on a core of its own is no longer stolen from:
 * the call waits for it, as ForkUnion's and OpenMP's calls wait for theirs. A worker that slept,
 * the case that costs a wake-up of tens of microseconds on a VM, is still stolen from, and so is
 * every worker of an executor that shares its cores or is oversubscribed, where preemption is
 * the rule: those workers stay marked (wait_for_job). */

bool uform__claim_share(_Atomic uint64_t *claimed_word, uint64_t generation) {
    /* Claims only move forward: a worker holding a stale generation, preempted while the
     * forking thread stole that share and moved on, must not claim a newer job's share. Call
     * numbers are compared as 48-bit serial numbers (uform__call_newer): "older" turns into
     * "newer" only 2^47 calls later. */
    uint64_t claimed = atomic_load_explicit(claimed_word, memory_order_relaxed);
    while (uform__call_newer(generation, claimed))
        if (atomic_compare_exchange_weak(claimed_word, &claimed, generation)) return true;
    return false;
}

/* A worker that has not even started its share this long after the fork is asleep in the
 * kernel or preempted: the forking thread runs that share itself rather than wait for it. */
#define UFORM_STEAL_AFTER_NS 4000u

/** Whether the job's shares may be stolen at all (the same test for stealing and for not
 *  sleeping while a stealable share waits). */
static bool job_stealable(const uform__job_t *job) {
    if (job->kind == UFORM_JOB_FOR_THREADS) return false;
    /* Cancelled: each share still runs its first task (may_begin), and the workers, woken
     * already, run theirs side by side; stolen, they would run one after another here. */
    return !uform__job_cancelled(job);
}

/** Runs the shares of workers marked stealable that no one has claimed yet (not for FOR_THREADS:
 *  those belong to each thread). */
static void steal_unclaimed(uform_executor_t *executor, const share_env_t *env, uint64_t generation) {
    if (!job_stealable(env->job)) return;
    for (size_t i = 1; i < env->threads; i++) { /* the call's threads: the others have no share */
        uform__worker_t *worker = &executor->workers[i];
        /* An unmarked worker is awake and claims its share itself, with a plain store. */
        if (!atomic_load_explicit(&worker->stealable, memory_order_acquire)) continue;
        widen_claim(1);
        if (!uform__claim_share(&worker->claimed, generation)) continue;
        atomic_fetch_add_explicit(&uform__test_shares_stolen, 1, memory_order_relaxed);
        /* A share's last progress report may have forked: no other share runs in the child. */
        if (uform__forked_since(executor->fork_generation)) {
            record_failure(env->failure, UFORM_STATUS_FORKED);
            return;
        }
        run_share(env, i); /* skips its callbacks once the call failed */
        atomic_store_explicit(&worker->done, generation, memory_order_release); /* we are the joiner */
    }
}

/** Whether a worker marked stealable has not had its share of `generation` claimed yet. */
static bool stealable_unclaimed(const uform_executor_t *executor, const share_env_t *env, uint64_t generation) {
    if (!job_stealable(env->job)) return false; /* nothing to steal: sleep */
    for (size_t i = 1; i < env->threads; i++) {
        const uform__worker_t *worker = &executor->workers[i];
        if (atomic_load(&worker->stealable) && uform__call_newer(generation, atomic_load(&worker->claimed)))
            return true;
    }
    return false;
}

/** Wakes a joiner asleep on `join_word`, if one is (the Dekker pair of join_workers' sleep:
 *  the caller's write before this read is ordered by a seq_cst fence or an exchange, never a
 *  seq_cst store alone, which qemu-aarch64 did not keep before a later load). */
static void wake_sleeping_joiner(uform_executor_t *executor) {
    if (atomic_load(&executor->joiner_sleeping)) {
        atomic_fetch_add(&executor->join_word, 1);
        uform__futex_wake((const uint32_t *)&executor->join_word, 1);
    }
}

static bool forked(const uform_executor_t *executor) {
    return uform__forked_since(executor->fork_generation);
}


/** Waits until the share of `generation` of every worker taking part is done; FORKED in a
 *  fork()ed child. */
static uform_status_t join_workers(uform_executor_t *executor, const share_env_t *env, uint64_t generation,
                                   bool stolen) {
    size_t threads = env->threads, next = 1; /* the call's threads; shares [1, next) are known done */
    for (;;) {
        while (next < threads &&
               atomic_load_explicit(&executor->workers[next].done, memory_order_acquire) == generation)
            next++;
        if (next == threads) return UFORM_STATUS_OK;
        if (forked(executor)) return UFORM_STATUS_FORKED; /* a callback forked: this is the child */
        core_use_t use = core_use(executor);
        bool learn = stolen && use == CORE_ALONE && executor->spin_ns;
        uint64_t budget = !stolen ? UFORM_STEAL_AFTER_NS : learn ? executor->join_spin_ns : executor->spin_ns;
        uint64_t spun = 0;
        if (spin_for(&executor->workers[next].done, generation, true, budget, use, NULL, learn ? &spun : NULL)) {
            if (learn) uform__learn_spin(&executor->join_spin_ns, executor->spin_ns, spun, false, 0);
            continue;
        }
        if (!stolen) {
            steal_unclaimed(executor, env, generation);
            stolen = true;
            continue;
        }
        /* A worker may have marked itself stealable since (a test's stall): take its share now
         * rather than wait for it. */
        steal_unclaimed(executor, env, generation);
        /* SPINNING: the caller never sleeps either; spin on in bounded bursts, so a fork()ed
         * child still notices it is one. */
        if (atomic_load_explicit(&executor->mood, memory_order_relaxed) == UFORM_MOOD_SPINNING) continue;
        uint32_t word = atomic_load(&executor->join_word);
        /* An exchange, not a store: the Dekker pair needs this write ordered before the load of
         * `done` below. C11 promises that for seq_cst store-then-load too, but an exchange also
         * holds under emulators that do not keep a store-release and a later load-acquire in
         * order (qemu-aarch64 user mode); on x86 it is the same xchg the seq_cst store compiles
         * to. */
        atomic_exchange(&executor->joiner_sleeping, 1);
        /* Not while a worker marked stealable since the steal above still has its share: a
         * test's stalled worker reads `joiner_sleeping` after its mark (Dekker, both sides an
         * exchange) and wakes us, or we see its mark here. A worker that marks itself to sleep
         * needs neither: it is not stalled, and its `done` wakes us. */
        bool pending = atomic_load(&executor->workers[next].done) != generation &&
                       !stealable_unclaimed(executor, env, generation);
        uint64_t asleep_since = pending && learn ? uform__now_ns() : 0;
        if (pending) {
            atomic_fetch_add_explicit(&uform__test_joiner_sleeps, 1, memory_order_relaxed);
            uform__futex_wait((const uint32_t *)&executor->join_word, word, -1);
        }
        atomic_store(&executor->joiner_sleeping, 0);
        if (asleep_since) uform__learn_spin(&executor->join_spin_ns, executor->spin_ns, spun, true, uform__now_ns() - asleep_since);
    }
}

/* ---- the two sides ------------------------------------------------------------------------ */

/** True if `cpu` is one the executor reserved for its threads (slot 0 included). */
static bool reserved_cpu(const uform_executor_t *executor, int32_t cpu) {
    size_t reserved = executor->threads < executor->cpu_count ? executor->threads : executor->cpu_count;
    for (size_t i = 0; i < reserved; i++)
        if (executor->cpus[i] == cpu) return true;
    return false;
}

/* The forking thread is the user's and is never pinned; if the scheduler moved it onto a core
 * where one of our pinned workers lives, the two would take turns on one core while another
 * idles. Swap that worker onto the core the forking thread left, but only if that core is one
 * of ours: a worker never leaves its executor's domains (nor lands on another executor's core)
 * to follow a caller. Rare (a migration), one syscall; the check is a read of the thread's rseq
 * area where glibc registered one, else sched_getcpu (uform__current_cpu_inline). */
int (*_Atomic uform__test_current_cpu)(void);                   /* static storage: starts NULL */
bool (*_Atomic uform__test_pin)(uform__thread_t thread, int32_t cpu); /* likewise */

static int current_cpu(void) {
    int (*hook)(void) = atomic_load_explicit(&uform__test_current_cpu, memory_order_relaxed);
    return hook ? hook() : uform__current_cpu_inline();
}

static bool pin(uform__thread_t thread, int32_t cpu) {
    bool (*hook)(uform__thread_t, int32_t) = atomic_load_explicit(&uform__test_pin, memory_order_relaxed);
    return hook ? hook(thread, cpu) : uform__thread_pin(thread, cpu);
}

static void follow_forking_thread(uform_executor_t *executor) {
    int current = current_cpu();
    if (current < 0 || current == executor->slot0_cpu) return;
    bool left_ours = executor->slot0_cpu >= 0 && reserved_cpu(executor, executor->slot0_cpu);
    for (size_t i = 1; i < executor->threads; i++) {
        uform__worker_t *worker = &executor->workers[i];
        if (worker->cpu != current) continue;
        if (!left_ours) return; /* keep slot 0 on a core of ours: the next migration may fix it */
        if (pin(worker->thread, executor->slot0_cpu)) worker->cpu = executor->slot0_cpu;
        break;
    }
    executor->slot0_cpu = current;
}

/** How many threads have work in a prepared job: every thread for FOR_THREADS; otherwise those
 *  the static split gives a task (all of them unless there are fewer tasks than threads). */
static size_t participants_of(const uform__job_t *job, size_t threads) {
    if (job->kind == UFORM_JOB_FOR_THREADS || job->quotient) return threads;
    return job->remainder; /* n - first < threads: threads [0, n - first) take one task each */
}

uform_status_t uform__fork_join(uform_executor_t *executor, const uform__job_t *job_in) {
    if (!uform__job_forks(job_in, executor->threads)) return uform__run_inline(executor, job_in);
    /* Rewrite the job only if it changed: a loop calling the same function leaves the line
     * shared in every worker's cache, saving one transfer per call (and the split's division). */
    if (!uform__job_same(&executor->job, job_in)) {
        uform__job_t job = *job_in;
        prepare_job(&job, executor->threads);
        executor->job = job;
        executor->job_high = uform__generation_high(participants_of(&job, executor->threads), executor->threads);
        atomic_store_explicit(&executor->context_hint, job.context, memory_order_relaxed);
    }
    return uform__fork_join_published(executor);
}

uform_status_t uform__fork_join_published(uform_executor_t *executor) {
    size_t threads = executor->threads;
    const uform__job_t *job = &executor->job;
    /* Touch only the lines this job needs: every store here is a line the workers re-fetch. */
    if (atomic_load_explicit(&executor->failure, memory_order_relaxed) != UFORM_STATUS_OK) {
        atomic_store_explicit(&executor->failure, UFORM_STATUS_OK, memory_order_relaxed);
        executor->failure_message[0] = 0;
    }
    if (job->progress) atomic_store_explicit(&executor->progress.reported, 0, memory_order_relaxed);
    uint64_t high = executor->job_high;
    if (high) threads = uform__generation_participants(high, threads);
    if (job->kind == UFORM_JOB_FOR_N_DYNAMIC) fill_blocks(executor, job, threads);
    /* One locked exchange publishes the job (seq_cst) with the next call's number and this
     * call's participant count. Only a thread holding the executor forks, and stopping comes
     * after the last fork, so the word is still the one this executor last published: its copy
     * gives the next number without a read of the line every worker watches. */
    uint64_t generation = uform__generation_call(executor->published_word + 1); /* wraps in 48 bits */
    executor->published_word = high | generation;
    atomic_exchange(&executor->generation, executor->published_word);

    share_env_t env = {&executor->job,      threads,  &executor->failure, executor->workers,
                       &executor->progress, executor, executor->failure_message};
    /* Woken at once, before share 0 runs: tasks of one call may wait for each other, so every
     * share with work needs a thread of its own that is awake. */
    bool asleep = atomic_load(&executor->sleepers) != 0;
    if (asleep) uform__futex_wake(uform__generation_word(executor), INT_MAX);
    /* What need not precede the publication comes after it, while the workers' wake-up is on its
     * way: the check that the calling thread did not land on a worker's core (a rare migration,
     * fixed by re-pinning that worker, running or not). */
    if (!executor->oversubscribed) follow_forking_thread(executor);
    run_share(&env, 0);
    /* A callback forked and this is the child: stop here, before running anyone else's share. */
    if (forked(executor)) return UFORM_STATUS_FORKED;
    /* Workers that slept take a hypervisor's or scheduler's wake-up (tens of microseconds on a
     * VM); do the shares they have not claimed yet now instead. */
    if (asleep) steal_unclaimed(executor, &env, generation);
    uform_status_t joined = join_workers(executor, &env, generation, asleep);
    if (joined != UFORM_STATUS_OK) return joined;
    uform_status_t status = (uform_status_t)atomic_load_explicit(&executor->failure, memory_order_relaxed);
    if (status == UFORM_STATUS_OK) return status;
    return finish_call(&executor->job, &executor->progress, status, executor->failure_message);
}

void (*_Atomic uform__test_before_claim)(size_t worker); /* static storage: starts NULL */
_Atomic size_t uform__test_joiner_sleeps;

void *uform__worker_main(void *argument) {
    uform__worker_t *worker = argument;
    uform_executor_t *executor = worker->executor;
    uform__membership_t membership;
    uform__membership_push(&membership, executor);
    share_env_t env = {&executor->job,      executor->threads, &executor->failure, executor->workers,
                       &executor->progress, executor,          executor->failure_message};
    /* Workers start before the executor is returned, so no job precedes generation 0. */
    uint64_t word = 0;
    for (;;) {
        wait_for_job(executor, worker, word);
        word = atomic_load_explicit(&executor->generation, memory_order_acquire);
        if (atomic_load_explicit(&executor->stopping, memory_order_acquire)) break;
        /* Not one of this call's threads (fewer shares than threads): nobody waits for this
         * one, so it touches nothing of the call, not even its own `claimed` or `done`, and
         * waits for the next word. */
        env.threads = uform__generation_participants(word, executor->threads);
        if (worker->index >= env.threads) continue;
        /* The tasks read the call's context first, and the caller has usually just written it
         * (a struct on its stack): ask for its line now, before anything else. A marked worker's
         * claim below is a locked instruction, which orders later loads after it but not a
         * prefetch, so the context's transfer overlaps the claim's instead of following it
         * (3.5-5% of a 2-thread call on the AMD guest); placed after the hooks' loads and the
         * claim's set-up, as it was before the participant count came, a call took 1-5% longer
         * (bench/RESULTS.md, "fifteenth session"). Not for a thread without a share: the
         * caller's next write to its stack would have to take the line back from each. The job
         * itself may be read only once claimed (a newer one may be being published): hence the
         * atomic hint, which `steal_race` checks under TSan (a read of `job.context` here is
         * reported there). */
        __builtin_prefetch(atomic_load_explicit(&executor->context_hint, memory_order_relaxed));
        widen_claim(6); /* the next call may be published, and this word stale, by now */
        uint64_t seen = uform__generation_call(word);
        void (*hook)(size_t) = atomic_load_explicit(&uform__test_before_claim, memory_order_relaxed);
        if (hook) {
            /* A worker a test stalls here stands for one preempted on its way to sleep: it may
             * be stolen from, and claims by CAS. */
            atomic_exchange(&worker->stealable, 1); /* an exchange: see wake_sleeping_joiner */
            wake_sleeping_joiner(executor); /* it may have looked for stealable shares before the mark */
            hook(worker->index);
        }
        if (atomic_load_explicit(&worker->stealable, memory_order_relaxed)) {
            if (!uform__claim_share(&worker->claimed, seen)) {
                /* The forking thread ran it meanwhile. The mark stays: a clear here would reach
                 * no forking thread through a `done` of ours, so the next call's could still see
                 * the mark and steal while this worker, cleared, claimed by plain store. */
                widen_claim(5);
                continue;
            }
            widen_claim(3);
            /* Released by `done` below; kept where the cores are shared (see wait_for_job). */
            if (core_use(executor) == CORE_ALONE) atomic_store_explicit(&worker->stealable, 0, memory_order_relaxed);
        } else {
            /* Nobody steals an unmarked worker's share (see "claims"): no locked instruction. */
            widen_claim(0);
            atomic_store_explicit(&worker->claimed, seen, memory_order_relaxed);
        }
        run_share(&env, worker->index);
        /* A callback fork()ed and this is the child: no caller waits for this thread here, and
         * nothing of the parent's runs. End the child, as documented, instead of idling forever. */
        if (forked(executor)) _exit(UFORM_FORKED_CHILD_EXIT_);
        /* Dekker with a joiner going to sleep: it sets `joiner_sleeping` then re-reads `done`;
         * the seq_cst fence orders this store before the load below. A store and a fence, not an
         * exchange: a locked exchange first waits for the task's own stores to reach their lines
         * and only then asks for `done`'s, where a store joins them in the store buffer and the
         * lines are fetched together (a task that loads and then stores its output, say two
         * fields of a slot, measured 5-7% faster; a one-field bump 0-6%: bench/RESULTS.md).
         * This pattern passed 20 of 20 `steal_race` runs under qemu-aarch64, where a
         * store-release followed by a load-acquire alone did not hold (the joiner's side). */
        atomic_store_explicit(&worker->done, seen, memory_order_release);
        widen_claim(4);
        atomic_thread_fence(memory_order_seq_cst);
        wake_sleeping_joiner(executor);
    }
    uform__membership_pop(&membership);
    return NULL;
}
