/* The biased hold: the thread that makes an executor's synchronous calls takes it without a
 * locked instruction.
 *
 * Taking the hold word (executor_hold.c) costs a CAS on the way in, and on Intel that CAS was
 * 2-12% of a 2-thread fork-join (bench/RESULTS.md): it waits for the caller's stores before the
 * call can go on. Most programs call an executor from one thread, so the executor is biased to
 * it: the owner, the thread whose inside slot is in `bias`, enters by storing the executor into
 * its slot and reading `bias` again, with only the compiler ordering the two, and leaves by
 * storing 0 into its slot and reading two more words of the slot, again ordered by the compiler
 * alone. The caller's one locked instruction left is the generation's increment.
 *
 * The slot is the thread's own, not the executor's: an owner that read its bias and was then
 * preempted before its store may wake up long after its bias was revoked and granted to another
 * thread, now inside a call; its store and its stepping out must not touch the new owner's
 * record (the `where == 3` window in test_executor_bias_races found exactly that when the record
 * was one word of the executor's). Slots are never freed: a thread's goes back to a pool when it
 * ends, so a revoker reading a departed owner's slot reads memory that is still a slot.
 *
 * Every other party that must know whether a synchronous call runs (another thread's call, the
 * leader for deferred calls, drain, free, order_stream) first revokes the bias, under the lock:
 * it stores REVOKED in `bias`, makes every thread of the process run a full barrier
 * (uform__process_barrier, Linux membarrier), then looks at the owner's slot. That is Dekker's
 * pattern with the owner's fence paid by the revoker: after the barrier either the revoker sees
 * the executor in the owner's slot, or the owner's second read of `bias` sees REVOKED and it
 * steps out. A call the revoker finds inside is converted (the slot's low bit set) into a hold in
 * the word, BIASED with one ENTERED unit, which its owner gives back under the lock when it
 * leaves; so from then on every decision taken from the word alone is right, as it was before
 * the bias existed.
 *
 * Leaving is the same pattern the other way round, with both of the owner's reads in its own
 * slot: once its store of 0 is seen, a free may find it outside and release the executor, so the
 * owner must not read the executor after it. A revoker counts itself in the slot's `revoking`
 * before its barrier and out after its verdict, and a revoker that converted the call records the
 * executor in the slot's `converted` before counting out. After the barrier either the revoker's
 * CAS sees the owner's 0 (nothing converted) or the owner's read sees the count, or the record
 * the count's release carries. Only then does the owner wait for the revokers and give a
 * converted call back (that executor is still held: its ENTERED unit is in the word). The owner's
 * store may overwrite the low bit a conversion set; the record is what counts.
 *
 * Grants: only a thread that holds the executor through the word (SYNC) grants, to itself, under
 * the lock, when nothing else is flagged or queued, so a revoker that holds the lock, or keeps a
 * flag set, knows no new owner appears meanwhile. A thread that took SYNC by the word's lock-free
 * fast path reads `bias` again after its CAS: if a bias was granted (or is being revoked) behind
 * its first read, it settles that under the lock (executor_hold.c).
 *
 * Costs: a revocation by another thread is a membarrier (an interrupt to every CPU running one of
 * our threads, microseconds on a VM); after UFORM_BIAS_REVOCATION_LIMIT of them the executor stops
 * granting and every call takes the word, as before. A thread revoking its own bias (its drain,
 * its free, its deferred calls: a submission revokes, so the leader finds nothing to revoke)
 * pays nothing. Nothing is granted in a process where the barrier has not been seen working, nor
 * before the registration an executor's leader thread starts when it is created has finished
 * (milliseconds in a process of several threads: no call waits for it). Where the barrier is missing (an emulator that
 * lacks membarrier, WebAssembly) nothing is ever granted. */
#include <stdlib.h>
#include <time.h>

#include "executor/executor_internal.h"
#include "executor/executor_test_hooks.h"

/* Revocations by other threads before an executor stops granting: calls that really come from
 * several threads take the word, and pay no interrupts. */
#define UFORM_BIAS_REVOCATION_LIMIT 8u

