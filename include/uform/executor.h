/**
 * @file uform/executor.h
 * @brief Executors (host threads or GPU streams), their verbs, deferred calls and arenas.
 *
 * Ownership and threading, in one place:
 * - An executor is created by a `uform_executor_for_*` verb and closed by
 *   uform_executor_free(). The NULL executor owns nothing: every call handed to it runs
 *   synchronously on the calling thread, as thread 0 of 1.
 * - Calls on one executor run one at a time, in submission order. An executor may move
 *   between threads (Send) but must not be used by two threads at once (not Sync): a
 *   synchronous call finding another thread's synchronous call holding the executor answers
 *   UFORM_STATUS_CONTENDED at once, and never blocks. Calls are cheapest from one thread: the
 *   executor is biased to the thread that calls it (no locked instruction to take it), and a
 *   call from another thread first takes the bias back, at the cost of a process-wide barrier
 *   (Linux membarrier, microseconds), at most eight times per executor.
 * - A deferred call returns a handle at once and runs on the executor's own threads; the
 *   handle is polled, waited on and freed by the caller, from any thread.
 * - Callbacks run on the executor's threads (and, for synchronous calls, on the calling
 *   thread as thread 0). A callback calling a verb, drain or free of its own executor, or
 *   waiting for a deferred call that executor has yet to run, gets INVALID_ARGUMENT instead of
 *   a deadlock. That holds through other executors' calls nested on the same OS thread (X's
 *   thread calls Y, and Y's callback, running on that thread, calls X). Longer cycles across
 *   threads (X's callback waits on Y whose other thread waits on X) are the caller's to avoid.
 * - The `thread` a callback is given is a logical slot, not an OS thread: a share whose worker is
 *   asleep (or, where the executor shares its cores, preempted) may run on the forking thread
 *   instead. Per-thread state (scratch
 *   included) is keyed by the slot, and one slot never runs on two threads at once.
 * - Tasks of one call may wait for each other: every share with work is given a thread that is
 *   awake, so a barrier between tasks of different slots ends (slots <= the thread count).
 * - Lifetimes: everything a call is given (context, progress and progress_context) must outlive
 *   it, for a deferred call until it has finished. uform_executor_free may be called while other
 *   threads are inside any function of this executor: each of them is finished or refused, and
 *   free waits for it to leave, so none touches freed memory. Starting a call on another thread
 *   once free has been called is a race the caller must avoid: it is refused with
 *   INVALID_ARGUMENT while free still waits, and is a use after free once free has finished.
 * - Re-entry is recognised on the thread that made the outer call: a callback waiting on its own
 *   executor from another executor's worker thread (X's call runs Y, whose worker waits for X)
 *   is one of the cross-thread cycles above.
 * - fork() inside a callback: in the child, a synchronous call whose calling thread forked
 *   returns FORKED at once (the other threads do not exist there); a worker or the leader that
 *   forked has no caller to return to, and ends the child with exit status 87 once the callback
 *   returns into uform. The parent's call is unaffected.
 * - Cancelling: a call given a cancel flag (uform_call_t.cancel), or a deferred call cancelled
 *   through its handle (uform_deferred_cancel), starts no task once cancelled; tasks already
 *   running finish, and the call answers UFORM_STATUS_INTERRUPTED. The executor stays usable.
 *   Once a call has begun, each slot's first task still starts (every slot of for_threads, every
 *   slice), so tasks waiting for each other across slots (above) end; later tasks do not. A
 *   callback's failure stops a call the same way: each slot's first task starts, later ones
 *   do not, and the call answers the first failure.
 * - Free with deferred calls queued: calls queued before free began still run, in submission
 *   order, and free returns once they have finished (new ones are refused). Cancel them first
 *   (their handles or flags) to have them end without running.
 * - Constructors (uform_executor_for_*, uform_arena_new_in) and verbs given a `deferred`
 *   output set that output to NULL before anything else, so it is NULL on every failure (the
 *   exception uform.h allows to "written only on success").
 * - Many executors in one process: each pins its threads one per core, taking first the cores
 *   no other live executor reserves. When none are left it shares cores, and it and the
 *   executors it shares with yield in their spin loops, as when oversubscribed.
 */
