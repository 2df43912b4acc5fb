/* Internal: the RAM executor's state. One fork-join "job" at a time is published to the
 * workers through a generation counter; everything hot sits on its own 128-byte line (x86
 * prefetches lines in pairs) so the caller's writes never slow a worker's spin. The other
 * concerns have their own headers, included here for the executor's own files. */
#ifndef UFORM_EXECUTOR_INTERNAL_H
#define UFORM_EXECUTOR_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/error.h"
#include "executor/executor_job.h"
#include "executor/executor_layer.h"
#include "executor/executor_membership.h"
#include "executor/executor_placement.h"
#include "executor/executor_test_hooks.h"
#include "platform/platform.h"
#include "uform.h"

#define UFORM_LINE_ 128
#define UFORM_FAILURE_MESSAGE_ 256

/** A dynamic job's block of one slot's tasks (run_dynamic in executor_fork_join.c), filled in by
 *  the forking thread before it publishes the call: whoever runs the slot's share takes them from
 *  the front, the others, once their own ran out, from `back`. `left` counts the tasks nobody
 *  has taken (the slot's first task is never in it). */
typedef struct uform__block_t {
    _Atomic size_t left;
    _Atomic size_t back;
} uform__block_t;

typedef struct uform__worker_t {
    /* The generation whose share was taken, by the worker or by the forking thread stealing it
     * from a worker that is asleep or preempted. */
    alignas(UFORM_LINE_) _Atomic uint64_t claimed;
    /* The generation whose share is finished, stored by whoever ran it. The joiner reads one
     * such word per worker instead of every worker adding to one shared counter. On the same
     * line as `claimed`, measured: on lines of their own the claim no longer waits for the
     * joiner's copy of the line, 10-28% faster for most task shapes, but the prefetched
     * context's fetch then no longer hides behind that wait, and a context the caller built on
     * its stack for the call (the common case) came out 2-23% slower (bench/RESULTS.md). */
    _Atomic uint64_t done;
    /* 1 from the moment the worker may sleep (or a test stalls it) until its next claim, which
     * is then a CAS: only such a worker's share may be stolen. A worker that stays awake claims
     * with a plain store (executor_fork_join.c, "claims"). Written by the worker alone. */
    _Atomic uint32_t stealable;
    struct uform_executor_t *executor;
    size_t index; /* 0 is the deferred-call leader, 1.. are fork-join workers */
    uform__thread_t thread;
    bool started;
    int32_t node;  /* NUMA node its scratch lives on */
    int32_t cpu;   /* the CPU it is pinned to, -1 when pinned to a set or not at all */
    bool reserved; /* `cpu` is counted in the process-wide placement (executor_placement.c) */
    void *scratch; /* grown to the high-water mark */
    size_t scratch_bytes;
    /* On a line of its own: its runner takes from it on every task of a dynamic job, and that
     * must not move the line the joiner watches `done` on. */
    alignas(UFORM_LINE_) uform__block_t block;
} uform__worker_t;

/** A deferred call's state: the leader moves QUEUED to RUNNING when it takes the call, a cancel
 *  moves QUEUED to CANCELLED (and finishes the handle itself); whoever moves it first wins. */
enum { UFORM_DEFERRED_QUEUED = 0, UFORM_DEFERRED_RUNNING, UFORM_DEFERRED_CANCELLED };

struct uform_deferred_t {
    const struct uform_executor_t *executor; /* to refuse waits from its own callbacks */
    uint32_t fork_generation;                /* to refuse waits in a fork()ed child */
    _Atomic uint32_t finished; /* futex word: 0 running or queued, 1 finished */
    _Atomic uint32_t state;    /* UFORM_DEFERRED_* */
    _Atomic uint32_t cancelled; /* uform_deferred_cancel was called: the job's cancel_handle */
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
    /* How long a PARKED joiner spins for a worker still running before it sleeps, learned from
     * its waits before (executor_fork_join.c). Like slot0_cpu, touched only by the thread that
     * forks, one call at a time. */
    uint64_t join_spin_ns;
    struct uform_executor_t *placement_next; /* the live executors, under the placement lock */
    bool placed;                             /* counted in the placement registry */
    /* A layer's operations and state (executor_layer.h); NULL for a plain RAM executor. */
    const uform__executor_ops_t *ops;
    void *layer;
    /* The owner's reference plus one per holder (a device arena, a mesh): the last release
     * closes it. */
    _Atomic size_t references;

