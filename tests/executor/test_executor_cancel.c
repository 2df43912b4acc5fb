/* Cancelling calls: a flag in uform_call_t (set from another thread, from a signal handler, or
 * before the call) and uform_deferred_cancel. Tasks not yet started never start, running ones
 * finish, the call answers INTERRUPTED, progress says what ran, and the executor stays usable.
 * Also: the first failing callback's message survives (a refused re-entry keeps its reason). */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>

#include "executor/executor_internal.h"
#include "executor/executor_test_util.h"
#include "test.h"

enum { MANY = 200000 };

static _Atomic size_t ran;
static volatile int flag; /* the caller's cancel flag: written atomically, as a handler would */

static void set_flag(void) { __atomic_store_n(&flag, 1, __ATOMIC_RELAXED); }

static void busy(unsigned microseconds) {
    double end = seconds_now() + microseconds * 1e-6;
    while (seconds_now() < end) {
    }
}

static uform_status_t slow_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    busy(5);
    atomic_fetch_add(&ran, 1);
    return UFORM_STATUS_OK;
}
static uform_status_t slow_slice(void *context, size_t first, size_t count, size_t thread) {
    (void)context, (void)first, (void)thread;
    atomic_fetch_add(&ran, count);
    return UFORM_STATUS_OK;
}
static uform_status_t count_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    atomic_fetch_add(&ran, 1);
    return UFORM_STATUS_OK;
}

/* Progress as the caller saw it: the last report. */
static _Atomic size_t last_done, last_total;
static void on_progress(void *context, size_t done, size_t total) {
    (void)context;
    atomic_store(&last_done, done);
    atomic_store(&last_total, total);
}

static void reset(void) {
    atomic_store(&ran, 0);
    atomic_store(&last_done, 0);
    __atomic_store_n(&flag, 0, __ATOMIC_RELAXED);
}

/* ---- a canceller thread: sets the flag, or signals the caller, once enough tasks ran ------- */

typedef struct canceller_t {
    size_t after;      /* tasks run before it acts */
    pthread_t target;  /* the thread to signal, when `signal` */
    int signal;        /* 0: set the flag directly */
    uform_deferred_t *deferred; /* non-NULL: uform_deferred_cancel instead */
    uform_status_t status;
} canceller_t;

static void *canceller_main(void *argument) {
    canceller_t *canceller = argument;
    while (atomic_load(&ran) < canceller->after) busy(1);
    if (canceller->deferred)
        canceller->status = uform_deferred_cancel(canceller->deferred);
    else if (canceller->signal)
        pthread_kill(canceller->target, canceller->signal);
    else
        set_flag();
    return NULL;
}

static void on_signal(int number) {
    (void)number;
    set_flag(); /* all a handler may do: an int store */
}

typedef enum verb_t { FOR_N, FOR_N_DYNAMIC, FOR_THREADS, FOR_SLICES } verb_t;

static uform_status_t call_verb(uform_executor_t *executor, const uform_call_t *call, verb_t verb, size_t n) {
    switch (verb) {
    case FOR_N: return uform_executor_for_n(executor, call, n, slow_task, NULL);
    case FOR_N_DYNAMIC: return uform_executor_for_n_dynamic(executor, call, n, slow_task, NULL);
    case FOR_THREADS: return uform_executor_for_threads(executor, call, slow_task, NULL);
    case FOR_SLICES: return uform_executor_for_slices(executor, call, n, slow_slice, NULL);
    }
    return UFORM_STATUS_INVALID_ARGUMENT;
}

/* Every verb, synchronous and deferred, on an executor and on NULL: a flag set before the call
 * runs nothing and answers INTERRUPTED with progress 0. */
