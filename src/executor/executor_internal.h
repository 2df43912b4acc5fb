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
    UFORM_JOB_FOR_SLICES,
    /* A call that is a sequence of steps (a staged copy, a device verb): `body` runs on thread 0
     * (the caller, or the leader for a deferred call), and may fork-join inner jobs itself. */
    UFORM_JOB_BODY
} uform__job_kind_t;

struct uform__job_t;
typedef uform_status_t (*uform__job_body_t)(struct uform_executor_t *executor, const struct uform__job_t *job);

/** One call as the threads see it: what to run and where to count progress. */
typedef struct uform__job_t {
    uform__job_kind_t kind;
    size_t n;
    size_t first; /* dynamic jobs run tasks [first, n): 0 for the public verbs, a seam for tests */
    void *function; /* uform_task_t or uform_slice_t, by kind */
    void *context;
    uform_progress_t progress;
    void *progress_context;
    _Atomic size_t *done; /* NULL when nobody watches progress */
    size_t total;
    size_t progress_step; /* publish `done` every this many tasks */
    /* The static split, computed once per call by the forking thread so no share divides. */
    size_t quotient, remainder;
    /* Dynamic jobs whose counter could pass SIZE_MAX (n within 2 x threads of it) claim with a
     * bounded CAS instead of fetch_add, so the counter never wraps onto task 0. */
    bool saturating;
    /* BODY jobs: the steps and their arguments (a device index, pointers, a byte count), copied
     * with the job into a deferred call so they outlive the submitting frame. */
    uform__job_body_t body;
    size_t device;
    void *pointers[2];
} uform__job_t;

/** Serialises progress reports so they arrive one at a time and never go backwards. */
typedef struct uform__progress_state_t {
    _Atomic uint32_t lock;
    _Atomic size_t reported; /* written under `lock`, read without it to skip needless tries */
} uform__progress_state_t;

/** Hold bits: who may fork the workers right now (see executor_hold.c). The bits above
 *  UFORM_HOLD_FLAGS count the threads inside the API on this executor (ENTERED units), so that
 *  free waits for every one of them before releasing the memory they touch. */
enum {
    UFORM_HOLD_SYNC = 1u,    /* a thread's synchronous call runs */
    UFORM_HOLD_CLAIM = 2u,   /* a thread's synchronous call waits for deferred calls to finish */
    UFORM_HOLD_LEADER = 4u,  /* the executor's own leader thread runs a deferred call */
    UFORM_HOLD_WAITERS = 8u, /* someone sleeps on `changed` (see executor_hold.c) */
    UFORM_HOLD_CLOSING = 16u, /* uform_executor_free has begun: no new calls */
    UFORM_HOLD_FLAGS = 0xFFu,
    UFORM_HOLD_ENTERED = 0x100u /* one thread inside the API (counted, not a flag) */
};

/** What a thread sleeping on `changed` waits for (see executor_hold.c). */
typedef enum uform__wait_t {
    UFORM_WAIT_CLAIM,  /* a synchronous call: deferred calls up to `target` done, leader off */
    UFORM_WAIT_LEADER, /* the leader, for deferred call `target`: no synchronous call in its way */
    UFORM_WAIT_IDLE,   /* drain: deferred calls up to `target` done, no synchronous call */
    UFORM_WAIT_CLOSED  /* free: idle, and no other thread left inside the API (ENTERED == 1) */
} uform__wait_t;

typedef struct uform__worker_t {
    /* The generation whose share was taken, by the worker or by the forking thread stealing it
     * from a worker that is asleep or preempted. On the worker's own line: claiming its share is
     * an uncontended CAS in the common case. */
    alignas(UFORM_LINE_) _Atomic uint64_t claimed;
    /* The generation whose share is finished, stored by whoever ran it. The joiner reads one
     * such word per worker instead of every worker adding to one shared counter. */
    _Atomic uint64_t done;
    struct uform_executor_t *executor;
    size_t index; /* 0 is the deferred-call leader, 1.. are fork-join workers */
    uform__thread_t thread;
    bool started;
    int32_t node;  /* NUMA node its scratch lives on */
    int32_t cpu;   /* the CPU it is pinned to, -1 when pinned to a set or not at all */
    bool reserved; /* `cpu` is counted in the process-wide placement (executor_placement.c) */
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
    /* The failure's detail as the thread that ran the call saw it (its last error is its own,
     * thread-local): uform_deferred_wait hands it to the waiting thread. */
    char message[256];
};

