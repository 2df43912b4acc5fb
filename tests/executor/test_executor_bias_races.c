/* The biased hold (executor_bias.c) under every "X while Y" it allows, with real threads and the
 * real membarrier: the owner's calls take the executor with a plain store, and every other
 * party revokes the bias first. A test hook (uform__test_bias_window) widens the windows where
 * the owner's entry, a revocation and the word's fast path cross. What must hold:
 * - one call at a time: no task of one call runs while a task of another does;
 * - a second thread's call is CONTENDED at once, never waits, whichever hold the first took;
 * - free, drain and the leader of deferred calls wait for the owner's running call;
 * - a callback calling its own executor is refused, and leaves the bias as it was;
 * - after UFORM_BIAS_REVOCATION_LIMIT revocations by other threads, no more grants;
 * - a fork()ed child's call answers FORKED.
 * Where the process barrier is missing (an emulator without membarrier), nothing may be
 * granted: the test checks that, says so, and runs the races through the word alone.
 * Runs under ASan and TSan in the suite. */
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor/executor_internal.h"
#include "executor/executor_test_hooks.h"
#include "executor/executor_test_util.h"
#include "test.h"

static bool barrier_ready;

static void sleep_us(long microseconds) {
    struct timespec pause = {microseconds / 1000000, (microseconds % 1000000) * 1000};
    nanosleep(&pause, NULL);
}

static uintptr_t bias_of(uform_executor_t *executor) { return atomic_load(&executor->bias); }
static uint32_t hold_of(uform_executor_t *executor) { return atomic_load(&executor->hold); }

static uform_executor_t *new_executor(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    return executor;
}

/* ---- tasks: an overlap detector, a gate, a counter ------------------------------------------- */

static _Atomic int active[3];        /* tasks running now, by call id (1 or 2) */
static _Atomic int overlaps = 0;
static _Atomic long tasks_run = 0;

/* A task of call `id` (1 or 2): no task of the other id may run at its start or its end. */
static uform_status_t marked(void *context, size_t task, size_t thread) {
    int id = (int)(intptr_t)context, other = 3 - id;
    atomic_fetch_add(&active[id], 1);
    if (atomic_load(&active[other])) atomic_fetch_add(&overlaps, 1);
    sched_yield();
    if (atomic_load(&active[other])) atomic_fetch_add(&overlaps, 1);
    atomic_fetch_add(&tasks_run, 1);
    atomic_fetch_sub(&active[id], 1);
    return UFORM_STATUS_OK;
}

static gate_t gate;
static uform_status_t gated(void *context, size_t task, size_t thread) {
    gate_pass(&gate);
    return UFORM_STATUS_OK;
}
static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

/* The owner's call, on a thread of its own, blocked on the gate with both threads inside. */
typedef struct owner_t {
    uform_executor_t *executor;
    pthread_t thread;
    uform_status_t status;
    _Atomic bool biased_before; /* its bias was granted before the gated call */
} owner_t;

static void *owner_main(void *argument) {
    owner_t *owner = argument;
    owner->status = uform_executor_for_n(owner->executor, NULL, 2, nothing, NULL); /* granted here */
    if (owner->status != UFORM_STATUS_OK) return NULL;
    atomic_store(&owner->biased_before, bias_of(owner->executor) == uform__bias_token_of_this_thread());
    owner->status = uform_executor_for_n(owner->executor, NULL, 2, gated, NULL);
    return NULL;
}

static void start_gated_owner(owner_t *owner, uform_executor_t *executor) {
    owner->executor = executor;
    owner->status = UFORM_STATUS_OK;
    atomic_store(&owner->biased_before, false);
    gate_init(&gate);
    CHECK(pthread_create(&owner->thread, NULL, owner_main, owner) == 0);
    wait_arrived(&gate, 2);
    CHECK(atomic_load(&owner->biased_before) == barrier_ready);
    CHECK(uform__bias_owner_inside(executor) == barrier_ready);
}

static void finish_gated_owner(owner_t *owner) {
    gate_open(&gate);
    pthread_join(owner->thread, NULL);
    CHECK_OK(owner->status);
}

/* ---- 1. granted to the thread that calls, kept across its calls ------------------------------ */

static void granted_and_kept(void) {
    uform_executor_t *executor = new_executor();
    CHECK(bias_of(executor) == UFORM_BIAS_NONE);
    for (int i = 0; i < 100; i++) CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL));
    if (barrier_ready) {
        CHECK(bias_of(executor) == uform__bias_token_of_this_thread());
    } else {
        CHECK(bias_of(executor) == UFORM_BIAS_OFF); /* never granted without the barrier */
    }
    CHECK(!uform__bias_owner_inside(executor));
    CHECK_EQ_INT(hold_of(executor), 0); /* no flag, nobody counted in */
    CHECK_OK(uform_executor_free(executor));
}

/* ---- 2. another thread's call while the owner is inside -------------------------------------- */

static void *call_once(void *executor) {
    return (void *)(uintptr_t)uform_executor_for_n(executor, NULL, 4, nothing, NULL);
}

static void second_caller_while_owner_inside(void) {
    uform_executor_t *executor = new_executor();
    owner_t owner;
    start_gated_owner(&owner, executor);
    double start = seconds_now();
    CHECK_STATUS(uform_executor_for_n(executor, NULL, 4, nothing, NULL), UFORM_STATUS_CONTENDED);
    CHECK_ERROR_NAMES("holds this executor");
    CHECK(seconds_now() - start < 5.0); /* at once: it never waits for the gate */
    if (barrier_ready) {
        /* Revoked with the owner inside: its call is in the word now. */
        CHECK(bias_of(executor) == UFORM_BIAS_REVOKED);
        CHECK(hold_of(executor) & UFORM_HOLD_BIASED);
    }
    /* A third thread, through the word: CONTENDED too. */
    pthread_t third;
    void *third_status = NULL;
    CHECK(pthread_create(&third, NULL, call_once, executor) == 0);
    pthread_join(third, &third_status);
    CHECK_EQ_INT((uintptr_t)third_status, UFORM_STATUS_CONTENDED);
    /* Two revokers: the second found it REVOKED and added nothing. The word holds the owner's
     * converted call alone (or, without the barrier, its SYNC). */
    CHECK_EQ_INT(hold_of(executor), UFORM_HOLD_ENTERED + (barrier_ready ? UFORM_HOLD_BIASED : UFORM_HOLD_SYNC));
    finish_gated_owner(&owner);
    CHECK(bias_of(executor) == UFORM_BIAS_NONE || bias_of(executor) == UFORM_BIAS_OFF);
    CHECK_EQ_INT(hold_of(executor), 0);
    CHECK_OK(uform_executor_for_n(executor, NULL, 4, nothing, NULL)); /* this thread's turn */
    if (barrier_ready) CHECK(bias_of(executor) == uform__bias_token_of_this_thread());
    CHECK_OK(uform_executor_free(executor));
}

/* ---- 3. free, drain, a deferred call while the owner is inside ------------------------------- */

typedef struct waiter_t {
    uform_executor_t *executor;
    int what; /* 0 free, 1 drain, 2 a deferred call, waited for */
    uform_status_t status;
    _Atomic bool returned;
} waiter_t;

static _Atomic bool owner_call_over = false;
static _Atomic int deferred_saw_owner_over = -1;

static uform_status_t deferred_task(void *context, size_t task, size_t thread) {
    if (task == 0) atomic_store(&deferred_saw_owner_over, atomic_load(&owner_call_over) ? 1 : 0);
    return UFORM_STATUS_OK;
}

static void *waiter_main(void *argument) {
    waiter_t *waiter = argument;
    if (waiter->what == 0) {
        waiter->status = uform_executor_free(waiter->executor);
    } else if (waiter->what == 1) {
        waiter->status = uform_executor_drain(waiter->executor, UFORM_MOOD_SPINNING);
    } else {
        uform_deferred_t *handle = NULL;
        uform_call_t call = UFORM_CALL_INIT;
        call.deferred = &handle;
        waiter->status = uform_executor_for_n(waiter->executor, &call, 2, deferred_task, NULL);
        if (waiter->status == UFORM_STATUS_OK) {
            waiter->status = uform_deferred_wait(handle, -1);
            uform_deferred_free(handle);
        }
    }
    atomic_store(&waiter->returned, true);
    return NULL;
}

