/* Internal: the biased hold (see executor_bias.c for the protocol). The owner's way in and out
 * is here, inline: every synchronous call of the owner takes both, and as calls into another
 * file they were about a quarter of a 1-thread call's API path (link-time optimisation, which
 * inlines them, took 20.0 to 15.4 ns off such a call: bench/RESULTS.md). Revocations, grants and
 * the slots' pool stay in executor_bias.c.
 *
 * Included by executor_hold.h, itself included at the end of executor_internal.h: the inline
 * entry reads the executor's struct. */
#ifndef UFORM_EXECUTOR_BIAS_H
#define UFORM_EXECUTOR_BIAS_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/thread_local.h"
#include "executor/executor_test_hooks.h"
#include "uform.h"

/** `bias` besides an owner's token (the address of its inside slot): nobody's (a synchronous
 *  call's release may grant it), taken from an owner found inside a call (until that call
 *  leaves), or off for good. */
enum { UFORM_BIAS_NONE = 0, UFORM_BIAS_REVOKED = 1, UFORM_BIAS_OFF = 2 };
typedef enum uform__bias_entry_t {
    UFORM_BIAS_NOT_OWNER, /* not the owner, or already inside (a callback's call): nothing done */
    UFORM_BIAS_ENTERED,   /* held, biased: release with uform__bias_leave */
    UFORM_BIAS_STEPPED_OUT /* the bias was going: counted in (ENTERED), not held */
} uform__bias_entry_t;

/** Each thread's inside slot, a line of its own: the owner writes `inside` on every call and
 *  reads the rest when it leaves; revokers write the rest, rarely. */
typedef struct uform__bias_slot_t {
    /* What the thread is inside, biased: 0, or the executor's address; the low bit set once a
     * revoker has converted that call into the word (until the owner's store of 0). */
    alignas(UFORM_LINE_) _Atomic uintptr_t inside;
    _Atomic uint32_t revoking;   /* revokers between their count-in (before the barrier) and their verdict */
    _Atomic uintptr_t converted; /* the executor whose call a revoker converted, until the owner gives it back */
    struct uform__bias_slot_t *next_free;
} uform__bias_slot_t;

#define UFORM_BIAS_CONVERTED_ ((uintptr_t)1)

/* The calling thread's slot, NULL until it is first granted a bias (executor_bias.c). */
extern UFORM_HOT_THREAD_LOCAL_ uform__bias_slot_t *uform__bias_this_thread_slot;

/** The test hook's window `where` (executor_test_hooks.h); one load and a branch otherwise. */
static inline void uform__bias_widen(int where) {
    void (*hook)(int) = atomic_load_explicit(&uform__test_bias_window, memory_order_relaxed);
    if (hook) hook(where);
}

/** Waits for the revokers counted in `slot`, then gives back the call one of them converted. */
void uform__bias_settle(uform__bias_slot_t *slot);
/** An entry that found the bias going: counts in, steps out (settling), says STEPPED_OUT. */
uform__bias_entry_t uform__bias_step_out_entered(uform_executor_t *executor, uform__bias_slot_t *slot);

/** The owner steps out: its store, then its slot's own words. No fence: a revoker's barrier
 *  orders the store before the loads, as at the entry (see executor_bias.c). The executor is not
 *  read: once the store is seen it may be freed. */
static inline void uform__bias_step_out(uform__bias_slot_t *slot) {
    /* Release: whoever next finds us outside sees the call's writes. */
    atomic_store_explicit(&slot->inside, 0, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    uform__bias_widen(4);
    /* Acquire: a count read as 0 after a revoker's count-out carries its record. */
    if (atomic_load_explicit(&slot->revoking, memory_order_acquire) != 0 ||
        atomic_load_explicit(&slot->converted, memory_order_relaxed) != 0)
        uform__bias_settle(slot);
}

/** The owner's way in: a plain store and load, no locked instruction. `bias` is the value of
 *  the executor's `bias` just read (an owner's token). */
static inline uform__bias_entry_t uform__bias_enter(uform_executor_t *executor, uintptr_t bias) {
    uform__bias_slot_t *slot = uform__bias_this_thread_slot;
    if ((uintptr_t)slot != bias) return UFORM_BIAS_NOT_OWNER;
    /* Already inside a biased call (of this executor: a callback's call, which the word's path
     * refuses; or of another one, whose callback calls this: the word's path takes it). */
    if (atomic_load_explicit(&slot->inside, memory_order_relaxed) != 0) return UFORM_BIAS_NOT_OWNER;
    void (*hook)(int) = atomic_load_explicit(&uform__test_bias_window, memory_order_relaxed);
    if (hook) hook(3);
    atomic_store_explicit(&slot->inside, (uintptr_t)executor, memory_order_relaxed);
    /* No fence: a revoker's process barrier orders this store before the load below. */
    atomic_signal_fence(memory_order_seq_cst);
    if (hook) hook(0);
    if (atomic_load_explicit(&executor->bias, memory_order_relaxed) == bias &&
        !(atomic_load_explicit(&executor->hold, memory_order_relaxed) & UFORM_HOLD_FLAGS) &&
        atomic_load_explicit(&executor->outstanding, memory_order_acquire) == 0)
        return UFORM_BIAS_ENTERED;
    /* Revoked meanwhile, or deferred calls queued. */
    return uform__bias_step_out_entered(executor, slot);
}

/** The owner's way out, by the token its entry got: the slot alone, never the executor, which
 *  may be freed once the owner's store of 0 is seen. */
static inline void uform__bias_leave(uintptr_t token) {
    void (*hook)(void) = atomic_load_explicit(&uform__test_before_leave, memory_order_relaxed);
    if (hook) hook();
    uform__bias_step_out((uform__bias_slot_t *)token);
}

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

#endif