#ifndef UFORM_EXECUTOR_H
#define UFORM_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "uform/export.h"
#include "uform/hardware.h"
#include "uform/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque: host threads or device streams, with their scratch. */
typedef struct uform_executor_t uform_executor_t;
/** Opaque: one deferred call in flight or finished, owned by the caller until freed. */
typedef struct uform_deferred_t uform_deferred_t;
/** Opaque: memory placed where an executor computes, freed whole. */
typedef struct uform_arena_t uform_arena_t;

/** What idle workers do between calls. */
typedef enum uform_mood_t {
    /** Busy-poll (pause/yield) and never sleep, the calling thread joining a call included: the
     *  lowest latency, a core per worker. */
    UFORM_MOOD_SPINNING = 1,
    /**
     * Spin at most UFORM_SPIN_MICROSECONDS (default 50 us) then sleep in the kernel (futex),
     * woken at once by the next call. The caller joining a call, waiting for a worker still
     * at its share, learns from its recent waits to spin up to 20 times as long (at most 2 ms
     * longer) when they were short, and back after a longer one: waking a sleeping caller costs more than that on a
     * busy or virtual machine. Idle workers never spin longer (no idle cost). Not where the
     * executor's cores are shared (more threads than cores, or another executor's threads on
     * them), nor with UFORM_SPIN_MICROSECONDS=0. New executors start PARKED.
     */
    UFORM_MOOD_PARKED = 2
} uform_mood_t;

/** Deferred table size when a constructor is passed 0. */
#define UFORM_DEFERRED_LIMIT_DEFAULT 64
/** Most threads one RAM executor may own. */
#define UFORM_THREADS_MAX 4096

/**
 * Spawns host threads for RAM-resident work.
 * @param memory_domains NUMA node ids whose local cores run the threads; NULL/0 means every
 *        node this process may use. Threads are pinned round-robin over those cores and
 *        named `uform:ram:N`.
 * @param memory_domains_count entries in memory_domains.
 * @param cpu_class the class calls dispatch as; NONE derives the CPU's own. A class this CPU
 *        cannot run is UNSUPPORTED, naming what is missing in uform_last_error().
 * @param threads 0 takes `n - n/8` of the usable cores of those domains; more threads than
 *        cores are allowed (then pinned to the domains' cores as a set, not one-to-one).
 * @param deferred_limit slots in the deferred table; 0 takes UFORM_DEFERRED_LIMIT_DEFAULT.
 * @param executor receives the new executor, owned by the caller (uform_executor_free()).
 * @return OK; INVALID_ARGUMENT (NULL output, NULL domains with a count, duplicate domain,
 *         threads above UFORM_THREADS_MAX, deferred_limit above 65536, unknown class number);
 *         NOT_FOUND (unknown or CPU-less node); UNSUPPORTED (class pin); OUT_OF_MEMORY;
 *         IO_ERROR (a thread could not start: the message names it and gives the C library's
 *         reason; OUT_OF_MEMORY when that reason is memory). Nothing is left running.
 */
UFORM_API uform_status_t uform_executor_for_ram(const int32_t *memory_domains, size_t memory_domains_count,
                                                uform_cpu_class_t cpu_class, size_t threads,
                                                size_t deferred_limit, uform_executor_t **executor);

/**
 * Would create a RAM executor over a borrowed ForkUnion `fu_pool_t`. Every argument is
 * validated first (as uform_executor_for_ram, plus a non-NULL pool); then UNSUPPORTED, until
 * borrowing is designed. `*executor` is set to NULL.
 */
UFORM_API uform_status_t uform_executor_on_pool(const int32_t *memory_domains, size_t memory_domains_count,
                                                uform_cpu_class_t cpu_class, void *pool,
                                                size_t deferred_limit, uform_executor_t **executor);