static void party_waits_for_owner(int what) {
    static const char *names[] = {"free", "drain", "deferred call"};
    uform_executor_t *executor = new_executor();
    owner_t owner;
    atomic_store(&owner_call_over, false);
    atomic_store(&deferred_saw_owner_over, -1);
    start_gated_owner(&owner, executor);
    waiter_t waiter = {executor, what, UFORM_STATUS_OK, false};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, waiter_main, &waiter) == 0);
    sleep_us(30000); /* time to revoke, and to be wrong by returning */
    if (atomic_load(&waiter.returned)) TEST_FAIL_("%s returned while the owner's call ran", names[what]);
    if (barrier_ready) CHECK(hold_of(executor) & UFORM_HOLD_BIASED);
    /* The gate opens after the flag: a deferred task that runs before the owner's call ends
     * sees it false. */
    atomic_store(&owner_call_over, true);
    finish_gated_owner(&owner);
    pthread_join(thread, NULL);
    CHECK_OK(waiter.status);
    if (what == 2) CHECK_EQ_INT(atomic_load(&deferred_saw_owner_over), 1);
    if (what != 0) {
        CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL));
        CHECK_OK(uform_executor_free(executor));
    }
}

/* ---- 4. free reaching the owner at its last touch -------------------------------------------- */

static _Thread_local bool stall_me = false;
static _Atomic int stalls_begun = 0, stalls_finished = 0;
static void stall_before_leave(void) {
    if (!stall_me) return;
    atomic_fetch_add(&stalls_begun, 1);
    sleep_us(30000);
    atomic_fetch_add(&stalls_finished, 1);
}

static void *stalled_owner(void *executor) {
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL)); /* granted */
    stall_me = true;
    uform_status_t status = uform_executor_for_n(executor, NULL, 2, nothing, NULL);
    return (void *)(uintptr_t)status;
}

static void *drain_it(void *executor) {
    return (void *)(uintptr_t)uform_executor_drain(executor, UFORM_MOOD_SPINNING);
}

/* Free (or drain) from this thread converts the owner's call while the owner stalls right before
 * its exchange: it must wait for that last touch, and leave nothing behind. */
static void party_at_owners_last_touch(bool free_it) {
    uform_executor_t *executor = new_executor();
    atomic_store(&stalls_begun, 0);
    atomic_store(&stalls_finished, 0);
    atomic_store(&uform__test_before_leave, stall_before_leave);
    pthread_t owner;
    CHECK(pthread_create(&owner, NULL, stalled_owner, executor) == 0);
    while (!atomic_load(&stalls_begun)) sleep_us(100); /* its call is done but for its last touch */
    if (free_it) {
        CHECK_OK(uform_executor_free(executor));
    } else {
        pthread_t drainer;
        void *drained = NULL;
        CHECK(pthread_create(&drainer, NULL, drain_it, executor) == 0);
        pthread_join(drainer, &drained);
        CHECK_EQ_INT((uintptr_t)drained, UFORM_STATUS_OK);
    }
    /* It returned: the owner's stall, before its last touch, is over. */
    CHECK_EQ_INT(atomic_load(&stalls_finished), 1);
    void *status = NULL;
    pthread_join(owner, &status);
    CHECK_EQ_INT((uintptr_t)status, UFORM_STATUS_OK);
    atomic_store(&uform__test_before_leave, NULL);
    if (!free_it) {
        CHECK_EQ_INT(hold_of(executor), 0);
        CHECK(bias_of(executor) == UFORM_BIAS_NONE || bias_of(executor) == UFORM_BIAS_OFF);
        CHECK(!uform__bias_owner_inside(executor));
        CHECK_OK(uform_executor_free(executor));
    }
}

/* ---- 5. a callback calling its own executor -------------------------------------------------- */

static uform_status_t calls_back(void *context, size_t task, size_t thread) {
    uform_executor_t *executor = context;
    uform_status_t status = uform_executor_for_n(executor, NULL, 2, nothing, NULL);
    if (status != UFORM_STATUS_INVALID_ARGUMENT) return UFORM_STATUS_MISMATCH;
    return uform_executor_drain(executor, UFORM_MOOD_SPINNING) == UFORM_STATUS_INVALID_ARGUMENT
               ? UFORM_STATUS_OK
               : UFORM_STATUS_MISMATCH;
}

static void callback_reentry_refused(void) {
    uform_executor_t *executor = new_executor();
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL));
    uintptr_t bias = bias_of(executor);
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, calls_back, executor));
    CHECK(bias_of(executor) == bias); /* refused before anything was revoked */
    CHECK_EQ_INT(hold_of(executor), 0);
    CHECK_OK(uform_executor_free(executor));
}

/* ---- 6. the owner's entry, a revocation and the word's fast path crossing -------------------- */

typedef struct crossing_t {
    uform_executor_t *executor;
    _Atomic bool stop;
    _Atomic long ok, contended;
    int id;
} crossing_t;

static _Atomic unsigned widen_turn = 0;
static void widen_window(int where) {
    /* Vary the window: nothing, a yield, or a short sleep, by a shared turn counter. */
    unsigned turn = atomic_fetch_add_explicit(&widen_turn, 1, memory_order_relaxed);
    if (turn % 3 == 1) sched_yield();
    if (turn % 7 == 2) sleep_us(50 + 10 * where);
}

static void *caller_loop(void *argument) {
    crossing_t *crossing = argument;
    while (!atomic_load(&crossing->stop)) {
        uform_status_t status = uform_executor_for_n(crossing->executor, NULL, 2, marked, (void *)(intptr_t)crossing->id);
        if (status == UFORM_STATUS_OK)
            atomic_fetch_add(&crossing->ok, 1);
        else if (status == UFORM_STATUS_CONTENDED)
            atomic_fetch_add(&crossing->contended, 1);
        else
            TEST_FAIL_("a racing call answered %s", uform_status_name(status));
    }
    return NULL;
}

static void entries_cross(int rounds) {
    atomic_store(&uform__test_bias_window, widen_window);
    long granted_rounds = 0;
    for (int round = 0; round < rounds; round++) {
        uform_executor_t *executor = new_executor();
        atomic_store(&overlaps, 0);
        atomic_store(&tasks_run, 0);
        /* This thread becomes the owner, then races a second thread for 20 ms. */
        CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL));
        if (bias_of(executor) == uform__bias_token_of_this_thread()) granted_rounds++;
        crossing_t mine = {executor, false, 0, 0, 1}, other = {executor, false, 0, 0, 2};
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, caller_loop, &other) == 0);
        double until = seconds_now() + 0.02;
        while (seconds_now() < until) {
            uform_status_t status = uform_executor_for_n(executor, NULL, 2, marked, (void *)(intptr_t)1);
            if (status == UFORM_STATUS_OK)
                mine.ok++;
            else if (status == UFORM_STATUS_CONTENDED)
                mine.contended++;
            else
                TEST_FAIL_("the owner's call answered %s", uform_status_name(status));
        }
        atomic_store(&other.stop, true);
        pthread_join(thread, NULL);
        if (atomic_load(&overlaps)) TEST_FAIL_("round %d: %d task(s) ran beside another call's", round, overlaps);
        /* Every call that answered OK ran both its tasks, and no other call ran any. */
        CHECK_EQ_INT(atomic_load(&tasks_run), 2 * (mine.ok + atomic_load(&other.ok)));
        CHECK_EQ_INT(hold_of(executor), 0);
        CHECK(!uform__bias_owner_inside(executor));
        uintptr_t bias = bias_of(executor);
        CHECK(bias != UFORM_BIAS_REVOKED); /* nobody inside, so nobody converted */
        CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL));
        CHECK_OK(uform_executor_free(executor));
    }
    atomic_store(&uform__test_bias_window, NULL);
    printf("entries_cross: %d rounds, the bias granted at the start of %ld\n", rounds, granted_rounds);
    CHECK(barrier_ready ? granted_rounds == rounds : granted_rounds == 0);
}

