/* Internal: one call as the threads see it (a job), and the functions that run jobs. */
#ifndef UFORM_EXECUTOR_JOB_H
#define UFORM_EXECUTOR_JOB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uform.h"

typedef enum uform__job_kind_t {
    UFORM_JOB_FOR_N = 1,
    UFORM_JOB_FOR_N_DYNAMIC,
    UFORM_JOB_FOR_THREADS,
    UFORM_JOB_FOR_SLICES,
    /* A call that is a sequence of steps (a layer's verb: a staged copy, a device function):
     * `body` runs on thread 0 (the caller, or the leader for a deferred call), and may fork-join
     * inner jobs itself. */
    UFORM_JOB_BODY
} uform__job_kind_t;

struct uform__job_t;
typedef uform_status_t (*uform__job_body_t)(struct uform_executor_t *executor, const struct uform__job_t *job);

/** One call as the threads see it: what to run and where to count progress. */
typedef struct uform__job_t {
    /* What the threads read on every call comes first, within one 128-byte line (x86 fetches
     * lines in pairs): a job that spills past it costs every call a second line. */
    uform__job_kind_t kind;
    size_t n;
    size_t first; /* dynamic jobs run tasks [first, n): 0 for the public verbs, a seam for tests */
    void *function; /* uform_task_t or uform_slice_t, by kind */
    void *context;
    uform_progress_t progress;
    _Atomic size_t *done; /* NULL when nobody watches progress */
    size_t total;
    size_t progress_step; /* publish `done` every this many tasks */
    /* The static split, computed once per call by the forking thread so no share divides. */
    size_t quotient, remainder;
    /* Cancelled once either is nonzero: the caller's flag (uform_call_t.cancel) and, for a
     * deferred call, its handle's (uform_deferred_cancel). NULL: not watched. */
    const volatile int *cancel;
    const _Atomic uint32_t *cancel_handle;
    /* ---- read only by the thread running the call, or by progress reports ---- */
    void *progress_context;
    /* BODY jobs: the steps, and their arguments (`arguments_bytes` of them, copied with the job
     * into a deferred call so they outlive the submitting frame). */
    uform__job_body_t body;
    void *arguments;
    size_t arguments_bytes;
} uform__job_t;

_Static_assert(offsetof(uform__job_t, progress_context) <= 128, "the job's per-call fields fit one 128-byte line");

/** Whether the job was cancelled: read where a thread takes work (a task, a share, a chunk).
 *  The caller's flag is a plain int it may set from a signal handler: read it atomically. */
static inline bool uform__job_cancelled(const uform__job_t *job) {
    if (job->cancel && __atomic_load_n(job->cancel, __ATOMIC_RELAXED)) return true;
    return job->cancel_handle && atomic_load_explicit(job->cancel_handle, memory_order_relaxed);
}

/** Whether a job's tasks need nothing between them but the failure and fork checks: no
 *  progress to count and no cancel flag to read (the common call, `call` NULL). */
static inline bool uform__job_plain(const uform__job_t *job) {
    return !job->done && !job->cancel && !job->cancel_handle;
}

/** Whether the job is tasks the calling thread may run alone, front to back, with only
 *  uform__job_plain's checks: FOR_N or FOR_N_DYNAMIC, plain, and on one thread (a 1-thread
 *  executor, or a single task, which forks nobody). Static and dynamic give one thread the
 *  same order. */
static inline bool uform__job_on_caller_alone(const uform__job_t *job, size_t threads) {
    return (job->kind == UFORM_JOB_FOR_N || job->kind == UFORM_JOB_FOR_N_DYNAMIC) &&
           (threads == 1 || job->n - job->first == 1) && uform__job_plain(job);
}

/** Whether the job needs the executor's workers (a fork-join): more than one thread, a task at
 *  least, and not a single task (only share 0 would have work). The rest run on the calling
 *  thread alone: nobody to fork, and above all no futex wake, which costs more than such a call
 *  (tens of microseconds on a VM). */
static inline bool uform__job_forks(const uform__job_t *job, size_t threads) {
    bool single_task = job->kind != UFORM_JOB_FOR_THREADS && job->n - job->first == 1;
    return threads > 1 && job->total && !single_task;
}

/** Whether the published job (`published`, the executor's) already is this call's: every field a
 *  caller sets (the split follows from them and the executor's fixed thread count). Inline: a
 *  verb compares the values it holds in registers, and builds no copy in memory when they match. */