/* ---- each thread's inside slot ------------------------------------------------------------- */

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static uform__bias_slot_t *free_slots;
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;
static bool slot_key_made;
static pthread_key_t slot_key; /* its destructor gives the slot back when the thread ends */
/* The calling thread's slot (declared in executor_bias.h, where the owner's inline path reads
 * it). Initial-exec under glibc, the default model elsewhere (core/thread_local.h says why). */
UFORM_HOT_THREAD_LOCAL_ uform__bias_slot_t *uform__bias_this_thread_slot = NULL;

/** At the thread's end: the slot goes back to the pool only if it is outside every call (a thread
 *  that ended inside one, by pthread_exit in a callback, leaves its slot marked, and leaked), and
 *  the thread forgets it, so a call it still makes from another key's destructor takes a new one
 *  (POSIX runs destructors again for it) instead of sharing this one with its next taker. */
static void give_slot_back(void *pointer) {
    uform__bias_slot_t *slot = pointer;
    uform__bias_this_thread_slot = NULL;
    if (atomic_load(&slot->inside) != 0 || atomic_load(&slot->converted) != 0) return;
    pthread_mutex_lock(&slots_lock);
    slot->next_free = free_slots;
    free_slots = slot;
    pthread_mutex_unlock(&slots_lock);
}

/* fork() while another thread holds slots_lock must not leave the child's copy locked. */
static void lock_slots(void) { pthread_mutex_lock(&slots_lock); }
static void unlock_slots(void) { pthread_mutex_unlock(&slots_lock); }

/** In a fork()ed child, no revoker is left to count itself out of a slot: not of the forking
 *  thread's (one may have been revoking that thread's bias as it forked), nor of a pooled one (a
 *  departed owner's, which the child's next thread may take). And a converted call of the
 *  parent's answers FORKED there without leaving. Either slot's next step-out would wait
 *  forever. The child is this thread alone, so those words start over. */
static void unlock_slots_in_child(void) {
    uform__bias_slot_t *slot = uform__bias_this_thread_slot;
    if (slot) {
        atomic_store(&slot->revoking, 0);
        atomic_store(&slot->converted, 0);
    }
    for (uform__bias_slot_t *pooled = free_slots; pooled; pooled = pooled->next_free) atomic_store(&pooled->revoking, 0);
    pthread_mutex_unlock(&slots_lock);
}

static void set_up_slots(void) {
    slot_key_made = pthread_key_create(&slot_key, give_slot_back) == 0;
    pthread_atfork(lock_slots, unlock_slots, unlock_slots_in_child);
}

/** The calling thread's slot, taken on first use; NULL if none can be had now (no memory, no
 *  thread-specific key). */
static uform__bias_slot_t *slot_of_this_thread(void) {
    uform__bias_slot_t *slot = uform__bias_this_thread_slot;
    if (slot) return slot;
    pthread_once(&slots_once, set_up_slots);
    if (!slot_key_made) return NULL; /* without the key, the slot would never come back */
    pthread_mutex_lock(&slots_lock);
    slot = free_slots;
    if (slot) free_slots = slot->next_free;
    pthread_mutex_unlock(&slots_lock);
    if (!slot) {
        if (!(slot = aligned_alloc(UFORM_LINE_, sizeof *slot))) return NULL; /* never freed */
        atomic_store(&slot->inside, 0);
        atomic_store(&slot->revoking, 0);
        atomic_store(&slot->converted, 0);
    }
    /* A pooled slot keeps its words: `inside` and `converted` are 0 (give_slot_back), and a
     * revoker that read the departed owner's token may still be counted into `revoking`. It
     * counts itself out; zeroing the count under it would wrap it, and this thread would then
     * wait at every step-out for a revoker that never comes. */
    if (pthread_setspecific(slot_key, slot) != 0) {
        give_slot_back(slot);
        return NULL;
    }
    uform__bias_this_thread_slot = slot;
    return slot;
}

uintptr_t uform__bias_token_of_this_thread(void) { return (uintptr_t)uform__bias_this_thread_slot; }