/* The word's fast path reads NONE, then the owner is granted and released behind it: the CAS
 * succeeds and the second read finds the bias, which is settled under the lock. */
static uform_executor_t *raced_executor;
static _Atomic int raced_phase = 0; /* 1: the word path is in its window; 2: the grant happened */

static void hold_in_window(int where) {
    if (where != 2 || atomic_load(&raced_phase) != 0) return;
    atomic_store(&raced_phase, 1);
    while (atomic_load(&raced_phase) != 2) sleep_us(100);
}

static void *word_path_call(void *unused) {
    return (void *)(uintptr_t)uform_executor_for_n(raced_executor, NULL, 2, nothing, NULL);
}

static void fast_path_races_grant(bool owner_inside) {
    raced_executor = new_executor();
    atomic_store(&raced_phase, 0);
    atomic_store(&uform__test_bias_window, hold_in_window);
    pthread_t word_thread;
    CHECK(pthread_create(&word_thread, NULL, word_path_call, NULL) == 0);
    while (atomic_load(&raced_phase) != 1) sleep_us(100);
    atomic_store(&uform__test_bias_window, NULL);
    owner_t owner = {0};
    if (owner_inside) {
        start_gated_owner(&owner, raced_executor); /* granted, then inside a gated call */
    } else {
        CHECK_OK(uform_executor_for_n(raced_executor, NULL, 2, nothing, NULL)); /* granted, released */
        if (barrier_ready) CHECK(bias_of(raced_executor) == uform__bias_token_of_this_thread());
    }
    atomic_store(&raced_phase, 2);
    void *status = NULL;
    pthread_join(word_thread, &status);
    CHECK_EQ_INT((uintptr_t)status, owner_inside ? UFORM_STATUS_CONTENDED : UFORM_STATUS_OK);
    if (owner_inside) finish_gated_owner(&owner);
    CHECK_EQ_INT(hold_of(raced_executor), 0);
    CHECK(bias_of(raced_executor) != UFORM_BIAS_REVOKED);
    CHECK_OK(uform_executor_for_n(raced_executor, NULL, 2, nothing, NULL));
    CHECK_OK(uform_executor_free(raced_executor));
}

/* The owner is in its window (its 1 stored, its second read to come) when another thread's
 * revocation stores REVOKED and parks before its barrier, holding the lock, until the owner has
 * stepped out (lock-free progress only). The owner must step out, never run beside that call. */
static uform_executor_t *crossed_executor;
static uintptr_t crossed_owner; /* the owner's token, read before the race */
static _Atomic int parked = 0, owner_at_window = 0;

static void wait_until(_Atomic int *flag) {
    double until = seconds_now() + 2.0;
    while (!atomic_load(flag) && seconds_now() < until) sleep_us(100);
}

static void cross_in_windows(int where) {
    if (where == 0 && !atomic_load(&owner_at_window)) {
        atomic_store(&owner_at_window, 1);
        wait_until(&parked);
    } else if (where == 1 && !atomic_load(&parked)) {
        atomic_store(&parked, 1);
        double until = seconds_now() + 2.0;
        while (uform__bias_slot_inside(crossed_owner) && seconds_now() < until) sleep_us(100);
    }
}

static void *revoking_call(void *unused) {
    wait_until(&owner_at_window);
    return (void *)(uintptr_t)uform_executor_for_n(crossed_executor, NULL, 2, marked, (void *)(intptr_t)2);
}

static void owner_enters_during_revocation(void) {
    crossed_executor = new_executor();
    CHECK_OK(uform_executor_for_n(crossed_executor, NULL, 2, nothing, NULL)); /* this thread: the owner */
    if (!barrier_ready) {
        CHECK_OK(uform_executor_free(crossed_executor));
        return;
    }
    crossed_owner = bias_of(crossed_executor);
    CHECK(crossed_owner == uform__bias_token_of_this_thread());
    atomic_store(&overlaps, 0);
    atomic_store(&tasks_run, 0);
    atomic_store(&parked, 0);
    atomic_store(&owner_at_window, 0);
    atomic_store(&uform__test_bias_window, cross_in_windows);
    pthread_t other;
    CHECK(pthread_create(&other, NULL, revoking_call, NULL) == 0);
    uform_status_t mine = uform_executor_for_n(crossed_executor, NULL, 2, marked, (void *)(intptr_t)1);
    void *theirs = NULL;
    pthread_join(other, &theirs);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_EQ_INT(atomic_load(&parked), 1); /* the two did meet in their windows */
    CHECK_EQ_INT(atomic_load(&overlaps), 0);
    CHECK(mine == UFORM_STATUS_OK || mine == UFORM_STATUS_CONTENDED);
    CHECK((uintptr_t)theirs == UFORM_STATUS_OK || (uintptr_t)theirs == UFORM_STATUS_CONTENDED);
    CHECK(mine == UFORM_STATUS_OK || (uintptr_t)theirs == UFORM_STATUS_OK); /* not both refused */
    CHECK_EQ_INT(atomic_load(&tasks_run), 2 * ((mine == UFORM_STATUS_OK) + ((uintptr_t)theirs == UFORM_STATUS_OK)));
    CHECK_EQ_INT(hold_of(crossed_executor), 0);
    CHECK(!uform__bias_owner_inside(crossed_executor));
    CHECK_OK(uform_executor_free(crossed_executor));
}

/* The owner, in its window, waits until another thread's revocation has converted its entry:
 * its second read then sees REVOKED, it steps out giving the converted hold back, and takes the
 * executor through the word; the other thread's call was CONTENDED. */
static uform_executor_t *converting_executor;
static _Atomic int converting_owner_at_window = 0;

static void wait_for_conversion(int where) {
    if (where != 0) return;
    atomic_store(&converting_owner_at_window, 1);
    double until = seconds_now() + 2.0;
    while (!(hold_of(converting_executor) & UFORM_HOLD_BIASED) && seconds_now() < until) sleep_us(100);
}

static void *converting_call(void *unused) {
    wait_until(&converting_owner_at_window);
    return (void *)(uintptr_t)uform_executor_for_n(converting_executor, NULL, 4, nothing, NULL);
}

static void owner_steps_out_converted(void) {
    converting_executor = new_executor();
    CHECK_OK(uform_executor_for_n(converting_executor, NULL, 2, nothing, NULL)); /* the owner */
    if (!barrier_ready) {
        CHECK_OK(uform_executor_free(converting_executor));
        return;
    }
    atomic_store(&converting_owner_at_window, 0);
    atomic_store(&uform__test_bias_window, wait_for_conversion);
    pthread_t other;
    CHECK(pthread_create(&other, NULL, converting_call, NULL) == 0);
    uform_status_t mine = uform_executor_for_n(converting_executor, NULL, 2, nothing, NULL);
    void *theirs = NULL;
    pthread_join(other, &theirs);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_OK(mine);                                            /* stepped out, then the word */
    CHECK_EQ_INT((uintptr_t)theirs, UFORM_STATUS_CONTENDED); /* it found the owner inside */
    CHECK_EQ_INT(hold_of(converting_executor), 0);
    CHECK(!uform__bias_owner_inside(converting_executor));
    /* It went on through the word, whose release granted it the bias again (a call that had
     * ignored REVOKED would have left it NONE at its converted release). */
    CHECK(bias_of(converting_executor) == uform__bias_token_of_this_thread());
    CHECK_OK(uform_executor_free(converting_executor));
}

/* The owner's own deferred calls, drains and free revoke its bias at no cost (no barrier, no
 * revocation counted), and its next synchronous call still waits for its deferred call. */
static _Atomic int deferred_done = 0;
static uform_status_t slow_deferred(void *context, size_t task, size_t thread) {
    sleep_us(2000);
    atomic_fetch_add(&deferred_done, 1);
    return UFORM_STATUS_OK;
}
static uform_status_t sees_deferred_done(void *context, size_t task, size_t thread) {
    return atomic_load(&deferred_done) == 2 ? UFORM_STATUS_OK : UFORM_STATUS_MISMATCH;
}