static void cancel_before_start(uform_executor_t *executor) {
    for (int target = 0; target < 2; target++)
        for (verb_t verb = FOR_N; verb <= FOR_SLICES; verb++) {
            uform_executor_t *on = target ? executor : NULL;
            reset();
            set_flag();
            uform_call_t call = UFORM_CALL_INIT;
            call.cancel = &flag;
            call.progress = on_progress;
            CHECK_STATUS(call_verb(on, &call, verb, 1000), UFORM_STATUS_INTERRUPTED);
            CHECK_ERROR_NAMES("cancelled");
            CHECK_EQ_INT(atomic_load(&ran), 0);
            CHECK_EQ_INT(atomic_load(&last_done), 0);

            uform_deferred_t *deferred = NULL;
            call.deferred = &deferred;
            CHECK_OK(call_verb(on, &call, verb, 1000));
            CHECK_STATUS(uform_deferred_wait(deferred, -1), UFORM_STATUS_INTERRUPTED);
            CHECK_ERROR_NAMES("cancelled");
            size_t done = 1;
            CHECK_OK(uform_deferred_progress(deferred, &done, NULL));
            CHECK_EQ_INT(done, 0);
            CHECK_EQ_INT(atomic_load(&ran), 0);
            uform_deferred_free(deferred);
        }
    /* Zero tasks: still the cancel's answer. */
    set_flag();
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    CHECK_STATUS(uform_executor_for_n(executor, &call, 0, slow_task, NULL), UFORM_STATUS_INTERRUPTED);
    reset();
}

/* The flag set mid-call, by another thread or by a task: the call stops early, progress (the
 * last report, and the deferred handle's) equals the tasks that ran. */
static void cancel_mid_call(uform_executor_t *executor, verb_t verb, bool deferred_call) {
    reset();
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    call.progress = on_progress;
    uform_deferred_t *deferred = NULL;
    if (deferred_call) call.deferred = &deferred;
    canceller_t canceller = {.after = 100};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, canceller_main, &canceller) == 0);
    uform_status_t status = call_verb(executor, &call, verb, MANY);
    if (deferred_call) {
        CHECK_OK(status);
        status = uform_deferred_wait(deferred, -1);
    }
    CHECK_STATUS(status, UFORM_STATUS_INTERRUPTED);
    CHECK_ERROR_NAMES("cancelled");
    pthread_join(thread, NULL);
    size_t count = atomic_load(&ran);
    CHECK(count >= 100);
    CHECK(count < MANY);
    CHECK_EQ_INT(atomic_load(&last_done), count);
    CHECK_EQ_INT(atomic_load(&last_total), MANY);
    if (deferred_call) {
        size_t done = 0, total = 0;
        CHECK_OK(uform_deferred_progress(deferred, &done, &total));
        CHECK_EQ_INT(done, count);
        CHECK_EQ_INT(total, MANY);
        uform_deferred_free(deferred);
    }
    /* Usable afterwards: every task of the next call runs. */
    reset();
    CHECK_OK(uform_executor_for_n(executor, NULL, 1000, count_task, NULL));
    CHECK_EQ_INT(atomic_load(&ran), 1000);
}

/* A signal into the calling thread while it runs share 0 or waits for the workers (not in a
 * WebAssembly build: see main). */
#if !defined(__EMSCRIPTEN__)
static void cancel_from_signal(uform_executor_t *executor, int number) {
    reset();
    struct sigaction action = {0};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    CHECK(sigaction(number, &action, NULL) == 0);
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    canceller_t canceller = {.after = 100, .target = pthread_self(), .signal = number};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, canceller_main, &canceller) == 0);
    CHECK_STATUS(uform_executor_for_n_dynamic(executor, &call, MANY, slow_task, NULL), UFORM_STATUS_INTERRUPTED);
    pthread_join(thread, NULL);
    CHECK(atomic_load(&ran) < MANY);
    signal(number, SIG_DFL);
}
#endif

/* raise() from a task that runs on the calling thread (thread 0 of the static split). */
static uform_status_t raising_task(void *context, size_t task, size_t thread) {
    (void)context;
    if (thread == 0 && task == 10) raise(SIGALRM);
    return slow_task(NULL, task, thread);
}

static void cancel_from_raise(uform_executor_t *executor) {
    reset();
    struct sigaction action = {0};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    CHECK(sigaction(SIGALRM, &action, NULL) == 0);
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    call.progress = on_progress;
    CHECK_STATUS(uform_executor_for_n(executor, &call, MANY, raising_task, NULL), UFORM_STATUS_INTERRUPTED);
    size_t count = atomic_load(&ran);
    CHECK(count >= 11);
    CHECK(count < MANY);
    CHECK_EQ_INT(atomic_load(&last_done), count);
    signal(SIGALRM, SIG_DFL);
}

/* ---- deferred handles -------------------------------------------------------------------- */

static gate_t gate;
static uform_status_t gated_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    gate_pass(&gate);
    return UFORM_STATUS_OK;
}