struct uform_executor_t {
    /* ---- read-only after creation ---- */
    size_t threads;
    uform_cpu_class_t cpu_class;
    uint32_t fork_generation;
    bool oversubscribed; /* more threads than cores: spin loops yield */
    /* Another live executor pins threads on our cores too (executor_placement.c): spin loops
     * yield as when oversubscribed. Set and cleared as executors come and go. */
    _Atomic bool sharing;
    uint64_t spin_ns;
    int32_t *nodes;
    size_t node_count;
    int32_t *cpus; /* round-robin order over the domains' cores */
    size_t cpu_count;
    uform__worker_t *workers; /* `threads` entries */
    size_t deferred_limit;
    int32_t slot0_cpu; /* the CPU left for thread 0 (the forking thread); moves with it */
    struct uform_executor_t *placement_next; /* the live executors, under the placement lock */
    bool placed;                             /* counted in the placement registry */
    struct uform__vram_t *vram; /* VRAM executors: the devices (src/gpu/); NULL for RAM ones */
    /* The owner's reference plus one per live device arena: the last release closes it. */
    _Atomic size_t references;

    /* ---- the published job, written by the forking thread before `generation` moves ---- */
    alignas(UFORM_LINE_) uform__job_t job;
    /* 64-bit: a worker's stale claim can never compare as newer, however many calls pass. The
     * futex sleeps on its low word (uform__generation_word). */
    alignas(UFORM_LINE_) _Atomic uint64_t generation;
    _Atomic uint32_t sleepers; /* workers inside futex_wait on generation: read right after the bump */
    _Atomic bool stopping;
    alignas(UFORM_LINE_) _Atomic uint32_t mood; /* read by spinning workers, written by drains */
    /* The joiner announces here that it sleeps; a finishing worker then bumps `join_word` and
     * wakes it. Read by every worker once per share, written only when the joiner sleeps. */
    alignas(UFORM_LINE_) _Atomic uint32_t joiner_sleeping;
    _Atomic uint32_t join_word;
    alignas(UFORM_LINE_) _Atomic size_t dynamic_next; /* touched only by dynamic jobs */
    alignas(UFORM_LINE_) _Atomic uint32_t failure;   /* first non-OK status; written only on failure */
    alignas(UFORM_LINE_) uform__progress_state_t progress;
    alignas(UFORM_LINE_) _Atomic uint32_t hold;
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

/* executor_hold.c: the one-call-at-a-time rule, and who is inside the API */
/** Counts the calling thread in (ENTERED) without any check: free waits until it leaves.
 *  Returns the hold word as it was. */
uint32_t uform__enter(const uform_executor_t *executor);
/** Counts it in, then checks: FORKED in a fork()ed child (not left again: the mutex may be held
 *  by a vanished thread); INVALID_ARGUMENT (left again) from one of its own callbacks or once
 *  free has begun. The first touch of the executor by any call. */
uform_status_t uform__enter_call(const uform_executor_t *executor, const char *verb);
/** Counts the calling thread out; wakes a waiting free when it was the last. */
void uform__leave(const uform_executor_t *executor);
/** Enters and takes the executor for a synchronous call; CONTENDED, or INVALID_ARGUMENT
 *  once free has begun (not entered then). */
uform_status_t uform__hold_sync(uform_executor_t *executor, const char *verb);
/** Releases a synchronous call's hold and leaves, in one step. */
void uform__release_sync(uform_executor_t *executor);
void uform__hold_leader_locked(uform_executor_t *executor, uint64_t sequence);
/** Sleeps on `changed` (the lock held) until `what` is true for `target`. */
void uform__wait_locked(uform_executor_t *executor, uform__wait_t what, uint64_t target);
void uform__release_leader(uform_executor_t *executor);

/* executor_membership.c: which executors the calling thread is running callbacks for */
/** One link of a thread's chain: a worker's whole life, or one synchronous call's duration. */
typedef struct uform__membership_t {
    const uform_executor_t *executor;
    struct uform__membership_t *outer;
} uform__membership_t;
void uform__membership_push(uform__membership_t *link, const uform_executor_t *executor);
void uform__membership_pop(uform__membership_t *link);
/** True if the calling thread runs a callback of `executor`, however many other executors'
 *  calls are nested in between (X's worker calls Y, whose callback calls X). */
bool uform__thread_belongs_to(const uform_executor_t *executor);

/* executor_fork_join.c: runs a job on every thread, the forking thread as thread 0 */
/** FORKED if a callback fork()ed and this is the child: the call stops at once. */
uform_status_t uform__fork_join(uform_executor_t *executor, const uform__job_t *job);
/** Runs a call's job on thread 0: a BODY job's steps, or a fork-join. Both synchronous and
 *  deferred calls come through here, so a VRAM executor's sticky fault is answered here. */
uform_status_t uform__run_job(uform_executor_t *executor, const uform__job_t *job);
/** Runs a job entirely on the calling thread as thread 0 of 1 (the NULL executor, n tiny). */
uform_status_t uform__run_inline(const uform__job_t *job, size_t threads);
void *uform__worker_main(void *argument);
/** Takes a worker's share of `generation` if nobody has; true for whoever got it. */
bool uform__claim_share(_Atomic uint64_t *claimed, uint64_t generation);
/** Tests only: called by a worker between seeing a job and claiming its share, to widen the
 *  window in which the forking thread steals it. NULL in production (one predictable branch). */
extern void (*_Atomic uform__test_before_claim)(size_t worker);
/** Tests only: the CPU the forking thread runs on, and the re-pinning of a worker, as the
 *  migration-following code sees them (fixture machines have CPUs this one lacks). */
extern int (*_Atomic uform__test_current_cpu)(void);
extern bool (*_Atomic uform__test_pin)(uform__thread_t thread, int32_t cpu);
/** Tests only: called by a thread leaving the API (before it counts itself out), to widen the
 *  window in which uform_executor_free could release what it is about to touch. */
extern void (*_Atomic uform__test_before_leave)(void);
/** A thread of this executor in a fork()ed child that returns from a callback into uform has
 *  no caller to return to: it ends the child with this exit status (documented in executor.h). */
#define UFORM_FORKED_CHILD_EXIT_ 87
/** The low 32 bits of the generation, the futex word workers sleep on. */
static inline const uint32_t *uform__generation_word(const uform_executor_t *executor) {
    const uint32_t *halves = (const uint32_t *)&executor->generation;
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? &halves[0] : &halves[1];
}

/* executor_verbs.c */
/** Every verb's path: validation of `call`, then synchronous (fork-join or body on the caller)
 *  or deferred. `job` is complete but for progress. */
uform_status_t uform__run_call(uform_executor_t *executor, const uform_call_t *call, uform__job_t *job,
                               const char *verb);
/** Tests only: a dynamic parallel-for over [first, n), to reach counter values near SIZE_MAX. */
uform_status_t uform__test_for_n_dynamic_from(uform_executor_t *executor, size_t first, size_t n, uform_task_t task,
                                              void *context);

/* executor_deferred.c */
uform_status_t uform__deferred_submit(uform_executor_t *executor, const uform__job_t *job, uform_deferred_t **out);
void *uform__leader_main(void *argument);

/* executor_placement.c: process-wide placement of pinned threads */
struct uform__topology_t;
/** Orders `executor->cpus` so the cores no other live executor pins come first, and records
 *  the executor; sets `sharing` on every executor whose cores now overlap. */
void uform__placement_join(uform_executor_t *executor);
/** Forgets the executor's cores; executors left alone on theirs stop `sharing`. */
void uform__placement_leave(uform_executor_t *executor);
/** Tests only: how many live executors reserve `cpu` (slot 0 or a pinned worker). */
size_t uform__placement_users(int32_t cpu);

/* src/gpu/vram_executor.c: what a VRAM executor adds to drain and close */
/** Waits for every device's stream; DEVICE_FAULT when the executor is (or just became) faulted. */
uform_status_t uform__vram_drain(uform_executor_t *executor);
/** Closes the devices: scratch, staging, streams, contexts (the driver is called). */
void uform__vram_close(uform_executor_t *executor);
/** Frees the host-side bookkeeping only (also in a fork()ed child, which never calls the driver). */
void uform__vram_release_memory(uform_executor_t *executor);
/** DEVICE_FAULT with the fault's message when the executor is faulted, else OK. */
uform_status_t uform__vram_fault(const uform_executor_t *executor, const char *verb);

/* executor_ram.c */
/** Creates a RAM executor as uform_executor_for_ram, under another verb's name (VRAM executors'
 *  host decoders). */
uform_status_t uform__executor_create(const int32_t *memory_domains, size_t memory_domains_count,
                                      uform_cpu_class_t cpu_class, size_t threads, size_t deferred_limit,
                                      const char *verb, uform_executor_t **executor_out);
/** Drops one reference (a device arena's, or the owner's once free has drained); the last
 *  closes the executor: threads joined, devices closed, memory released. */
void uform__executor_release(uform_executor_t *executor);
/** Checks memory domains, class pin and deferred limit as every executor constructor must. */
uform_status_t uform__validate_ram_arguments(const int32_t *domains, size_t count, uform_cpu_class_t cpu_class,
                                             size_t deferred_limit, const char *verb,
                                             const struct uform__topology_t **topology_out);

#endif