static void owner_revokes_its_own(void) {
    uform_executor_t *executor = new_executor();
    for (int round = 0; round < 12; round++) {
        CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL)); /* granted */
        if (barrier_ready) CHECK(bias_of(executor) == uform__bias_token_of_this_thread());
        atomic_store(&deferred_done, 0);
        uform_deferred_t *handle = NULL;
        uform_call_t call = UFORM_CALL_INIT;
        call.deferred = &handle;
        CHECK_OK(uform_executor_for_n(executor, &call, 2, slow_deferred, NULL));
        CHECK_OK(uform_executor_for_n(executor, NULL, 2, sees_deferred_done, NULL)); /* after it */
        CHECK_OK(uform_deferred_wait(handle, -1));
        uform_deferred_free(handle);
        CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING));
    }
    CHECK_EQ_INT(executor->bias_revocations, 0); /* every revocation was its own */
    CHECK(bias_of(executor) != UFORM_BIAS_OFF || !barrier_ready);
    CHECK_OK(uform_executor_free(executor));
}

/* A look at the word (uform__hold_settled, what order_stream decides from) while a revocation is
 * under way: REVOKED is stored, the owner's call not yet in the word. The look must wait for the
 * revocation and see the call, not a word without it. */
static uform_executor_t *looked_executor;
static _Atomic int revocation_parked = 0, look_started = 0;
static _Atomic uint32_t looked_hold = 0;

static void park_until_looked(int where) {
    if (where != 1 || atomic_load(&revocation_parked)) return;
    atomic_store(&revocation_parked, 1);
    wait_until(&look_started);
    sleep_us(20000); /* the look is at the lock by now, or wrongly done */
}
static void *look(void *unused) {
    wait_until(&revocation_parked);
    atomic_store(&look_started, 1);
    atomic_store(&looked_hold, uform__hold_settled(looked_executor));
    return NULL;
}
static void *contending_call(void *executor) {
    return (void *)(uintptr_t)uform_executor_for_n(executor, NULL, 2, nothing, NULL);
}

static void look_during_revocation(void) {
    looked_executor = new_executor();
    owner_t owner;
    start_gated_owner(&owner, looked_executor);
    if (barrier_ready) {
        atomic_store(&revocation_parked, 0);
        atomic_store(&look_started, 0);
        atomic_store(&uform__test_bias_window, park_until_looked);
        pthread_t looker, revoker;
        CHECK(pthread_create(&looker, NULL, look, NULL) == 0);
        CHECK(pthread_create(&revoker, NULL, contending_call, looked_executor) == 0);
        void *revoked = NULL;
        pthread_join(revoker, &revoked);
        pthread_join(looker, NULL);
        atomic_store(&uform__test_bias_window, NULL);
        CHECK_EQ_INT((uintptr_t)revoked, UFORM_STATUS_CONTENDED);
        CHECK(atomic_load(&looked_hold) & UFORM_HOLD_BIASED); /* it saw the owner's call */
    }
    finish_gated_owner(&owner);
    CHECK_EQ_INT(hold_of(looked_executor), 0);
    CHECK_OK(uform_executor_free(looked_executor));
}

/* A thread ends owning a bias; its slot goes back to the pool, and the next thread to take a
 * slot (likely that one) becomes the owner by inheritance while inside another executor's call.
 * A revocation of the first executor must find that thread outside it, and both executors
 * must go on working. */
static uform_executor_t *inherited_first, *inherited_second;
static _Atomic uintptr_t ended_token = 0, taker_token = 0;
static void *own_and_end(void *unused) {
    CHECK_OK(uform_executor_for_n(inherited_first, NULL, 2, nothing, NULL));
    atomic_store(&ended_token, bias_of(inherited_first));
    return NULL;
}
static void *take_slot_and_hold(void *unused) {
    CHECK_OK(uform_executor_for_n(inherited_second, NULL, 2, nothing, NULL)); /* granted: a slot */
    atomic_store(&taker_token, uform__bias_token_of_this_thread());
    return (void *)(uintptr_t)uform_executor_for_n(inherited_second, NULL, 2, gated, NULL);
}

static void ended_owner_slot_reused(void) {
    inherited_first = new_executor();
    inherited_second = new_executor();
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, own_and_end, NULL) == 0);
    pthread_join(thread, NULL); /* ended, owning the first executor's bias */
    gate_init(&gate);
    CHECK(pthread_create(&thread, NULL, take_slot_and_hold, NULL) == 0);
    wait_arrived(&gate, 2); /* inside the second executor's call */
    if (barrier_ready) {
        CHECK(atomic_load(&ended_token) > UFORM_BIAS_OFF);
        printf("ended_owner_slot_reused: the slot was %s\n",
               atomic_load(&ended_token) == atomic_load(&taker_token) ? "reused" : "not reused");
    }
    CHECK_OK(uform_executor_for_n(inherited_first, NULL, 2, nothing, NULL)); /* revokes: outside it */
    CHECK_STATUS(uform_executor_for_n(inherited_second, NULL, 2, nothing, NULL), UFORM_STATUS_CONTENDED);
    gate_open(&gate);
    void *status = NULL;
    pthread_join(thread, &status);
    CHECK_EQ_INT((uintptr_t)status, UFORM_STATUS_OK);
    CHECK_OK(uform_executor_for_n(inherited_second, NULL, 2, nothing, NULL));
    CHECK_EQ_INT(hold_of(inherited_first), 0);
    CHECK_EQ_INT(hold_of(inherited_second), 0);
    CHECK_OK(uform_executor_free(inherited_first));
    CHECK_OK(uform_executor_free(inherited_second));
}

/* Both executors biased to this thread; a callback of the first calls the second. The slot is
 * taken by the first's call, so the second's goes through the word, and the bias survives. */
static uform_status_t call_other(void *context, size_t task, size_t thread) {
    if (thread != 0) return UFORM_STATUS_OK; /* the owner's own thread only */
    return uform_executor_for_n(context, NULL, 2, nothing, NULL);
}

static void nested_across_biased_executors(void) {
    uform_executor_t *outer = new_executor(), *inner = new_executor();
    CHECK_OK(uform_executor_for_n(outer, NULL, 2, nothing, NULL));
    CHECK_OK(uform_executor_for_n(inner, NULL, 2, nothing, NULL));
    if (barrier_ready) CHECK(bias_of(outer) == bias_of(inner) && bias_of(inner) == uform__bias_token_of_this_thread());
    for (int i = 0; i < 3; i++) CHECK_OK(uform_executor_for_n(outer, NULL, 2, call_other, inner));
    if (barrier_ready) CHECK(bias_of(inner) == uform__bias_token_of_this_thread()); /* granted again */
    CHECK_EQ_INT(inner->bias_revocations, 0); /* its own revocations cost nothing */
    CHECK_EQ_INT(hold_of(outer), 0);
    CHECK_EQ_INT(hold_of(inner), 0);
    CHECK_OK(uform_executor_free(inner));
    CHECK_OK(uform_executor_free(outer));
}

/* One of the owner's call's own callbacks, on a worker, calls the executor while another thread's
 * revocation is under way (REVOKED stored, the call not yet in the word): it must be refused as
 * a callback (INVALID_ARGUMENT), not taken through the word and found CONTENDED. The first
 * version let it take the word's fast path; test_executor_reentry_across_executors saw that
 * under TSan, one run in twenty. */
static uform_executor_t *reentered_executor;
static _Atomic int reentry_inside = 0, reentry_parked = 0, worker_called = 0, revoker_done = 0;
static _Atomic uform_status_t worker_status = UFORM_STATUS_OK;

static void park_until_worker_called(int where) {
    if (where != 1 || atomic_load(&reentry_parked)) return;
    atomic_store(&reentry_parked, 1);
    wait_until(&worker_called);
}
static uform_status_t reenter_during_revocation(void *context, size_t task, size_t thread) {
    if (thread == 0) { /* the owner stays inside until the revoker has its answer */
        atomic_store(&reentry_inside, 1);
        wait_until(&revoker_done);
    } else {
        wait_until(&reentry_parked);
        atomic_store(&worker_status, uform_executor_for_n(reentered_executor, NULL, 2, nothing, NULL));
        atomic_store(&worker_called, 1);
    }
    return UFORM_STATUS_OK;
}
static void *revoke_when_inside(void *unused) {
    wait_until(&reentry_inside);
    uform_status_t status = uform_executor_for_n(reentered_executor, NULL, 2, nothing, NULL);
    atomic_store(&revoker_done, 1);
    return (void *)(uintptr_t)status;
}