    /* ---- the published job, written by the forking thread before `generation` moves ---- */
    alignas(UFORM_LINE_) uform__job_t job;
    /* The generation word's high bits for `job` (uform__generation_high), and the whole word
     * as the last call published it: both written and read only by the thread that forks, one
     * call at a time (stop_threads moves the word only once no call can fork). */
    uint64_t job_high, published_word;
    /* The call's number in its low 48 bits, and how many threads take part in it in the high
     * 16 (uform__generation_participants): one word, so a worker reads the two together and
     * never pairs one call's number with another's count. The number wraps within its 48 bits
     * (after 2^48 calls, years of back-to-back calls), never into the count, and calls are
     * compared as serial numbers (uform__call_newer). The futex sleeps on its low 32 bits
     * (uform__generation_word). */
    alignas(UFORM_LINE_) _Atomic uint64_t generation;
    _Atomic uint32_t sleepers; /* workers inside futex_wait on generation: read right after the bump */
    /* The published job's context, for a worker to prefetch before its claim: an atomic copy,
     * since a worker may read it while the forking thread publishes a newer job. A hint only. */
    _Atomic(void *) context_hint;
    _Atomic bool stopping;
    alignas(UFORM_LINE_) _Atomic uint32_t mood; /* read by spinning workers, written by drains */
    /* The joiner announces here that it sleeps; a finishing worker then bumps `join_word` and
     * wakes it. Read by every worker once per share, written only when the joiner sleeps. */
    alignas(UFORM_LINE_) _Atomic uint32_t joiner_sleeping;
    _Atomic uint32_t join_word;
    alignas(UFORM_LINE_) _Atomic uint32_t failure;   /* first non-OK status; written only on failure */
    char failure_message[UFORM_FAILURE_MESSAGE_];     /* its callback's words; written by the first failure */
    alignas(UFORM_LINE_) uform__progress_state_t progress;
    alignas(UFORM_LINE_) _Atomic uint32_t hold;
    /* The biased hold (executor_bias.c): the thread whose inside slot is in `bias` enters and
     * leaves by that slot alone, without a locked instruction on the way in. */
    _Atomic uintptr_t bias;
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
    uint32_t bias_revocations; /* biases taken from their owner by another thread */
    _Atomic size_t progress_done_sync; /* progress counter of synchronous calls */
};

/** A thread of this executor in a fork()ed child that returns from a callback into uform has
 *  no caller to return to: it ends the child with this exit status (documented in executor.h). */
#define UFORM_FORKED_CHILD_EXIT_ 87

/* ---- the generation word ----
 * A call with fewer shares than threads (2 tasks on 8 threads) forks only the threads with a
 * share: the others see the word move, find their index at or past the count, and wait for the
 * next call without claiming or storing anything, and the joiner waits for the participants
 * alone. The count travels in the word itself: a worker that read it in a separate field after
 * the word could read the next call's count (a call that does not wait for a thread does not
 * wait for it to read either), and a thread that took part by mistake would claim a share nobody
 * waits for and run it against the next call's job. */
#define UFORM_GENERATION_CALL_BITS_ 48
#define UFORM_GENERATION_CALL_MASK_ ((UINT64_C(1) << UFORM_GENERATION_CALL_BITS_) - 1)

/** The call's number in a generation word: what claims and `done` words hold. */
static inline uint64_t uform__generation_call(uint64_t word) { return word & UFORM_GENERATION_CALL_MASK_; }

/** Whether call number `a` comes after `b`, across the 48-bit wrap: serial-number arithmetic,
 *  right for any two calls less than 2^47 apart (a worker preempted for 2^47 calls, centuries
 *  at a call per nanosecond, is the only way to be further behind). */
static inline bool uform__call_newer(uint64_t a, uint64_t b) {
    return (int64_t)((a - b) << (64 - UFORM_GENERATION_CALL_BITS_)) > 0;
}

/** How many threads (slot 0 and workers 1..count-1) take part in the call of a generation word. */
static inline size_t uform__generation_participants(uint64_t word, size_t threads) {
    size_t count = (size_t)(word >> UFORM_GENERATION_CALL_BITS_);
    return count ? count : threads; /* 0: every thread (and the word before any call) */
}

/** The high bits of the word for a call that gives `participants` of `threads` threads work. */
static inline uint64_t uform__generation_high(size_t participants, size_t threads) {
    if (participants >= threads || participants >> (64 - UFORM_GENERATION_CALL_BITS_)) return 0;
    return (uint64_t)participants << UFORM_GENERATION_CALL_BITS_;
}

/** The low 32 bits of the generation, the futex word workers sleep on. */
static inline const uint32_t *uform__generation_word(const uform_executor_t *executor) {
    const uint32_t *halves = (const uint32_t *)&executor->generation;
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? &halves[0] : &halves[1];
}

/* After the struct: the synchronous call's inline hold (and the biased owner's way in and out)
 * read it. */
#include "executor/executor_hold.h"

/** Runs a call's job on thread 0: a BODY job's steps, or a fork-join. Both synchronous and
 *  deferred calls come through here, so a layer's sticky fault is answered here. Inline: every
 *  call takes it, and it is a few tests in front of the fork-join. */
static inline uform_status_t uform__run_job(uform_executor_t *executor, const uform__job_t *job) {
    if (uform__job_cancelled(job)) return uform__fail(UFORM_STATUS_INTERRUPTED, "cancelled before it started");
    if (executor->ops) {
        uform_status_t status = executor->ops->fault(executor, "uform_executor");
        if (status != UFORM_STATUS_OK) return status;
    }
    if (job->kind == UFORM_JOB_BODY) return job->body(executor, job);
    /* One thread runs it all: straight to the tasks, past the fork-join's frame. */
    if (uform__job_on_caller_alone(job, executor->threads))
        return uform__run_plain_on_caller(executor->fork_generation, job->first, job->n, (uform_task_t)job->function,
                                          job->context);
    return uform__fork_join(executor, job);
}

#endif