/**
 * Opens one non-blocking stream per device on its primary context.
 * @param devices positions in uform_gpu_devices(); NULL/0 means all. A duplicate is
 *        INVALID_ARGUMENT; an out-of-range ordinal, or no GPU at all, is NOT_FOUND.
 * @param gpu_class pin, NONE derives the devices' own.
 * @param memory_domains, cpu_class the host threads' RAM pool, as uform_executor_for_ram
 *        (empty: the nodes nearest the devices).
 * @param streams borrowed CUDA streams, one per device; a non-empty list is UNSUPPORTED.
 * @param scratch_limit bytes of scratch per device, 0 unbounded.
 * @param deferred_limit as uform_executor_for_ram.
 * The host threads take `n - n/8` of the cores of those nodes. The executor's verbs, arenas and
 * faults are in uform/vram.h.
 * @return OK; INVALID_ARGUMENT / NOT_FOUND as above; UNSUPPORTED (borrowed streams, a class pin
 *         a device cannot run: the pin, or NVIDIA_AMPERE on any NVIDIA class, runs; a driver
 *         lacking an entry point, named); DEVICE_FAULT or OUT_OF_MEMORY (a device failed to
 *         open, with the driver's error name); IO_ERROR or OUT_OF_MEMORY (a host thread could
 *         not start, as for uform_executor_for_ram); a machine without GPUs answers NOT_FOUND.
 */
UFORM_API uform_status_t uform_executor_for_vram(const int32_t *devices, size_t devices_count,
                                                 uform_gpu_class_t gpu_class, const int32_t *memory_domains,
                                                 size_t memory_domains_count, uform_cpu_class_t cpu_class,
                                                 void *const *streams, size_t streams_count,
                                                 size_t scratch_limit, size_t deferred_limit,
                                                 uform_executor_t **executor);

/**
 * Waits for every call submitted before it (deferred ones included, and any synchronous call
 * another thread is running) and, for a VRAM executor, for every device's stream, then adopts
 * `mood` (for the host threads).
 * @return OK; INVALID_ARGUMENT (bad mood, or called from one of its own callbacks); FORKED
 *         (inherited across fork()); DEVICE_FAULT (the executor's own devices faulted). NULL
 *         executor: OK once the mood is validated. A drained call's own failure is never
 *         reported here.
 */
UFORM_API uform_status_t uform_executor_drain(uform_executor_t *executor, uform_mood_t mood);

/**
 * Drains and closes the executor, joining its threads. NULL does nothing. While device arenas
 * made in it live (uform/vram.h), it only drains and answers OK: the last arena's free closes it. After fork(), an
 * inherited executor's memory is released without touching its (absent) threads.
 * Deferred handles still held stay valid (finished) and must still be freed. From the moment
 * free begins, new calls from other threads are refused with INVALID_ARGUMENT, and free returns
 * only once every other thread inside this executor's functions has left them.
 * @return OK; FORKED for an inherited executor (whose memory is still released);
 *         INVALID_ARGUMENT (nothing freed) from one of its own callbacks or when another
 *         thread is already freeing it.
 */
UFORM_API uform_status_t uform_executor_free(uform_executor_t *executor);

/** Threads a call runs on: 1 for NULL, else the executor's thread count. */
UFORM_API size_t uform_executor_threads(const uform_executor_t *executor);

/** The class its calls dispatch as: the pin, or the derived class (NULL: derived). */
UFORM_API uform_cpu_class_t uform_executor_cpu_class(const uform_executor_t *executor);

/** The current idle mood (NULL: PARKED, since the calling thread never spins). */
UFORM_API uform_mood_t uform_executor_mood(const uform_executor_t *executor);

/**
 * Per-thread scratch for verbs that need working space: at least `bytes`, 64-byte aligned,
 * on the thread's NUMA node, grown to a high-water mark and kept until the executor is freed.
 * Call it from a callback with the `thread` index the callback was given. Growing replaces the
 * thread's buffer: a pointer from an earlier, smaller request is then invalid. With the NULL
 * executor the buffer is the calling thread's, unmapped when that thread ends (through a
 * pthread key: with every key of the process in use, the call answers OUT_OF_MEMORY and maps
 * nothing).
 * @return OK; INVALID_ARGUMENT (NULL output or thread out of range); OUT_OF_MEMORY.
 */