static void callback_calls_during_revocation(void) {
    reentered_executor = new_executor();
    CHECK_OK(uform_executor_for_n(reentered_executor, NULL, 2, nothing, NULL)); /* the owner */
    atomic_store(&reentry_inside, 0);
    atomic_store(&reentry_parked, barrier_ready ? 0 : 1); /* without a bias, nothing to park in */
    atomic_store(&worker_called, 0);
    atomic_store(&revoker_done, 0);
    atomic_store(&uform__test_bias_window, park_until_worker_called);
    pthread_t revoker;
    CHECK(pthread_create(&revoker, NULL, revoke_when_inside, NULL) == 0);
    CHECK_OK(uform_executor_for_n(reentered_executor, NULL, 2, reenter_during_revocation, NULL));
    void *revoked = NULL;
    pthread_join(revoker, &revoked);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_STATUS(atomic_load(&worker_status), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT((uintptr_t)revoked, UFORM_STATUS_CONTENDED);
    CHECK_EQ_INT(hold_of(reentered_executor), 0);
    CHECK_OK(uform_executor_free(reentered_executor));
}

/* ---- 7. the revocation limit, and fork --------------------------------------------------------- */

static void revocations_turn_it_off(void) {
    uform_executor_t *executor = new_executor();
    for (int i = 0; i < 12; i++) {
        CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL)); /* this thread: granted */
        pthread_t other;
        void *status = NULL;
        CHECK(pthread_create(&other, NULL, call_once, executor) == 0); /* revokes it */
        pthread_join(other, &status);
        CHECK_EQ_INT((uintptr_t)status, UFORM_STATUS_OK);
    }
    /* Twelve revocations by another thread, over the limit of eight: off for good. */
    CHECK(bias_of(executor) == UFORM_BIAS_OFF);
    if (barrier_ready) CHECK(executor->bias_revocations >= 8);
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL));
    CHECK(bias_of(executor) == UFORM_BIAS_OFF);
    CHECK_OK(uform_executor_free(executor));
}

/* ---- the owner stepping out: its store of 0, then its slot's count and record ------------------ */

/* A free in the window after the owner's store (where == 4): the free's revocation finds it
 * outside and releases the executor while the owner has still to read its slot. The owner must
 * not read the executor from then on (ASan reports the read of freed memory that a step-out
 * reading `bias` after its store would make). */
static _Thread_local bool step_out_stalls = false;
static _Atomic int step_out_stalled = 0, step_out_resumed = 0;

static void stall_after_store(int where) {
    if (where != 4 || !step_out_stalls) return;
    step_out_stalls = false; /* once: the call's own step-out */
    atomic_store(&step_out_stalled, 1);
    sleep_us(30000);
    atomic_store(&step_out_resumed, 1);
}

static void *owner_stalling_after_store(void *executor) {
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL)); /* granted */
    step_out_stalls = true;
    return (void *)(uintptr_t)uform_executor_for_n(executor, NULL, 2, nothing, NULL);
}

static void free_after_owners_store(void) {
    uform_executor_t *executor = new_executor();
    if (!barrier_ready) { /* nothing is granted: no step-out to stall in */
        CHECK_OK(uform_executor_free(executor));
        return;
    }
    atomic_store(&step_out_stalled, 0);
    atomic_store(&step_out_resumed, 0);
    atomic_store(&uform__test_bias_window, stall_after_store);
    pthread_t owner;
    CHECK(pthread_create(&owner, NULL, owner_stalling_after_store, executor) == 0);
    wait_until(&step_out_stalled);
    CHECK_EQ_INT(atomic_load(&step_out_stalled), 1); /* the owner's call was biased, and is in the window */
    CHECK_OK(uform_executor_free(executor)); /* the owner is outside: nothing to wait for */
    bool freed_during_stall = !atomic_load(&step_out_resumed);
    void *status = NULL;
    pthread_join(owner, &status);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_EQ_INT((uintptr_t)status, UFORM_STATUS_OK);
    CHECK_EQ_INT(atomic_load(&step_out_resumed), 1);
    if (!freed_during_stall) printf("free_after_owners_store: the free outlasted the 30 ms stall (slow machine)\n");
}

/* A thread that owned a bias ends, and its slot goes back to the pool; another thread starts
 * revoking that bias (counted into the slot, parked before its barrier); a new thread takes the
 * slot from the pool for a grant of its own. The revoker's count must survive the take: zeroed
 * there, the revoker's count-out would wrap it, and the new owner would wait at every step-out
 * for a revoker that never comes. In-process, and in a fork()ed child (whose fork handler must
 * clear a pooled slot's count, the parent's revoker being gone there). */
static uform_executor_t *reused_executor;
static _Atomic int reuse_revoker_parked = 0, reuse_go = 0;

static void park_reuse_revoker(int where) {
    if (where != 1 || atomic_load(&reuse_go)) return;
    atomic_store(&reuse_revoker_parked, 1);
    double until = seconds_now() + 10.0;
    while (!atomic_load(&reuse_go) && seconds_now() < until) sleep_us(100);
}

static void *own_and_leave(void *executor) {
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL)); /* granted at its release */
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL));
    return (void *)uform__bias_token_of_this_thread();
}

static void *revoke_departed(void *unused) {
    return (void *)(uintptr_t)uform_executor_for_n(reused_executor, NULL, 2, nothing, NULL);
}

typedef struct taker_t {
    uform_executor_t *executor;
    _Atomic int granted, go, done;
    uintptr_t token;
} taker_t;

static void *take_pooled_and_call(void *argument) {
    taker_t *taker = argument;
    double until = seconds_now() + 10.0;
    while ((!uform__bias_token_of_this_thread() || bias_of(taker->executor) != uform__bias_token_of_this_thread()) &&
           seconds_now() < until)
        if (uform_executor_for_n(taker->executor, NULL, 2, nothing, NULL) != UFORM_STATUS_OK) return NULL;
    taker->token = uform__bias_token_of_this_thread();
    atomic_store(&taker->granted, 1);
    while (!atomic_load(&taker->go) && seconds_now() < until + 10.0) sleep_us(100);
    for (int i = 0; i < 100; i++) /* each steps out of the slot */
        if (uform_executor_for_n(taker->executor, NULL, 2, nothing, NULL) != UFORM_STATUS_OK) return NULL;
    atomic_store(&taker->done, 1);
    return NULL;
}

/* Waits for `flag` up to `seconds`; false if it never came. */
static bool waited(_Atomic int *flag, double seconds) {
    double until = seconds_now() + seconds;
    while (!atomic_load(flag) && seconds_now() < until) sleep_us(1000);
    return atomic_load(flag) != 0;
}