static _Atomic size_t queued_ran;
static uform_status_t queued_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    atomic_fetch_add(&queued_ran, 1);
    return UFORM_STATUS_OK;
}

/* A call queued behind a blocked one is cancelled: it ends at once, INTERRUPTED, progress 0,
 * and never runs; the blocked one is unaffected. */
static void cancel_queued(uform_executor_t *executor) {
    gate_init(&gate);
    atomic_store(&queued_ran, 0);
    uform_deferred_t *blocked = NULL, *queued = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &blocked;
    CHECK_OK(uform_executor_for_threads(executor, &call, gated_task, NULL));
    wait_arrived(&gate, 1);
    call.deferred = &queued;
    CHECK_OK(uform_executor_for_n(executor, &call, 100, queued_task, NULL));
    CHECK_STATUS(uform_deferred_poll(queued), UFORM_STATUS_TIMEOUT);
    CHECK_OK(uform_deferred_cancel(queued));
    CHECK_OK(uform_deferred_poll(queued)); /* finished by the cancel, while the first still runs */
    CHECK_STATUS(uform_deferred_poll(blocked), UFORM_STATUS_TIMEOUT);
    CHECK_STATUS(uform_deferred_wait(queued, -1), UFORM_STATUS_INTERRUPTED);
    CHECK_ERROR_NAMES("cancelled before it started");
    size_t done = 1;
    CHECK_OK(uform_deferred_progress(queued, &done, NULL));
    CHECK_EQ_INT(done, 0);
    CHECK_OK(uform_deferred_cancel(queued)); /* again: nothing changes */
    gate_open(&gate);
    CHECK_OK(uform_deferred_wait(blocked, -1));
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    CHECK_EQ_INT(atomic_load(&queued_ran), 0);
    uform_deferred_free(blocked);
    uform_deferred_free(queued);
}

/* Cancelling a running deferred call from another thread mid-way. */
static void cancel_running_deferred(uform_executor_t *executor) {
    reset();
    uform_deferred_t *deferred = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &deferred;
    CHECK_OK(uform_executor_for_n_dynamic(executor, &call, MANY, slow_task, NULL));
    canceller_t canceller = {.after = 100, .deferred = deferred};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, canceller_main, &canceller) == 0);
    pthread_join(thread, NULL);
    CHECK_OK(canceller.status);
    CHECK_STATUS(uform_deferred_wait(deferred, -1), UFORM_STATUS_INTERRUPTED);
    size_t done = 0;
    CHECK_OK(uform_deferred_progress(deferred, &done, NULL));
    CHECK_EQ_INT(done, atomic_load(&ran));
    CHECK(done < MANY);
    uform_deferred_free(deferred);
}

static uform_status_t fail_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    return UFORM_STATUS_CALLBACK_FAILED;
}

/* After the call finished, a cancel changes nothing: its own status stands. */
static void cancel_after_finish(uform_executor_t *executor) {
    uform_deferred_t *ok = NULL, *failed = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &ok;
    CHECK_OK(uform_executor_for_n(executor, &call, 100, count_task, NULL));
    CHECK_OK(uform_deferred_wait(ok, -1));
    CHECK_OK(uform_deferred_cancel(ok));
    CHECK_OK(uform_deferred_wait(ok, -1));
    call.deferred = &failed;
    CHECK_OK(uform_executor_for_n(executor, &call, 100, fail_task, NULL));
    CHECK_STATUS(uform_deferred_wait(failed, -1), UFORM_STATUS_CALLBACK_FAILED);
    CHECK_OK(uform_deferred_cancel(failed));
    CHECK_STATUS(uform_deferred_wait(failed, -1), UFORM_STATUS_CALLBACK_FAILED);
    uform_deferred_free(ok);
    uform_deferred_free(failed);
    CHECK_STATUS(uform_deferred_cancel(NULL), UFORM_STATUS_INVALID_ARGUMENT);
}

/* A cancel racing the leader taking the call: either it never ran (INTERRUPTED, progress 0),
 * or it ran and stopped (INTERRUPTED, progress == tasks run), or it finished whole (OK). */
