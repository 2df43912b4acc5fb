/* Internal: the RAM executor's state. One fork-join "job" at a time is published to the
 * workers through a generation counter; everything hot sits on its own 128-byte line (x86
 * prefetches lines in pairs) so the caller's writes never slow a worker's spin. */
#ifndef UFORM_EXECUTOR_INTERNAL_H
#define UFORM_EXECUTOR_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "platform/platform.h"
#include "uform.h"

#define UFORM_LINE_ 128

typedef enum uform__job_kind_t {
    UFORM_JOB_FOR_N = 1,
    UFORM_JOB_FOR_N_DYNAMIC,
    UFORM_JOB_FOR_THREADS,
    UFORM_JOB_FOR_SLICES
} uform__job_kind_t;

/** One call as the threads see it: what to run and where to count progress. */
typedef struct uform__job_t {
    uform__job_kind_t kind;
    size_t n;
    void *function; /* uform_task_t or uform_slice_t, by kind */
    void *context;
    uform_progress_t progress;
    void *progress_context;
    _Atomic size_t *done; /* NULL when nobody watches progress */
    size_t total;
    size_t progress_step; /* publish `done` every this many tasks */
} uform__job_t;

/** Serialises progress reports so they arrive one at a time and never go backwards. */
typedef struct uform__progress_state_t {
    _Atomic uint32_t lock;
    _Atomic size_t reported; /* written under `lock`, read without it to skip needless tries */
} uform__progress_state_t;

/** Hold bits: who may fork the workers right now (see executor_hold.c). */
enum {
    UFORM_HOLD_SYNC = 1u,    /* a thread's synchronous call runs */
    UFORM_HOLD_CLAIM = 2u,   /* a thread's synchronous call waits for deferred calls to finish */
    UFORM_HOLD_LEADER = 4u,  /* the executor's own leader thread runs a deferred call */
    UFORM_HOLD_WAITERS = 8u, /* someone sleeps on `changed` (see executor_hold.c) */
    UFORM_HOLD_CLOSING = 16u /* uform_executor_free has begun: no new calls */
};

/** What a thread sleeping on `changed` waits for (see executor_hold.c). */
typedef enum uform__wait_t {
    UFORM_WAIT_CLAIM,  /* a synchronous call: deferred calls up to `target` done, leader off */
    UFORM_WAIT_LEADER, /* the leader, for deferred call `target`: no synchronous call in its way */
    UFORM_WAIT_IDLE    /* drain and free: deferred calls up to `target` done, no synchronous call */
} uform__wait_t;

typedef struct uform__worker_t {
    /* The generation whose share was taken, by the worker or by the forking thread stealing it
     * from a worker that is asleep or preempted. On the worker's own line: claiming its share is
     * an uncontended CAS in the common case. */
    alignas(UFORM_LINE_) _Atomic uint32_t claimed;
    struct uform_executor_t *executor;
    size_t index; /* 0 is the deferred-call leader, 1.. are fork-join workers */
    uform__thread_t thread;
    bool started;
    int32_t node;  /* NUMA node its scratch lives on */
    int32_t cpu;   /* the CPU it is pinned to, -1 when pinned to a set or not at all */
    void *scratch; /* grown to the high-water mark */
    size_t scratch_bytes;
} uform__worker_t;

struct uform_deferred_t {
    const struct uform_executor_t *executor; /* to refuse waits from its own callbacks */
    uint32_t fork_generation;                /* to refuse waits in a fork()ed child */
    _Atomic uint32_t finished; /* futex word: 0 running or queued, 1 finished */
    _Atomic uint32_t references; /* the caller's and the executor's */
    uform_status_t status;
    uform__job_t job;
    _Atomic size_t done;
    uint64_t sequence;
};

struct uform_executor_t {
    /* ---- read-only after creation ---- */
    size_t threads;
    uform_cpu_class_t cpu_class;
    uint32_t fork_generation;
    bool oversubscribed; /* more threads than cores: spin loops yield */
    uint64_t spin_ns;
    int32_t *nodes;
    size_t node_count;
    int32_t *cpus; /* round-robin order over the domains' cores */
    size_t cpu_count;
    uform__worker_t *workers; /* `threads` entries */
    size_t deferred_limit;
    int32_t slot0_cpu; /* the CPU left for thread 0 (the forking thread); moves with it */