static void slot_reused_while_revoker_counted_in(bool in_child) {
#ifdef __EMSCRIPTEN__
    if (in_child) {
        printf("slot_reused_while_revoker_counted_in: fork case skipped, no fork() in WebAssembly\n");
        return;
    }
#endif
    reused_executor = new_executor();
    uform_executor_t *second = new_executor();
    pthread_t first_owner, revoker;
    void *departed = NULL;
    CHECK(pthread_create(&first_owner, NULL, own_and_leave, reused_executor) == 0);
    pthread_join(first_owner, &departed); /* its slot is the pool's head now */
    if (!barrier_ready) {
        CHECK_OK(uform_executor_free(second));
        CHECK_OK(uform_executor_free(reused_executor));
        return;
    }
    CHECK(departed != NULL); /* it was granted (a token, not NONE) */
    CHECK(bias_of(reused_executor) == (uintptr_t)departed);
    atomic_store(&reuse_revoker_parked, 0);
    atomic_store(&reuse_go, 0);
    atomic_store(&uform__test_bias_window, park_reuse_revoker);
    CHECK(pthread_create(&revoker, NULL, revoke_departed, NULL) == 0);
    CHECK(waited(&reuse_revoker_parked, 10.0)); /* counted into the departed owner's slot */
    if (in_child) {
        fflush(NULL);
        pid_t child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            atomic_store(&uform__test_bias_window, NULL);
            alarm(20); /* a step-out waiting for the parent's revoker would hang */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
            _exit(0); /* no new threads in such a child under a sanitizer */
#endif
            if (getenv("UFORM_TEST_EMULATOR")) _exit(0);
            uform_executor_t *fresh = NULL;
            if (uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &fresh) != UFORM_STATUS_OK) _exit(3);
            taker_t taker = {.executor = fresh};
            atomic_store(&taker.go, 1);
            pthread_t thread;
            if (pthread_create(&thread, NULL, take_pooled_and_call, &taker) != 0) _exit(4);
            pthread_join(thread, NULL);
            if (!atomic_load(&taker.done)) _exit(5);
            if (taker.token != (uintptr_t)departed) _exit(6); /* it did take the pooled slot */
            _exit(uform_executor_free(fresh) == UFORM_STATUS_OK ? 0 : 7);
        }
        atomic_store(&reuse_go, 1);
        void *status = NULL;
        pthread_join(revoker, &status);
        atomic_store(&uform__test_bias_window, NULL);
        CHECK_EQ_INT((uintptr_t)status, UFORM_STATUS_OK);
        int wait_status = 0;
        CHECK(waitpid(child, &wait_status, 0) == child);
        CHECK(WIFEXITED(wait_status));
        if (WIFSIGNALED(wait_status))
            fprintf(stderr, "slot_reused_while_revoker_counted_in: the child died of signal %d\n", WTERMSIG(wait_status));
        CHECK_EQ_INT(WEXITSTATUS(wait_status), 0);
    } else {
        taker_t taker = {.executor = second};
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, take_pooled_and_call, &taker) == 0);
        CHECK(waited(&taker.granted, 10.0)); /* its grant took the pooled slot */
        atomic_store(&reuse_go, 1);          /* the revoker counts out, finding nobody inside */
        void *status = NULL;
        pthread_join(revoker, &status);
        atomic_store(&uform__test_bias_window, NULL);
        CHECK_EQ_INT((uintptr_t)status, UFORM_STATUS_OK);
        atomic_store(&taker.go, 1);
        if (!waited(&taker.done, 10.0)) {
            fprintf(stderr, "slot_reused_while_revoker_counted_in: the new owner waits at its step-out for ever\n");
            CHECK(false);
            fflush(NULL);
            _exit(1); /* its thread cannot be joined */
        }
        pthread_join(thread, NULL);
        CHECK(taker.token == (uintptr_t)departed); /* the pooled slot, as meant */
        CHECK_EQ_INT(uform__bias_slot_inside(taker.token), 0);
    }
    CHECK_OK(uform_executor_free(second));
    CHECK_OK(uform_executor_free(reused_executor));
}

/* A revocation that converted the owner's call and has not yet recorded it (where == 5) while the
 * owner steps out: the owner's store overwrites the conversion's mark, its count read says a
 * revoker is under way, and it must wait for the record and give the call back. A step-out that
 * trusted the record alone would leave BIASED and ENTERED in the word, and the drain below would
 * never return. */
static uform_executor_t *recorded_executor;
static _Thread_local bool waits_for_record = false;
static _Atomic int owner_before_store = 0, revoker_converted = 0, owner_stored = 0;

static void owner_waits_for_revoker(void) {
    if (!waits_for_record) return;
    waits_for_record = false;
    atomic_store(&owner_before_store, 1);
    wait_until(&revoker_converted); /* its CAS found us inside: converted */
}

static void record_late(int where) {
    if (where == 4 && atomic_load(&revoker_converted)) atomic_store(&owner_stored, 1);
    if (where != 5) return;
    atomic_store(&revoker_converted, 1);
    wait_until(&owner_stored);
    sleep_us(20000); /* the owner reads its count meanwhile, and waits */
}

static void *owner_leaving_converted(void *unused) {
    CHECK_OK(uform_executor_for_n(recorded_executor, NULL, 2, nothing, NULL)); /* granted */
    waits_for_record = true;
    return (void *)(uintptr_t)uform_executor_for_n(recorded_executor, NULL, 2, nothing, NULL);
}

static _Atomic int drained = 0;
static void *drain_and_say(void *executor) {
    uform_status_t status = uform_executor_drain(executor, UFORM_MOOD_SPINNING);
    atomic_store(&drained, 1);
    return (void *)(uintptr_t)status;
}

/* The drain `drainer` (drain_and_say) runs must return within 10 s: one that waits for a converted
 * call never given back would hang the test, so that ends it at once, failed, naming `who`.
 * The drain's status. */
static uform_status_t drain_returned(pthread_t drainer, const char *who) {
    double until = seconds_now() + 10.0;
    while (!atomic_load(&drained) && seconds_now() < until) sleep_us(1000);
    if (!atomic_load(&drained)) {
        fprintf(stderr, "%s: FAILED: the drain hangs: the converted call was never given back\n", who);
        fflush(NULL);
        _exit(1); /* the drainer cannot be joined */
    }
    void *status = NULL;
    pthread_join(drainer, &status);
    return (uform_status_t)(uintptr_t)status;
}

static void owner_waits_for_revokers_record(void) {
    recorded_executor = new_executor();
    CHECK_OK(uform_executor_for_n(recorded_executor, NULL, 2, nothing, NULL));
    if (!barrier_ready) {
        CHECK_OK(uform_executor_free(recorded_executor));
        return;
    }
    atomic_store(&owner_before_store, 0);
    atomic_store(&revoker_converted, 0);
    atomic_store(&owner_stored, 0);
    atomic_store(&drained, 0);
    atomic_store(&uform__test_before_leave, owner_waits_for_revoker);
    atomic_store(&uform__test_bias_window, record_late);
    pthread_t owner, drainer;
    CHECK(pthread_create(&owner, NULL, owner_leaving_converted, NULL) == 0);
    wait_until(&owner_before_store);
    CHECK(pthread_create(&drainer, NULL, drain_and_say, recorded_executor) == 0);
    uform_status_t drain_status = drain_returned(drainer, "owner_waits_for_revokers_record");
    void *owner_status = NULL;
    pthread_join(owner, &owner_status);
    atomic_store(&uform__test_before_leave, NULL);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_EQ_INT((uintptr_t)owner_status, UFORM_STATUS_OK);
    CHECK_EQ_INT(drain_status, UFORM_STATUS_OK);
    CHECK_EQ_INT(atomic_load(&owner_stored), 1); /* the window was crossed as meant */
    CHECK_EQ_INT(hold_of(recorded_executor), 0);
    CHECK(bias_of(recorded_executor) == UFORM_BIAS_NONE || bias_of(recorded_executor) == UFORM_BIAS_OFF);
    CHECK_OK(uform_executor_for_n(recorded_executor, NULL, 2, nothing, NULL));
    CHECK_OK(uform_executor_free(recorded_executor));
}

/* fork() while another thread revokes the forking thread's bias (parked after its count-in, where
 * == 1): the child has no revoker to count out, and its first biased step-out would wait for it
 * forever unless the child's fork handler starts the slot over. */
static uform_executor_t *forker_executor;
static _Atomic int fork_revoker_parked = 0, forked = 0;

static void park_until_forked(int where) {
    if (where != 1 || atomic_load(&forked)) return;
    atomic_store(&fork_revoker_parked, 1);
    wait_until(&forked);
}

static void *revoke_forkers_bias(void *unused) {
    return (void *)(uintptr_t)uform_executor_for_n(forker_executor, NULL, 2, nothing, NULL);
}