static void cancel_racing_start(uform_executor_t *executor) {
    for (int round = 0; round < 300; round++) {
        atomic_store(&queued_ran, 0);
        uform_deferred_t *deferred = NULL;
        uform_call_t call = UFORM_CALL_INIT;
        call.deferred = &deferred;
        CHECK_OK(uform_executor_for_n_dynamic(executor, &call, 64, queued_task, NULL));
        if (round & 1) sched_yield();
        CHECK_OK(uform_deferred_cancel(deferred));
        uform_status_t status = uform_deferred_wait(deferred, -1);
        size_t done = 0;
        CHECK_OK(uform_deferred_progress(deferred, &done, NULL));
        if (status == UFORM_STATUS_OK)
            CHECK_EQ_INT(done, 64);
        else
            CHECK_STATUS(status, UFORM_STATUS_INTERRUPTED);
        CHECK_EQ_INT(done, atomic_load(&queued_ran));
        uform_deferred_free(deferred);
    }
}

/* Calls cancelled while queued behind a long one are finished: they give their slot back at
 * once, so submitting and cancelling over and over behind it never fills the table (4 slots
 * here). The calls queued after them still run, in order, and drain sees them all. */
static _Atomic size_t order_seen[3];
static _Atomic size_t order_next;
static uform_status_t ordered_task(void *context, size_t task, size_t thread) {
    (void)task, (void)thread;
    if (task == 0) atomic_store(&order_seen[(size_t)context], atomic_fetch_add(&order_next, 1));
    atomic_fetch_add(&queued_ran, 1);
    return UFORM_STATUS_OK;
}
static void cancelled_calls_free_their_slots(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 4, &executor));
    gate_init(&gate);
    atomic_store(&queued_ran, 0);
    atomic_store(&order_next, 0);
    uform_deferred_t *blocked = NULL, *before = NULL, *after[2] = {0};
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &blocked;
    CHECK_OK(uform_executor_for_threads(executor, &call, gated_task, NULL));
    wait_arrived(&gate, 1);
    call.deferred = &before;
    CHECK_OK(uform_executor_for_n(executor, &call, 10, ordered_task, (void *)0));
    for (int round = 0; round < 20; round++) {
        uform_deferred_t *cancelled = NULL;
        call.deferred = &cancelled;
        CHECK_OK(uform_executor_for_n(executor, &call, 10, queued_task, NULL));
        CHECK_OK(uform_deferred_cancel(cancelled));
        CHECK_STATUS(uform_deferred_wait(cancelled, -1), UFORM_STATUS_INTERRUPTED);
        uform_deferred_free(cancelled);
    }
    for (size_t i = 0; i < 2; i++) {
        call.deferred = &after[i];
        CHECK_OK(uform_executor_for_n(executor, &call, 10, ordered_task, (void *)(i + 1)));
    }
    gate_open(&gate);
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    CHECK_OK(uform_deferred_poll(before));
    for (size_t i = 0; i < 2; i++) CHECK_OK(uform_deferred_poll(after[i]));
    CHECK_EQ_INT(atomic_load(&queued_ran), 30); /* before, after[0], after[1]; no cancelled one */
    for (size_t i = 0; i < 3; i++) CHECK_EQ_INT(atomic_load(&order_seen[i]), i);
    CHECK_OK(uform_deferred_wait(blocked, -1));
    uform_deferred_free(blocked);
    uform_deferred_free(before);
    for (size_t i = 0; i < 2; i++) uform_deferred_free(after[i]);
    CHECK_OK(uform_executor_free(executor));
}

/* Free with calls queued: they would run; cancelled while free waits, they end without
 * running, and free returns once the running one is done. The leave hook slows every thread
 * leaving the API, widening the window between free's wait and the cancels. */
static void slow_leave(void) { busy(50); }

typedef struct freer_t {
    uform_executor_t *executor;
    uform_status_t status;
} freer_t;
static void *freer_main(void *argument) {
    freer_t *freer = argument;
    freer->status = uform_executor_free(freer->executor);
    return NULL;
}

