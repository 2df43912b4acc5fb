/* Internal: the hold word (who may fork the workers now, who is inside the API) and the waits
 * under the executor's mutex (see executor_hold.c). */
#ifndef UFORM_EXECUTOR_HOLD_H
#define UFORM_EXECUTOR_HOLD_H

#include <stdbool.h>
#include <stdint.h>

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

/** Counts the calling thread in (ENTERED) without any check: free waits until it leaves.
 *  Returns the hold word as it was. */
uint32_t uform__enter(const uform_executor_t *executor);
/** Counts it in, then checks: FORKED in a fork()ed child (not left again: the mutex may be held
 *  by a vanished thread); INVALID_ARGUMENT (left again) from one of its own callbacks or once
 *  free has begun. The first touch of the executor by any call; `caller` names it in messages. */
uform_status_t uform__enter_call(const uform_executor_t *executor, const char *caller);
/** Counts the calling thread out; wakes a waiting free when it was the last. */
void uform__leave(const uform_executor_t *executor);
/** Enters and takes the executor for a synchronous call; CONTENDED, or INVALID_ARGUMENT
 *  once free has begun (not entered then). `*biased` says which hold it took, for the release:
 *  0 for the word, or the owner's token when the bias took it. */
uform_status_t uform__hold_sync(uform_executor_t *executor, const char *caller, uintptr_t *biased);
/** Releases a synchronous call's hold and leaves, in one step. */
void uform__release_sync(uform_executor_t *executor, uintptr_t biased);

/* ---- the biased hold (executor_bias.c) ---- */

/** `bias` besides an owner's token (the address of its inside slot): nobody's (a synchronous call's release may grant it),
 *  taken from an owner found inside a call (until that call leaves), or off for good. */
enum { UFORM_BIAS_NONE = 0, UFORM_BIAS_REVOKED = 1, UFORM_BIAS_OFF = 2 };
typedef enum uform__bias_entry_t {
    UFORM_BIAS_NOT_OWNER, /* not the owner, or already inside (a callback's call): nothing done */
    UFORM_BIAS_ENTERED,   /* held, biased: release with uform__bias_leave */
    UFORM_BIAS_STEPPED_OUT /* the bias was going: counted in (ENTERED), not held */
} uform__bias_entry_t;
/** The owner's way in: a plain store and load, no locked instruction. */
uform__bias_entry_t uform__bias_enter(uform_executor_t *executor, uintptr_t bias);
/** The owner's way out, by the token its entry got: the slot alone, never the executor, which
 *  may be freed once the owner's store of 0 is seen. */
void uform__bias_leave(uintptr_t token);
/** At the end of a synchronous call held through the word: makes the caller the owner when
 *  nothing else is going on and the process barrier works. */
void uform__bias_grant(uform_executor_t *executor);
/** Under the lock, before deciding anything from the hold word: takes the bias from its owner
 *  (a full barrier on every thread of the process when the owner is another thread). True when
 *  the owner is inside a call, which is then in the word as BIASED. */
bool uform__bias_revoke_locked(uform_executor_t *executor);
/** The hold word with the bias revoked, for a look at who holds the executor now. */
uint32_t uform__hold_settled(uform_executor_t *executor);
/** For tests: the calling thread's token (0 before it was first granted a bias anywhere), and
 *  whether the bias's owner is inside a call of `executor` now. */
uintptr_t uform__bias_token_of_this_thread(void);
uintptr_t uform__bias_slot_inside(uintptr_t token); /* what a token's thread is inside: 0 or an executor */
uint32_t uform__bias_slot_revoking(uintptr_t token); /* revokers counted into a token's slot now */
bool uform__bias_owner_inside(const uform_executor_t *executor);
void uform__hold_leader_locked(uform_executor_t *executor, uint64_t sequence);
/** Sleeps on `changed` (the lock held) until `what` is true for `target`. */
void uform__wait_locked(uform_executor_t *executor, uform__wait_t what, uint64_t target);
void uform__release_leader(uform_executor_t *executor);

#endif