static void fork_while_bias_revoked(void) {
#ifdef __EMSCRIPTEN__
    printf("fork_while_bias_revoked: skipped, no fork() in WebAssembly\n");
    return;
#endif
    forker_executor = new_executor();
    CHECK_OK(uform_executor_for_n(forker_executor, NULL, 2, nothing, NULL)); /* granted to this thread */
    if (!barrier_ready) {
        CHECK_OK(uform_executor_free(forker_executor));
        return;
    }
    atomic_store(&fork_revoker_parked, 0);
    atomic_store(&forked, 0);
    atomic_store(&uform__test_bias_window, park_until_forked);
    pthread_t revoker;
    CHECK(pthread_create(&revoker, NULL, revoke_forkers_bias, NULL) == 0);
    wait_until(&fork_revoker_parked); /* counted into this thread's slot */
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        atomic_store(&uform__test_bias_window, NULL);
        alarm(20); /* a step-out waiting for the parent's revoker would hang: SIGALRM ends it */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
        _exit(0); /* no new threads in such a child under a sanitizer (see forked_child_answers_forked) */
#endif
        if (getenv("UFORM_TEST_EMULATOR")) _exit(0);
        uform_executor_t *fresh = NULL;
        if (uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &fresh) != UFORM_STATUS_OK) _exit(3);
        double until = seconds_now() + 10.0;
        int biased_calls = 0;
        while (biased_calls < 100 && seconds_now() < until) {
            if (uform_executor_for_n(fresh, NULL, 2, nothing, NULL) != UFORM_STATUS_OK) _exit(4);
            if (bias_of(fresh) == uform__bias_token_of_this_thread()) biased_calls++; /* next one steps out */
            else sleep_us(1000);
        }
        if (biased_calls < 100) _exit(5);
        if (uform_executor_free(fresh) != UFORM_STATUS_OK) _exit(6);
        _exit(0);
    }
    atomic_store(&forked, 1);
    void *status = NULL;
    pthread_join(revoker, &status);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_EQ_INT((uintptr_t)status, UFORM_STATUS_OK); /* the owner was outside: the word, free */
    int wait_status = 0;
    CHECK(waitpid(child, &wait_status, 0) == child);
    CHECK(WIFEXITED(wait_status));
    if (WIFSIGNALED(wait_status)) fprintf(stderr, "fork_while_bias_revoked: the child died of signal %d\n", WTERMSIG(wait_status));
    CHECK_EQ_INT(WEXITSTATUS(wait_status), 0);
    CHECK_OK(uform_executor_free(forker_executor));
}

static void forked_child_answers_forked(void) {
#ifdef __EMSCRIPTEN__
    printf("forked_child_answers_forked: skipped, no fork() in WebAssembly\n");
    return;
#endif
    uform_executor_t *executor = new_executor();
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL)); /* granted to this thread */
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        /* The same thread token in the child: the bias's way in must still answer FORKED. */
        uform_status_t status = uform_executor_for_n(executor, NULL, 2, nothing, NULL);
        if (status != UFORM_STATUS_FORKED) _exit(1);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
        /* No new threads in the child of a multi-threaded process under a sanitizer (TSan exits
         * 66; see test_executor_fork.c): the plain build runs the rest. */
        _exit(0);
#endif
        /* qemu-user cannot start a thread there either (test_executor_fork.c). */
        if (getenv("UFORM_TEST_EMULATOR")) _exit(0);
        /* A new executor in the child: the child is unregistered for the barrier until the new
         * executor's leader registers it, in the background; calls take the word until then,
         * and are granted after. */
        if (uform__process_barrier_known() != 0) _exit(2);
        uform_executor_t *fresh = NULL;
        if (uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &fresh) != UFORM_STATUS_OK) _exit(3);
        double until = seconds_now() + 10.0;
        bool granted = false;
        while (!granted && seconds_now() < until) {
            if (uform_executor_for_n(fresh, NULL, 2, nothing, NULL) != UFORM_STATUS_OK) _exit(4);
            granted = bias_of(fresh) == uform__bias_token_of_this_thread() && bias_of(fresh) > UFORM_BIAS_OFF;
            if (!granted) sleep_us(1000);
        }
        if (granted != barrier_ready) _exit(5);
        if (uform_executor_free(fresh) != UFORM_STATUS_OK) _exit(6);
        _exit(0);
    }
    int wait_status = 0;
    CHECK(waitpid(child, &wait_status, 0) == child);
    CHECK(WIFEXITED(wait_status));
    CHECK_EQ_INT(WEXITSTATUS(wait_status), 0);
    CHECK_OK(uform_executor_for_n(executor, NULL, 2, nothing, NULL)); /* the parent's is intact */
    CHECK_OK(uform_executor_free(executor));
}

/* Two revokers of different executors counted into one owner's slot at once (the owner holds both
 * biases): B's revoker parked after its count-in (where == 1) while A's revoker converts the
 * owner's running call of A, records it and counts out; then the owner leaves, between the two
 * count-outs. It must wait for B's revoker, give A's call back once, and find its count at 0
 * afterwards, its later step-outs free. The count is checked after each count-out: one that
 * cleared the count instead of taking its own unit off (a mutant tried) leaves 0 with B's revoker
 * still under way, and the owner leaves without waiting for it. */
static uform_executor_t *pair_a, *pair_b;
static _Thread_local bool parks_at_count_in = false, marks_step_out = false;
static _Atomic int pair_b_parked = 0, pair_b_go = 0, pair_owner_stepping_out = 0;

static void park_second_revoker(int where) {
    if (where == 4 && marks_step_out) { /* the owner's gated call, leaving: past its store of 0 */
        marks_step_out = false;
        atomic_store(&pair_owner_stepping_out, 1);
    }
    if (where != 1 || !parks_at_count_in) return;
    parks_at_count_in = false;
    atomic_store(&pair_b_parked, 1);
    double until = seconds_now() + 10.0;
    while (!atomic_load(&pair_b_go) && seconds_now() < until) sleep_us(100);
}

static void *revoke_b_parked(void *unused) {
    parks_at_count_in = true;
    return (void *)(uintptr_t)uform_executor_for_n(pair_b, NULL, 2, nothing, NULL);
}

typedef struct pair_owner_t {
    _Atomic int granted, left, go, done;
    uintptr_t token;
    uform_status_t status;
} pair_owner_t;

static void *own_both_and_call_a(void *argument) {
    pair_owner_t *owner = argument;
    for (int i = 0; i < 2; i++) /* granted at the first calls' releases */
        if (uform_executor_for_n(pair_a, NULL, 2, nothing, NULL) != UFORM_STATUS_OK ||
            uform_executor_for_n(pair_b, NULL, 2, nothing, NULL) != UFORM_STATUS_OK)
            return NULL;
    owner->token = uform__bias_token_of_this_thread();
    atomic_store(&owner->granted, owner->token && bias_of(pair_a) == owner->token && bias_of(pair_b) == owner->token);
    marks_step_out = true;
    owner->status = uform_executor_for_n(pair_a, NULL, 2, gated, NULL); /* inside until the gate opens */
    marks_step_out = false;
    atomic_store(&owner->left, 1);
    /* B's revoker's own call runs once it counted out: a call of ours beside it is CONTENDED. */
    double until = seconds_now() + 20.0;
    while (!atomic_load(&owner->go) && seconds_now() < until) sleep_us(100);
    for (int i = 0; i < 50 && owner->status == UFORM_STATUS_OK; i++) { /* each steps out of the slot again */
        uform_status_t a = uform_executor_for_n(pair_a, NULL, 2, nothing, NULL);
        uform_status_t b = uform_executor_for_n(pair_b, NULL, 2, nothing, NULL);
        if (a != UFORM_STATUS_OK || b != UFORM_STATUS_OK) {
            fprintf(stderr, "two_revokers_in_one_slot: call %d after: %s, %s (%s)\n", i, uform_status_name(a),
                    uform_status_name(b), uform_last_error());
            owner->status = a != UFORM_STATUS_OK ? a : b;
        }
    }
    atomic_store(&owner->done, 1);
    return NULL;
}