static void cancel_racing_free(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    gate_init(&gate);
    atomic_store(&queued_ran, 0);
    enum { QUEUED = 8 };
    uform_deferred_t *blocked = NULL, *queued[QUEUED] = {0};
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &blocked;
    CHECK_OK(uform_executor_for_threads(executor, &call, gated_task, NULL));
    wait_arrived(&gate, 1);
    for (int i = 0; i < QUEUED; i++) {
        call.deferred = &queued[i];
        CHECK_OK(uform_executor_for_n(executor, &call, 10, queued_task, NULL));
    }
    atomic_store(&uform__test_before_leave, slow_leave);
    freer_t freer = {executor, UFORM_STATUS_INVALID_ARGUMENT};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, freer_main, &freer) == 0);
    while (!(atomic_load(&executor->hold) & UFORM_HOLD_CLOSING)) busy(10); /* free has begun */
    for (int i = 0; i < QUEUED; i++) CHECK_OK(uform_deferred_cancel(queued[i]));
    gate_open(&gate);
    pthread_join(thread, NULL);
    atomic_store(&uform__test_before_leave, NULL);
    CHECK_OK(freer.status);
    CHECK_OK(uform_deferred_wait(blocked, -1));
    for (int i = 0; i < QUEUED; i++) {
        CHECK_STATUS(uform_deferred_wait(queued[i], -1), UFORM_STATUS_INTERRUPTED);
        uform_deferred_free(queued[i]);
    }
    CHECK_EQ_INT(atomic_load(&queued_ran), 0);
    uform_deferred_free(blocked);
}

/* ---- tasks that wait for each other ------------------------------------------------------ */

/* executor.h: every share with work gets an awake thread, so a barrier between tasks of
 * different slots ends. A cancel must keep that: thread 0's task cancels and then waits for
 * thread 1's, while thread 1 is held (the claim hook) until the cancel is set. Thread 1's task
 * must still start (a task of a call that has begun); a share past its first task stops. The
 * barrier gives up after 10 s so a hang fails the test instead of stalling it. */
static _Atomic int barrier_arrived, barrier_gave_up;
static _Atomic int hold_worker; /* the claim hook waits while this is set */
static void hold_claim(size_t worker) {
    (void)worker;
    while (atomic_load(&hold_worker)) busy(10);
}
static void barrier_wait(int parties) {
    atomic_fetch_add(&barrier_arrived, 1);
    double end = seconds_now() + 10;
    while (atomic_load(&barrier_arrived) < parties)
        if (seconds_now() > end) {
            atomic_store(&barrier_gave_up, 1);
            return;
        }
}
static uform_status_t barrier_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task;
    if (thread == 0) {
        set_flag();
        atomic_store(&hold_worker, 0);
    }
    barrier_wait(2);
    atomic_fetch_add(&ran, 1);
    return UFORM_STATUS_OK;
}
static uform_status_t barrier_slice(void *context, size_t first, size_t count, size_t thread) {
    (void)count;
    return barrier_task(context, first, thread);
}

static void cancel_keeps_barriers(uform_executor_t *executor, verb_t verb, bool deferred_call) {
    reset();
    atomic_store(&barrier_arrived, 0);
    atomic_store(&barrier_gave_up, 0);
    atomic_store(&hold_worker, 1);
    atomic_store(&uform__test_before_claim, hold_claim);
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    uform_deferred_t *deferred = NULL;
    if (deferred_call) call.deferred = &deferred;
    uform_status_t status = UFORM_STATUS_INVALID_ARGUMENT;
    switch (verb) {
    case FOR_N: status = uform_executor_for_n(executor, &call, 2, barrier_task, NULL); break;
    case FOR_N_DYNAMIC: status = uform_executor_for_n_dynamic(executor, &call, 2, barrier_task, NULL); break;
    case FOR_THREADS: status = uform_executor_for_threads(executor, &call, barrier_task, NULL); break;
    case FOR_SLICES: status = uform_executor_for_slices(executor, &call, 2, barrier_slice, NULL); break;
    }
    if (deferred_call) {
        CHECK_OK(status);
        status = uform_deferred_wait(deferred, -1);
        uform_deferred_free(deferred);
    }
    atomic_store(&uform__test_before_claim, NULL);
    atomic_store(&hold_worker, 0);
    CHECK_EQ_INT(atomic_load(&barrier_gave_up), 0);
    CHECK_EQ_INT(atomic_load(&ran), 2);
    /* Every task ran; the answer still says a cancel came (or OK: nothing was left to skip). */
    CHECK(status == UFORM_STATUS_OK || status == UFORM_STATUS_INTERRUPTED);
    reset();
}

/* Once the call has begun, a share's later tasks still stop: 2 threads, 4 static tasks, the
 * flag set by thread 0's first task while thread 1 is held: thread 1 runs its first task only. */