uintptr_t uform__bias_slot_inside(uintptr_t token) {
    return token > UFORM_BIAS_OFF ? atomic_load(&((uform__bias_slot_t *)token)->inside) : 0;
}

uint32_t uform__bias_slot_revoking(uintptr_t token) {
    return token > UFORM_BIAS_OFF ? atomic_load(&((uform__bias_slot_t *)token)->revoking) : 0;
}

bool uform__bias_owner_inside(const uform_executor_t *executor) {
    uintptr_t owner = atomic_load(&executor->bias);
    if (owner <= UFORM_BIAS_OFF) return false;
    return (atomic_load(&((uform__bias_slot_t *)owner)->inside) & ~UFORM_BIAS_CONVERTED_) == (uintptr_t)executor;
}

/* ---- entering, leaving ------------------------------------------------------------------------ */

void (*_Atomic uform__test_bias_window)(int where); /* static storage: starts NULL */

static inline bool is_owner_token(uintptr_t bias) { return bias > UFORM_BIAS_OFF; }

/** What `bias` becomes once the owner's call is out of the way. */
static uintptr_t unowned(const uform_executor_t *executor) {
    return executor->bias_revocations >= UFORM_BIAS_REVOCATION_LIMIT ? UFORM_BIAS_OFF : UFORM_BIAS_NONE;
}

/** A converted call's release: the word gives back BIASED and its ENTERED unit under the lock,
 *  with a broadcast, as leave_with does when someone may wait; the unlock is its last touch. */
static void converted_leave(uform_executor_t *executor) {
    pthread_mutex_lock(&executor->lock);
    if (atomic_load(&executor->bias) == UFORM_BIAS_REVOKED) atomic_store(&executor->bias, unowned(executor));
    atomic_fetch_sub(&executor->hold, UFORM_HOLD_ENTERED + UFORM_HOLD_BIASED);
    pthread_cond_broadcast(&executor->changed);
    pthread_mutex_unlock(&executor->lock);
}

/** Waits for the revokers counted in the owner's slot, then gives back the call one of them
 *  converted. A revoker's count lasts a barrier and a CAS under its executor's lock, none of which
 *  waits for this thread. */
void uform__bias_settle(uform__bias_slot_t *slot) {
    /* Yields first, then short sleeps: a revoker of lower real-time priority on this CPU must
     * get to run. */
    for (unsigned turns = 0; atomic_load_explicit(&slot->revoking, memory_order_acquire) != 0; turns++) {
        if (turns < 64) {
            uform__thread_yield();
        } else {
            struct timespec pause = {0, 50000};
            nanosleep(&pause, NULL);
        }
    }
    uintptr_t converted = atomic_load_explicit(&slot->converted, memory_order_relaxed);
    if (!converted) return;
    atomic_store_explicit(&slot->converted, 0, memory_order_relaxed);
    /* Before this thread's next store to `inside`: a revoker that converts that next call
     * records it after seeing the store, and must not find its record erased by this 0 landing
     * late (the unlock in converted_leave orders earlier stores, not later ones; x86 keeps
     * stores in order anyway). */
    atomic_thread_fence(memory_order_seq_cst);
    converted_leave((uform_executor_t *)converted);
}

uform__bias_entry_t uform__bias_step_out_entered(uform_executor_t *executor, uform__bias_slot_t *slot) {
    /* Count in first (a free that then finds us outside waits for the count), then step out,
     * giving back a converted call. */
    uform__enter(executor);
    uform__bias_step_out(slot);
    return UFORM_BIAS_STEPPED_OUT;
}

