/* Internal: the hold word (who may fork the workers now, who is inside the API) and the waits
 * under the executor's mutex (see executor_hold.c). Included at the end of executor_internal.h:
 * the synchronous call's inline hold reads the executor's struct. */
#ifndef UFORM_EXECUTOR_HOLD_H
#define UFORM_EXECUTOR_HOLD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/platform.h"
#include "uform.h"

/** Hold bits: who may fork the workers right now. The bits above UFORM_HOLD_FLAGS count the
 *  threads inside the API on this executor (ENTERED units), so that free waits for every one
 *  of them before releasing the memory they touch. */
enum {
    UFORM_HOLD_SYNC = 1u,    /* a thread's synchronous call runs */
    UFORM_HOLD_CLAIM = 2u,   /* a thread's synchronous call waits for deferred calls to finish */
    UFORM_HOLD_LEADER = 4u,  /* the executor's own leader thread runs a deferred call */
    UFORM_HOLD_WAITERS = 8u, /* someone sleeps on `changed` (see executor_hold.c) */
    UFORM_HOLD_CLOSING = 16u, /* uform_executor_free has begun: no new calls */
    /* The bias's owner is inside a synchronous call that a revoker found running: the call
     * counts as SYNC, with one ENTERED unit of its own, until its owner leaves (executor_bias.c). */
    UFORM_HOLD_BIASED = 32u,
    UFORM_HOLD_RUNNING = UFORM_HOLD_SYNC | UFORM_HOLD_BIASED, /* a synchronous call runs */
    UFORM_HOLD_FLAGS = 0xFFu,
    UFORM_HOLD_ENTERED = 0x100u /* one thread inside the API (counted, not a flag) */
};

/** What a thread sleeping on `changed` waits for. */
typedef enum uform__wait_t {
    UFORM_WAIT_CLAIM,  /* a synchronous call: deferred calls up to `target` done, leader off */
    UFORM_WAIT_LEADER, /* the leader, for deferred call `target`: no synchronous call in its way */
    UFORM_WAIT_IDLE,   /* drain: deferred calls up to `target` done, no synchronous call */
    UFORM_WAIT_CLOSED  /* free: idle, and no other thread left inside the API (ENTERED == 1) */
} uform__wait_t;

/* After the hold bits: the owner's inline entry reads them. */
#include "executor/executor_bias.h"

/** Counts the calling thread in (ENTERED) without any check: free waits until it leaves.
 *  Returns the hold word as it was. */
uint32_t uform__enter(const uform_executor_t *executor);
/** Counts it in, then checks: FORKED in a fork()ed child (not left again: the mutex may be held
 *  by a vanished thread); INVALID_ARGUMENT (left again) from one of its own callbacks or once
 *  free has begun. The first touch of the executor by any call; `caller` names it in messages. */
uform_status_t uform__enter_call(const uform_executor_t *executor, const char *caller);
/** Counts the calling thread out; wakes a waiting free when it was the last. */
void uform__leave(const uform_executor_t *executor);
/** The word's way to take the executor for a synchronous call (every path but the biased
 *  owner's): `bias` as the inline path read it, `entry` what the owner's entry did with it. */
uform_status_t uform__hold_sync_unbiased(uform_executor_t *executor, const char *caller, uintptr_t bias,
                                         uform__bias_entry_t entry);
/** FORKED, with its message: a held call in a fork()ed child. */
uform_status_t uform__hold_forked_error(const char *caller);
/** Releases a synchronous call held through the word, and leaves (granting the bias first when
 *  it may). */
void uform__release_sync_unbiased(uform_executor_t *executor);

/** Enters and takes the executor for a synchronous call; CONTENDED, or INVALID_ARGUMENT
 *  once free has begun (not entered then). `*biased` says which hold it took, for the release:
 *  0 for the word, or the owner's token when the bias took it. Inline: the owner's way in is
 *  a store and three loads, taken on every call. */
static inline uform_status_t uform__hold_sync(uform_executor_t *executor, const char *caller, uintptr_t *biased) {
    uintptr_t bias = atomic_load_explicit(&executor->bias, memory_order_relaxed);
    uform__bias_entry_t entry = UFORM_BIAS_NOT_OWNER;
    if (bias > UFORM_BIAS_OFF) {
        /* Some thread's bias: ours (enter without a locked instruction), or another's (the
         * word's path takes it back). */
        entry = uform__bias_enter(executor, bias);
        if (entry == UFORM_BIAS_ENTERED) {
            /* Like the word's fast path, a fork()ed child keeps the hold: nothing is left to it. */
            if (uform__forked_since(executor->fork_generation)) return uform__hold_forked_error(caller);
            *biased = bias;
            return UFORM_STATUS_OK;
        }
    }
    *biased = 0;
    return uform__hold_sync_unbiased(executor, caller, bias, entry);
}

/** Releases a synchronous call's hold and leaves, in one step. */
static inline void uform__release_sync(uform_executor_t *executor, uintptr_t biased) {
    if (biased)
        uform__bias_leave(biased);
    else
        uform__release_sync_unbiased(executor);
}

/* ---- the deferred calls' leader, and the waits under the lock ---- */

void uform__hold_leader_locked(uform_executor_t *executor, uint64_t sequence);
/** Sleeps on `changed` (the lock held) until `what` is true for `target`. */
void uform__wait_locked(uform_executor_t *executor, uform__wait_t what, uint64_t target);
void uform__release_leader(uform_executor_t *executor);

#endif