static uform_status_t first_cancels(void *context, size_t task, size_t thread) {
    (void)context, (void)task;
    if (thread == 0) {
        set_flag();
        atomic_store(&hold_worker, 0);
    }
    atomic_fetch_add(&ran, 1);
    return UFORM_STATUS_OK;
}
static void cancel_after_begin_stops_later_tasks(uform_executor_t *executor) {
    reset();
    atomic_store(&hold_worker, 1);
    atomic_store(&uform__test_before_claim, hold_claim);
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    CHECK_STATUS(uform_executor_for_n(executor, &call, 4, first_cancels, NULL), UFORM_STATUS_INTERRUPTED);
    atomic_store(&uform__test_before_claim, NULL);
    atomic_store(&hold_worker, 0);
    CHECK_EQ_INT(atomic_load(&ran), 2); /* task 0 (thread 0) and task 2 (thread 1's first) */
    reset();
}

/* ---- the old layout, and messages ------------------------------------------------------ */

static void old_layout(uform_executor_t *executor) {
    reset();
    uform_call_t call = UFORM_CALL_INIT;
    call.struct_size = offsetof(uform_call_t, cancel);
    call.cancel = &flag;
    set_flag(); /* beyond the old layout: never read */
    CHECK_OK(uform_executor_for_n(executor, &call, 100, count_task, NULL));
    CHECK_EQ_INT(atomic_load(&ran), 100);
    reset();
}

static uform_executor_t *reentered;
static uform_status_t reenter_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    return uform_executor_for_n(reentered, NULL, 1, count_task, NULL);
}

/* A callback returning a refused re-entry's status: the call's message keeps its reason. */
static void reentry_keeps_reason(uform_executor_t *executor) {
    reentered = executor;
    CHECK_STATUS(uform_executor_for_threads(executor, NULL, reenter_task, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("a callback returned INVALID_ARGUMENT");
    CHECK_ERROR_NAMES("called from inside one of this executor's own callbacks");
    CHECK_STATUS(uform_executor_for_n_dynamic(executor, NULL, 1000, reenter_task, NULL),
                 UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("called from inside one of this executor's own callbacks");
    uform_deferred_t *deferred = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &deferred;
    CHECK_OK(uform_executor_for_threads(executor, &call, reenter_task, NULL));
    CHECK_STATUS(uform_deferred_wait(deferred, -1), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("called from inside one of this executor's own callbacks");
    uform_deferred_free(deferred);
    /* A callback failing without a message of its own: no stale words are borrowed. */
    CHECK_STATUS(uform_executor_for_threads(executor, NULL, fail_task, NULL), UFORM_STATUS_CALLBACK_FAILED);
    CHECK_EQ_STR(uform_last_error(), "uform_executor_for_threads: a callback returned CALLBACK_FAILED");
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));

    cancel_before_start(executor);
    for (verb_t verb = FOR_N; verb <= FOR_N_DYNAMIC; verb++) {
        cancel_mid_call(executor, verb, false);
        cancel_mid_call(executor, verb, true);
    }
    /* The NULL executor runs the call on the calling thread: the flag is read after its tasks. */
    cancel_mid_call(NULL, FOR_N, false);
    cancel_mid_call(NULL, FOR_N_DYNAMIC, false);
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING));
    cancel_mid_call(executor, FOR_N_DYNAMIC, false); /* the SPINNING caller never sleeps */
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
#if defined(__EMSCRIPTEN__)
    /* Emscripten's pthread_kill (library_pthread.js) delivers no signal to a thread: any number
     * but 0 and its own cancel signal terminates the target's Web Worker, so the calling thread
     * would never come back from the call. raise() does run the handler (cancel_from_raise). */
    printf("cancel_from_signal: skipped, Emscripten's pthread_kill terminates the target thread "
           "instead of delivering the signal\n");
#else
    cancel_from_signal(executor, SIGALRM);
    cancel_from_signal(executor, SIGINT);
#endif
    cancel_from_raise(executor);
    cancel_queued(executor);
    cancel_running_deferred(executor);
    cancel_after_finish(executor);
    cancel_racing_start(executor);
    for (verb_t verb = FOR_N; verb <= FOR_SLICES; verb++) {
        cancel_keeps_barriers(executor, verb, false);
        cancel_keeps_barriers(executor, verb, true);
    }
    cancel_after_begin_stops_later_tasks(executor);
    old_layout(executor);
    reentry_keeps_reason(executor);
    CHECK_OK(uform_executor_free(executor));

    cancel_racing_free();
    cancelled_calls_free_their_slots();
    TEST_DONE();
}
