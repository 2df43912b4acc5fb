/* Internal, tests only: hooks that widen race windows or stand in for the machine. Each is
 * NULL in production (one predictable branch where it is read). */
#ifndef UFORM_EXECUTOR_TEST_HOOKS_H
#define UFORM_EXECUTOR_TEST_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "uform.h"

/** Called by a worker between seeing a job and claiming its share, to widen the window in
 *  which the forking thread steals it. */
extern void (*_Atomic uform__test_before_claim)(size_t worker);
/** Called at the claims' windows (executor_fork_join.c, "claims"), to widen them: 0, a worker
 *  claiming with a plain store, between its read of its own mark and its store; 1, the forking
 *  thread stealing, between its read of a worker's mark and its CAS; 2, a worker about to sleep,
 *  between its mark and its count in `sleepers`; 3, a marked worker, between its won CAS and its
 *  clearing of the mark; 4, a worker, between its store of `done` and its next wait (a clear
 *  that came after `done` would be late there); 5, a worker that lost its CAS, before its next
 *  wait. */
extern void (*_Atomic uform__test_claim_window)(int where);
/** How many shares the forking thread has stolen from workers (a count, as below). */
extern _Atomic size_t uform__test_shares_stolen;
/** The CPU the forking thread runs on, and the re-pinning of a worker, as the
 *  migration-following code sees them (fixture machines have CPUs this one lacks). */
extern int (*_Atomic uform__test_current_cpu)(void);
extern bool (*_Atomic uform__test_pin)(uform__thread_t thread, int32_t cpu);
/** Called by a thread leaving the API (before it counts itself out), to widen the window in
 *  which uform_executor_free could release what it is about to touch. */
extern void (*_Atomic uform__test_before_leave)(void);
/** Called by the biased hold (executor_bias.c) at 0: an owner's entry, between its store to
 *  its inside slot and its second read of `bias`; 1: a revocation, between its count-in (after
 *  its store of REVOKED) and the process barrier; 2: the word's fast path (executor_hold.c),
 *  between its first read of `bias` and its CAS; 3: an owner's entry, between its first read of
 *  `bias` and its store; 4: an owner stepping out, between its store of 0 and its reads of its
 *  slot's count and record; 5: a revocation that converted the owner's call, between its CAS and
 *  its record. To widen the windows in which they cross. */
extern void (*_Atomic uform__test_bias_window)(int where);
/** Called by uform_deferred_cancel once it has moved a queued call to CANCELLED, before it
 *  finishes the handle, to widen the window in which the leader and the owner let go of it. */
extern void (*_Atomic uform__test_after_cancel_claim)(void);
/** How many times a joiner has gone to sleep waiting for a worker's share (a count, not a hook:
 *  one relaxed add on the way to a futex wait). */
extern _Atomic size_t uform__test_joiner_sleeps;
/** Called before an executor's creation starts its thread `index` (0: the leader): a nonzero
 *  errno value refuses that start as pthread_create would, so creation fails part-way, with
 *  threads before it running. */
extern int (*_Atomic uform__test_thread_start)(size_t index);
/** A dynamic parallel-for over [first, n), to reach counter values near SIZE_MAX. */
uform_status_t uform__test_for_n_dynamic_from(uform_executor_t *executor, size_t first, size_t n, uform_task_t task,
                                              void *context);

#endif