UFORM_API uform_status_t uform_executor_scratch(uform_executor_t *executor, size_t thread, size_t bytes,
                                                void **scratch);

/* ------------------------------------------------------------------------------------------- */
/* Verbs                                                                                        */

/** A task of a parallel-for: return OK, or any other status to stop the call with it. */
typedef uform_status_t (*uform_task_t)(void *context, size_t task, size_t thread);
/** A slice `[first, first + count)` of a parallel-for; return as uform_task_t. */
typedef uform_status_t (*uform_slice_t)(void *context, size_t first, size_t count, size_t thread);
/** Progress of a call: `done` of `total` tasks finished. Runs on the executor's threads. */
typedef void (*uform_progress_t)(void *context, size_t done, size_t total);

/**
 * How one call runs, the C twin of Rust's `On`. Zero-initialise through UFORM_CALL_INIT; a
 * NULL `uform_call_t *` means synchronous, without progress.
 */
typedef struct uform_call_t {
    size_t struct_size; /**< sizeof(uform_call_t), set by UFORM_CALL_INIT */
    /**
     * Non-NULL: run deferred and store the handle here (owned by the caller, freed with
     * uform_deferred_free()). The call's `context` must then stay valid until it finishes.
     */
    uform_deferred_t **deferred;
    /**
     * Called with (progress_context, done, total) as tasks finish, one report at a time,
     * non-decreasing, the last one `done == total` when the call succeeds. The function and its
     * context must stay valid until the call finishes (for a deferred call too).
     */
    uform_progress_t progress;
    void *progress_context;
    /**
     * Non-NULL: the call is cancelled once *cancel becomes nonzero; it may be set from any
     * thread or from a signal handler. Tasks not yet started never start (but for each slot's
     * first task once the call has begun: see "Cancelling" above), running ones finish,
     * and the call returns (or its deferred wait answers) UFORM_STATUS_INTERRUPTED; progress
     * reports what ran. NULL: not cancellable. A caller built against the layout without this
     * field (a smaller struct_size) is read without it. The flag must stay valid until the call
     * finishes. uform reads it with an atomic load; set it with an atomic store too
     * (`__atomic_store_n(flag, 1, __ATOMIC_RELAXED)`, lock-free and async-signal-safe), since a
     * plain store is a data race in C11's terms that ThreadSanitizer reports.
     */
    const volatile int *cancel;
} uform_call_t;

#define UFORM_CALL_INIT {sizeof(uform_call_t), NULL, NULL, NULL, NULL}

/**
 * Runs `task(context, i, thread)` once for every i in [0, n), split statically: thread t of T
 * takes one contiguous range, in thread order, of n/T tasks, the first n%T threads one more.
 * @return OK, the first non-OK status a task returned (later tasks may be skipped),
 *         CONTENDED, INVALID_ARGUMENT (NULL task), FORKED; for a deferred call OK means
 *         "queued" and the call's own status comes from uform_deferred_wait().
 */
UFORM_API uform_status_t uform_executor_for_n(uform_executor_t *executor, const uform_call_t *call, size_t n,
                                              uform_task_t task, void *context);

/** As uform_executor_for_n, for tasks of uneven cost: thread t runs the first task of its part of
 *  the static split, takes the rest of its part one at a time, front to back, then takes the
 *  tasks not yet taken from the back of the other threads' parts, one at a time, until none is
 *  left. So a task may wait for any other task of the call (another slot's first task needs that
 *  slot, which is given an awake thread, as above), and balanced tasks cost about as much as the
 *  static split (no counter shared by every claim). Every task runs exactly once, for any n up
 *  to SIZE_MAX. */
UFORM_API uform_status_t uform_executor_for_n_dynamic(uform_executor_t *executor, const uform_call_t *call,
                                                      size_t n, uform_task_t task, void *context);