void uform__bias_grant(uform_executor_t *executor) {
    /* Only into NONE, and only with nothing else going on: a revoker would take it back at once. */
    if (atomic_load_explicit(&executor->bias, memory_order_relaxed) != UFORM_BIAS_NONE) return;
    /* Not before the leader's registration for the barrier is done (uform__leader_main): the
     * calls until then take the word. */
    int barrier = uform__process_barrier_known();
    if (barrier == 0) return;
    if ((atomic_load_explicit(&executor->hold, memory_order_relaxed) & UFORM_HOLD_FLAGS) != UFORM_HOLD_SYNC ||
        atomic_load_explicit(&executor->outstanding, memory_order_relaxed) != 0)
        return;
    pthread_mutex_lock(&executor->lock);
    if (atomic_load(&executor->bias) == UFORM_BIAS_NONE &&
        (atomic_load(&executor->hold) & UFORM_HOLD_FLAGS) == UFORM_HOLD_SYNC &&
        atomic_load(&executor->outstanding) == 0) {
        /* Ready means registered and a barrier seen working in this process (a fork()ed child
         * registers again): only then can a revocation keep the owner's side sound. */
        if (barrier < 0) {
            atomic_store(&executor->bias, UFORM_BIAS_OFF);
        } else {
            uform__bias_slot_t *slot = slot_of_this_thread(); /* NULL: no grant now, maybe later */
            if (slot) atomic_store(&executor->bias, (uintptr_t)slot);
        }
    }
    pthread_mutex_unlock(&executor->lock);
}

/** The barrier failed although it worked in this process before the grant: only a seccomp
 *  filter installed since could do that. Without it the owner's store into its slot may still sit
 *  in its CPU's store buffer, which hardware drains within microseconds (a preempted owner's
 *  context switch fenced it already): wait a millisecond before reading the slot, and never grant
 *  again in this executor. Not a proof, as the barrier is; marking the slot converted blindly
 *  would be wrong (the owner's plain store could overwrite the mark, leaking BIASED and hanging
 *  free). */
static void barrier_failed(uform_executor_t *executor) {
    executor->bias_revocations = UFORM_BIAS_REVOCATION_LIMIT;
    struct timespec drain = {0, 1000000};
    nanosleep(&drain, NULL);
}

bool uform__bias_revoke_locked(uform_executor_t *executor) {
    uintptr_t owner = atomic_load(&executor->bias);
    if (owner == UFORM_BIAS_REVOKED) return true; /* converted already: BIASED is in the word */
    if (!is_owner_token(owner)) return false;
    if (owner == (uintptr_t)uform__bias_this_thread_slot) {
        /* Our own bias: we are outside it (a callback's calls are refused before the lock). */
        atomic_store(&executor->bias, UFORM_BIAS_NONE);
        return false;
    }
    uform__bias_slot_t *slot = (uform__bias_slot_t *)owner;
    atomic_store(&executor->bias, UFORM_BIAS_REVOKED);
    atomic_fetch_add(&slot->revoking, 1); /* before the barrier: an owner stepping out after it waits */
    uform__bias_widen(1);
    if (!uform__process_barrier()) barrier_failed(executor); /* never in a fork()ed child: FORKED first */
    executor->bias_revocations++;
    uintptr_t inside = (uintptr_t)executor;
    bool converted = atomic_compare_exchange_strong(&slot->inside, &inside, inside | UFORM_BIAS_CONVERTED_);
    if (converted) {
        /* Its call now holds the word too; `bias` stays REVOKED until it leaves. */
        atomic_fetch_add(&executor->hold, UFORM_HOLD_ENTERED + UFORM_HOLD_BIASED);
        uform__bias_widen(5);
        atomic_store_explicit(&slot->converted, (uintptr_t)executor, memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&slot->revoking, 1, memory_order_release); /* carries the record */
    if (!converted) atomic_store(&executor->bias, unowned(executor));
    return converted;
}

uint32_t uform__hold_settled(uform_executor_t *executor) {
    /* With no bias, or one off for good, the word is the whole truth: no lock. Not so while a
     * revocation is under way (REVOKED, the call it finds not yet in the word): the lock waits
     * for it. */
    uintptr_t bias = atomic_load(&executor->bias);
    if (bias == UFORM_BIAS_NONE || bias == UFORM_BIAS_OFF) return atomic_load(&executor->hold);
    pthread_mutex_lock(&executor->lock);
    uform__bias_revoke_locked(executor);
    uint32_t hold = atomic_load(&executor->hold);
    pthread_mutex_unlock(&executor->lock);
    return hold;
}