static void two_revokers_in_one_slot(void) {
    pair_a = new_executor();
    pair_b = new_executor();
    pair_owner_t owner = {0};
    pthread_t owner_thread, second;
    gate_init(&gate);
    atomic_store(&pair_b_parked, 0);
    atomic_store(&pair_b_go, 0);
    atomic_store(&pair_owner_stepping_out, 0);
    CHECK(pthread_create(&owner_thread, NULL, own_both_and_call_a, &owner) == 0);
    wait_arrived(&gate, 2);
    CHECK_EQ_INT(atomic_load(&owner.granted), barrier_ready);
    if (!barrier_ready) { /* nothing granted: no slot to count into */
        atomic_store(&owner.go, 1);
        gate_open(&gate);
        pthread_join(owner_thread, NULL);
        CHECK(atomic_load(&owner.done));
        CHECK_OK(uform_executor_free(pair_b));
        CHECK_OK(uform_executor_free(pair_a));
        return;
    }
    atomic_store(&uform__test_bias_window, park_second_revoker);
    CHECK(pthread_create(&second, NULL, revoke_b_parked, NULL) == 0);
    CHECK(waited(&pair_b_parked, 10.0)); /* B's revoker is counted into the owner's slot */
    CHECK_EQ_INT(uform__bias_slot_revoking(owner.token), 1);
    /* A's revoker: converts the owner's running call, records it, counts out. */
    CHECK_EQ_INT(uform_executor_for_n(pair_a, NULL, 2, nothing, NULL), UFORM_STATUS_CONTENDED);
    CHECK(hold_of(pair_a) & UFORM_HOLD_BIASED);
    CHECK_EQ_INT(uform__bias_slot_revoking(owner.token), 1); /* only its own unit came off */
    gate_open(&gate);
    CHECK(waited(&pair_owner_stepping_out, 10.0)); /* the owner has stored 0 and reads its count */
    sleep_us(50000);
    CHECK_EQ_INT(atomic_load(&owner.left), 0); /* it waits for B's revoker, still counted in */
    atomic_store(&pair_b_go, 1);
    void *second_status = NULL;
    pthread_join(second, &second_status);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_EQ_INT((uintptr_t)second_status, UFORM_STATUS_OK); /* the owner was outside B: revoked, not converted */
    atomic_store(&owner.go, 1);
    if (!waited(&owner.done, 10.0)) {
        fprintf(stderr, "two_revokers_in_one_slot: FAILED: the owner waits at a step-out for ever\n");
        fflush(NULL);
        _exit(1); /* its thread cannot be joined */
    }
    pthread_join(owner_thread, NULL);
    CHECK_OK(owner.status);
    CHECK_EQ_INT(uform__bias_slot_revoking(owner.token), 0);
    CHECK_EQ_INT(uform__bias_slot_inside(owner.token), 0);
    CHECK_EQ_INT(hold_of(pair_a), 0); /* A's converted call given back, once */
    CHECK_EQ_INT(hold_of(pair_b), 0);
    CHECK_OK(uform_executor_drain(pair_a, UFORM_MOOD_PARKED));
    CHECK_OK(uform_executor_free(pair_b));
    CHECK_OK(uform_executor_free(pair_a));
}

/* The owner's entry finds its bias revoked (its second read, where == 0, waits until a revoker
 * has converted the call it just stored) and steps out through the entry's own path; the
 * revoker's record comes late (where == 5 waits until the owner's store of 0, where == 4). The
 * owner must wait for the record there too and give the converted call back before it takes the
 * word: otherwise BIASED and its ENTERED unit stay in the word, and the drain never returns.
 * The entry and the leave step out through one function today; this holds the entry's path to
 * it should they ever part (a mutant stepping out there with a plain store fails it). */
static uform_executor_t *late_executor;
static _Thread_local bool late_owner = false;
static _Atomic int late_converted = 0, late_owner_stored = 0, late_converted_at_entry = 0;

static void late_record_at_entry(int where) {
    if (where == 0 && late_owner) {
        late_owner = false;
        wait_until(&late_converted); /* the revoker's CAS found us inside */
        /* Else the owner's call enters biased and is converted while it runs: the leave's path,
         * which owner_waits_for_revokers_record covers, not this one. */
        atomic_store(&late_converted_at_entry, atomic_load(&late_converted));
    } else if (where == 4 && atomic_load(&late_converted)) {
        atomic_store(&late_owner_stored, 1);
    } else if (where == 5) {
        atomic_store(&late_converted, 1);
        wait_until(&late_owner_stored);
        sleep_us(20000); /* the owner reads its count meanwhile, and waits */
    }
}

static void *late_owner_call(void *unused) {
    CHECK_OK(uform_executor_for_n(late_executor, NULL, 2, nothing, NULL)); /* granted */
    late_owner = true;
    return (void *)(uintptr_t)uform_executor_for_n(late_executor, NULL, 2, nothing, NULL);
}

static void *late_revoker_call(void *unused) {
    return (void *)(uintptr_t)uform_executor_for_n(late_executor, NULL, 2, nothing, NULL);
}

static void late_record_on_stepped_out_entry(void) {
    late_executor = new_executor();
    CHECK_OK(uform_executor_for_n(late_executor, NULL, 2, nothing, NULL));
    if (!barrier_ready) {
        CHECK_OK(uform_executor_free(late_executor));
        return;
    }
    atomic_store(&late_converted, 0);
    atomic_store(&late_owner_stored, 0);
    atomic_store(&late_converted_at_entry, 0);
    atomic_store(&drained, 0);
    /* Hand the bias to the owner's thread: this thread's own drain revokes it for free. */
    CHECK_OK(uform_executor_drain(late_executor, UFORM_MOOD_PARKED));
    atomic_store(&uform__test_bias_window, late_record_at_entry);
    pthread_t owner, revoker, drainer;
    CHECK(pthread_create(&owner, NULL, late_owner_call, NULL) == 0);
    /* The revoker starts once the owner is in its window: it has read `bias` as its own. */
    double until = seconds_now() + 10.0;
    while (!uform__bias_owner_inside(late_executor) && seconds_now() < until) sleep_us(100);
    CHECK(uform__bias_owner_inside(late_executor));
    CHECK(pthread_create(&revoker, NULL, late_revoker_call, NULL) == 0);
    void *owner_status = NULL, *revoker_status = NULL;
    pthread_join(revoker, &revoker_status);
    pthread_join(owner, &owner_status);
    atomic_store(&uform__test_bias_window, NULL);
    CHECK_EQ_INT(atomic_load(&late_converted_at_entry), 1); /* converted before the entry's second read */
    CHECK_EQ_INT(atomic_load(&late_owner_stored), 1);         /* the windows were crossed as meant */
    CHECK_EQ_INT((uintptr_t)revoker_status, UFORM_STATUS_CONTENDED); /* it found the owner inside */
    CHECK_EQ_INT((uintptr_t)owner_status, UFORM_STATUS_OK);         /* stepped out, then the word */
    CHECK(pthread_create(&drainer, NULL, drain_and_say, late_executor) == 0);
    drain_returned(drainer, "late_record_on_stepped_out_entry");
    CHECK_EQ_INT(hold_of(late_executor), 0);
    CHECK_OK(uform_executor_free(late_executor));
}

int main(void) {
    barrier_ready = uform__process_barrier_ready();
    if (!barrier_ready)
        printf("note: no process barrier here (membarrier missing): nothing may be granted, and the races run "
               "through the hold word alone\n");
    granted_and_kept();
    second_caller_while_owner_inside();
    for (int what = 0; what < 3; what++) party_waits_for_owner(what);
    party_at_owners_last_touch(true);
    party_at_owners_last_touch(false);
    callback_reentry_refused();
    entries_cross(getenv("UFORM_TEST_EMULATOR") ? 10 : 40);
    owner_enters_during_revocation();
    owner_steps_out_converted();
    owner_revokes_its_own();
    look_during_revocation();
    callback_calls_during_revocation();
    ended_owner_slot_reused();
    nested_across_biased_executors();
    fast_path_races_grant(false);
    fast_path_races_grant(true);
    revocations_turn_it_off();
    forked_child_answers_forked();
    free_after_owners_store();
    owner_waits_for_revokers_record();
    fork_while_bias_revoked();
    slot_reused_while_revoker_counted_in(false);
    slot_reused_while_revoker_counted_in(true);
    two_revokers_in_one_slot();
    late_record_on_stepped_out_entry();
    TEST_DONE();
}