/** Runs `task(context, thread, thread)` once on every thread of the executor. */
UFORM_API uform_status_t uform_executor_for_threads(uform_executor_t *executor, const uform_call_t *call,
                                                    uform_task_t task, void *context);

/**
 * Splits [0, n) into one contiguous slice per thread (the static split) and runs
 * `slice(context, first, count, thread)` for each non-empty slice.
 */
UFORM_API uform_status_t uform_executor_for_slices(uform_executor_t *executor, const uform_call_t *call,
                                                   size_t n, uform_slice_t slice, void *context);

/* ------------------------------------------------------------------------------------------- */
/* Deferred calls                                                                               */

/**
 * Whether the call finished. Never blocks.
 * @return OK when finished (whatever its own status), TIMEOUT while it runs or waits,
 *         INVALID_ARGUMENT for NULL.
 */
UFORM_API uform_status_t uform_deferred_poll(const uform_deferred_t *deferred);

/**
 * Waits up to `timeout_seconds` (negative: forever; 0: a poll) for the call to finish.
 * @return the call's own status once finished (the same on every later wait); TIMEOUT if it
 *         has not; INVALID_ARGUMENT for NULL or NaN, or from a callback of the executor that
 *         has yet to run it; FORKED in a fork()ed child for a call that had not finished.
 */
UFORM_API uform_status_t uform_deferred_wait(uform_deferred_t *deferred, double timeout_seconds);

/**
 * Cancels a queued or running deferred call, as its uform_call_t.cancel flag would: tasks not
 * yet started never start, running ones finish, and the call ends UFORM_STATUS_INTERRUPTED
 * (a queued call that never started ends at once, with progress 0). Never blocks; callable
 * from any thread, a callback of the executor included.
 * @return OK (also when the call had already finished: its own status stands);
 *         INVALID_ARGUMENT for NULL; FORKED in a fork()ed child for a call of the parent's.
 */
UFORM_API uform_status_t uform_deferred_cancel(uform_deferred_t *deferred);

/** Tasks finished so far and in total; either output may be NULL. INVALID_ARGUMENT for NULL. */
UFORM_API uform_status_t uform_deferred_progress(const uform_deferred_t *deferred, size_t *done, size_t *total);

/**
 * Releases the handle. An unfinished call is waited for first (its context stays in use until
 * then), except from a callback of its own executor or in a fork()ed child, where the handle
 * is let go without waiting. NULL does nothing.
 */
UFORM_API void uform_deferred_free(uform_deferred_t *deferred);

/* ------------------------------------------------------------------------------------------- */
/* Arenas                                                                                       */

/**
 * Reserves `capacity` bytes where `executor` computes: for a RAM executor (or NULL) host
 * memory bound to its NUMA nodes (interleaved over several), backed by transparent huge pages
 * from 2 MiB up; for a VRAM executor device memory on each of its devices (uform/vram.h:
 * symmetric device arenas). A host arena may outlive its executor; a device arena holds it.
 * @return OK; INVALID_ARGUMENT (NULL output, zero capacity, an executor being freed);
 *         OUT_OF_MEMORY (with the driver's error name for device memory); DEVICE_FAULT; FORKED.
 */
UFORM_API uform_status_t uform_arena_new_in(uform_executor_t *executor, size_t capacity, uform_arena_t **arena);

/**
 * Takes `bytes` from the arena, aligned to `alignment` (a power of two, 0 means 64).
 * @return OK; INVALID_ARGUMENT; OUT_OF_MEMORY when the arena is full (nothing else changes).
 */
UFORM_API uform_status_t uform_arena_allocate(uform_arena_t *arena, size_t bytes, size_t alignment, void **pointer);

/** Bytes taken so far and the capacity; outputs may be NULL. */
UFORM_API uform_status_t uform_arena_usage(const uform_arena_t *arena, size_t *used, size_t *capacity);

/** Frees the arena whole; every pointer it gave becomes invalid. NULL does nothing. */
UFORM_API void uform_arena_free(uform_arena_t *arena);

#ifdef __cplusplus
}
#endif

#endif /* UFORM_EXECUTOR_H */