    /* ---- the published job, written by the forking thread before `generation` moves ---- */
    alignas(UFORM_LINE_) uform__job_t job;
    alignas(UFORM_LINE_) _Atomic uint32_t generation;
    _Atomic uint32_t sleepers; /* workers inside futex_wait on generation: read right after the bump */
    _Atomic bool stopping;
    alignas(UFORM_LINE_) _Atomic uint32_t mood; /* read by spinning workers, written by drains */
    /* Shares finished, ever (wrapping), counted up by workers and by the forking thread when it
     * runs a stolen share. The forking thread compares it with its private `finished_target`
     * instead of resetting a countdown each call, which would cost one more line transfer. */
    alignas(UFORM_LINE_) _Atomic uint32_t finished;
    _Atomic uint32_t joiner_sleeping;
    alignas(UFORM_LINE_) _Atomic size_t dynamic_next; /* touched only by dynamic jobs */
    alignas(UFORM_LINE_) _Atomic uint32_t failure;   /* first non-OK status; written only on failure */
    alignas(UFORM_LINE_) uform__progress_state_t progress;
    alignas(UFORM_LINE_) _Atomic uint32_t hold;
    /* `finished` once the current job is done: the holder's alone, so it lives on the holder's
     * line, away from the read-only fields every worker reads. */
    uint32_t finished_target;
    _Atomic size_t outstanding; /* queued + running deferred calls: read with `hold` on every call */

    /* ---- slow path: deferred calls, drains, contention waits ---- */
    alignas(UFORM_LINE_) pthread_mutex_t lock;
    pthread_cond_t changed; /* hold bits cleared, a deferred call finished */
    pthread_cond_t queued;  /* the leader's wake-up */
    uform_deferred_t **queue; /* ring of deferred_limit entries */
    size_t queue_head, queue_count;
    uint64_t submitted, completed;
    uint64_t claim_target; /* deferred calls a claiming synchronous call waits for */
    size_t waiters;        /* threads asleep on `changed` */
    _Atomic size_t progress_done_sync; /* progress counter of synchronous calls */
};

/* executor_hold.c: the one-call-at-a-time rule */
uform_status_t uform__hold_sync(uform_executor_t *executor);
void uform__release_sync(uform_executor_t *executor);
void uform__hold_leader_locked(uform_executor_t *executor, uint64_t sequence);
/** Sleeps on `changed` (the lock held) until `what` is true for `target`. */
void uform__wait_locked(uform_executor_t *executor, uform__wait_t what, uint64_t target);
void uform__release_leader(uform_executor_t *executor);

/* executor_fork_join.c: runs a job on every thread, the forking thread as thread 0 */
uform_status_t uform__fork_join(uform_executor_t *executor, const uform__job_t *job);
/** Runs a job entirely on the calling thread as thread 0 of 1 (the NULL executor, n tiny). */
uform_status_t uform__run_inline(const uform__job_t *job, size_t threads);
void *uform__worker_main(void *argument);
/** Tests only: called by a worker between seeing a job and claiming its share, to widen the
 *  window in which the forking thread steals it. NULL in production (one predictable branch). */
extern void (*_Atomic uform__test_before_claim)(size_t worker);

/* executor_deferred.c */
uform_status_t uform__deferred_submit(uform_executor_t *executor, const uform__job_t *job, uform_deferred_t **out);
void *uform__leader_main(void *argument);

/* executor_ram.c */
struct uform__topology_t;
/** Checks memory domains, class pin and deferred limit as every executor constructor must. */
uform_status_t uform__validate_ram_arguments(const int32_t *domains, size_t count, uform_cpu_class_t cpu_class,
                                             size_t deferred_limit, const char *verb,
                                             const struct uform__topology_t **topology_out);
/** FORKED if inherited across fork(), INVALID_ARGUMENT if called from inside its own callback. */
uform_status_t uform__executor_usable(const uform_executor_t *executor, const char *verb);
extern _Thread_local const uform_executor_t *uform__current_executor;

#endif