static inline bool uform__job_same(const uform__job_t *published, const uform__job_t *call) {
    const uform__job_t *a = published, *b = call;
    return a->kind == b->kind && a->n == b->n && a->first == b->first && a->function == b->function &&
           a->context == b->context && a->progress == b->progress && a->progress_context == b->progress_context &&
           a->done == b->done && a->total == b->total && a->progress_step == b->progress_step &&
           a->cancel == b->cancel && a->cancel_handle == b->cancel_handle;
}

/** The size of uform_call_t before `cancel`: callers built against it pass this struct_size. */
#define UFORM_CALL_SIZE_BEFORE_CANCEL_ offsetof(uform_call_t, cancel)

/** The call's cancel flag, or NULL (no call, or the layout without the field). */
static inline const volatile int *uform__call_cancel(const uform_call_t *call) {
    return call && call->struct_size >= sizeof(uform_call_t) ? call->cancel : NULL;
}

/** Clears the call's deferred output first, so it is NULL on every failure (executor.h). */
static inline void uform__call_clear_deferred(const uform_call_t *call) {
    if (call && call->struct_size >= UFORM_CALL_SIZE_BEFORE_CANCEL_ && call->deferred) *call->deferred = NULL;
}

/** Serialises progress reports so they arrive one at a time and never go backwards. */
typedef struct uform__progress_state_t {
    _Atomic uint32_t lock;
    _Atomic size_t reported; /* written under `lock`, read without it to skip needless tries */
} uform__progress_state_t;

/* executor_fork_join.c: runs a job on every thread, the forking thread as thread 0 */
/** FORKED if a callback fork()ed and this is the child: the call stops at once. */
uform_status_t uform__fork_join(uform_executor_t *executor, const uform__job_t *job);
/** The fork-join of the job the executor has published already (`executor->job`), which the
 *  calling thread holds the executor for and uform__job_forks accepted: the generation's bump,
 *  share 0, the join. */
uform_status_t uform__fork_join_published(uform_executor_t *executor);
/* uform__run_job, inline, is in executor_internal.h (it reads the executor's struct). */
/** Runs a job entirely on the calling thread as thread 0 of 1 (the NULL executor, one thread, a
 *  single task). With an executor, a callback's fork() stops it in the child with FORKED. */
uform_status_t uform__run_inline(const uform_executor_t *executor_or_null, const uform__job_t *job);
/** A job uform__job_on_caller_alone accepts, run on the calling thread: tasks [first, end) in
 *  order as thread 0, stopping at the first failure (its status, with the task's message) or
 *  when a task fork()s (FORKED in the child: `fork_generation` is the executor's). run_inline's
 *  rules without its share, progress and message state: the 1-thread call's path
 *  (bench/RESULTS.md). The job's fields come by value, so a verb need not build it in memory. */
uform_status_t uform__run_plain_on_caller(uint32_t fork_generation, size_t first, size_t end, uform_task_t task,
                                          void *context);
void *uform__worker_main(void *argument);
/* A PARKED joiner's spin before it sleeps may grow up to this many times the plain budget
 * (UFORM_SPIN_MICROSECONDS), and at most this much above it, learned from its waits: see
 * uform__learn_spin. The second bound keeps a long plain budget (up to 10 s) from becoming a
 * spin of minutes: a few milliseconds cover any wake-up. */
#define UFORM_LEARNED_SPIN_MAX_FACTOR 20u
#define UFORM_LEARNED_SPIN_MAX_EXTRA_NS 2000000u
/** Learns a spin budget (`*budget_ns`, between `plain_ns` and the factor above times it) from
 *  one wait: `spun_ns` spinning, then `slept_ns` asleep if it `slept`. */
void uform__learn_spin(uint64_t *budget_ns, uint64_t plain_ns, uint64_t spun_ns, bool slept, uint64_t slept_ns);
/** Takes a worker's share of `generation` if nobody has; true for whoever got it. */
bool uform__claim_share(_Atomic uint64_t *claimed, uint64_t generation);

/* executor_verbs.c */
/** Every verb's path: validation of `call`, then synchronous (fork-join or body on the caller)
 *  or deferred. `job` is complete but for progress; `caller` names the verb in messages. */
uform_status_t uform__run_call(uform_executor_t *executor, const uform_call_t *call, uform__job_t *job,
                               const char *caller);

/* executor_deferred.c */
uform_status_t uform__deferred_submit(uform_executor_t *executor, const uform__job_t *job, uform_deferred_t **out);
void *uform__leader_main(void *argument);

#endif
