/* uform_executor_free racing threads that are still inside the API: a synchronous call that
 * finishes while free waits (a deferred call queued behind it keeps the executor's own thread
 * busy), and every verb, drain, accessor and arena refused because free has begun. A test hook
 * (uform__test_before_leave) stalls the racing thread right before its last touch of the
 * executor; free must wait for it. Before free counted the threads in, ASan reported a
 * heap-use-after-free in the stalled thread and the "stalled thread finished first" check failed.
 * Also: deferred waits racing free, and a drain already waiting when free begins.
 * Runs under ASan and TSan in the suite. */
#include <time.h>

#include "executor/executor_internal.h"
#include "executor/executor_test_util.h"
#include "test.h"

#define STALL_MS 30

static gate_t gate;
static _Thread_local bool stall_me = false; /* only the racing thread is stalled */
static _Atomic int stalls_finished = 0;

static void stall_before_leave(void) {
    if (!stall_me) return;
    struct timespec pause = {0, STALL_MS * 1000000L};
    nanosleep(&pause, NULL);
    atomic_fetch_add(&stalls_finished, 1);
}

static uform_status_t gated(void *context, size_t task, size_t thread) {
    gate_pass(&gate);
    return UFORM_STATUS_OK;
}
static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }
static uform_status_t slice_nothing(void *context, size_t first, size_t count, size_t thread) {
    return UFORM_STATUS_OK;
}

typedef struct freer_t {
    uform_executor_t *executor;
    uform_status_t status;
    int stalls_seen_when_done; /* stalls finished at the moment free returned */
} freer_t;

static void *free_it(void *argument) {
    freer_t *freer = argument;
    freer->status = uform_executor_free(freer->executor);
    freer->stalls_seen_when_done = atomic_load(&stalls_finished);
    return NULL;
}

static void wait_closing(uform_executor_t *executor) {
    while (!(atomic_load(&executor->hold) & UFORM_HOLD_CLOSING)) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
}

/* ---- 1. a synchronous call finishing while free waits ---------------------------------------- */

static void *finishing_call(void *executor) {
    stall_me = true;
    uform_status_t status = uform_executor_for_n(executor, NULL, 2, gated, NULL);
    stall_me = false;
    return (void *)(uintptr_t)status;
}

static void finishing_call_races_free(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    gate_init(&gate);
    atomic_store(&stalls_finished, 0);
    pthread_t caller;
    CHECK(pthread_create(&caller, NULL, finishing_call, executor) == 0);
    wait_arrived(&gate, 2);
    /* A deferred call queued behind the running one: the leader waits for it, so does free. */
    uform_deferred_t *queued = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &queued;
    CHECK_OK(uform_executor_for_n(executor, &call, 4, nothing, NULL));

    freer_t freer = {executor, UFORM_STATUS_OK, -1};
    pthread_t freeing;
    CHECK(pthread_create(&freeing, NULL, free_it, &freer) == 0);
    wait_closing(executor);
    gate_open(&gate); /* the call finishes, then stalls right before it counts itself out */
    void *result = NULL;
    pthread_join(caller, &result);
    pthread_join(freeing, NULL);
    CHECK_EQ_INT((uintptr_t)result, UFORM_STATUS_OK);
    CHECK_OK(freer.status);
    CHECK_EQ_INT(freer.stalls_seen_when_done, 1); /* free returned only after the stalled thread left */
    CHECK_OK(uform_deferred_wait(queued, 0));     /* the queued call ran before the threads stopped */
    uform_deferred_free(queued);
}

/* ---- 2. every entry point refused while free waits ------------------------------------------- */

typedef enum action_t {
    ACT_FOR_N,
    ACT_FOR_N_DYNAMIC,
    ACT_FOR_THREADS,
    ACT_FOR_SLICES,
    ACT_DEFERRED,
    ACT_DRAIN,
    ACT_ARENA,
    ACT_ACCESSORS,
    ACT_COUNT
} action_t;

static const char *action_names[ACT_COUNT] = {"for_n",  "for_n_dynamic", "for_threads", "for_slices",
                                              "deferred", "drain",       "arena",       "accessors"};

typedef struct racer_t {
    uform_executor_t *executor;
    action_t action;
    uform_status_t status;
    char error[256];
} racer_t;

static void *race(void *argument) {
    racer_t *racer = argument;
    uform_executor_t *executor = racer->executor;
    stall_me = true;
    uform_call_t call = UFORM_CALL_INIT;
    uform_deferred_t *handle = NULL;
    uform_arena_t *arena = NULL;
    switch (racer->action) {
    case ACT_FOR_N: racer->status = uform_executor_for_n(executor, NULL, 8, nothing, NULL); break;
    case ACT_FOR_N_DYNAMIC: racer->status = uform_executor_for_n_dynamic(executor, NULL, 8, nothing, NULL); break;
    case ACT_FOR_THREADS: racer->status = uform_executor_for_threads(executor, NULL, nothing, NULL); break;
    case ACT_FOR_SLICES: racer->status = uform_executor_for_slices(executor, NULL, 8, slice_nothing, NULL); break;
    case ACT_DEFERRED:
        call.deferred = &handle;
        racer->status = uform_executor_for_n(executor, &call, 8, nothing, NULL);
        if (handle) uform_deferred_free(handle);
        break;
    case ACT_DRAIN: racer->status = uform_executor_drain(executor, UFORM_MOOD_PARKED); break;
    case ACT_ARENA:
        racer->status = uform_arena_new_in(executor, 4096, &arena);
        uform_arena_free(arena);
        break;
    case ACT_ACCESSORS:
        /* Accessors are not refused (they read what creation fixed), but count in all the same.
         * One call only: a second one, begun after the first let free finish, would be the
         * caller's own use after free. */
        racer->status = uform_executor_threads(executor) == 2 ? UFORM_STATUS_OK : UFORM_STATUS_MISMATCH;
        break;
    case ACT_COUNT: break;
    }
    stall_me = false;
    snprintf(racer->error, sizeof racer->error, "%s", uform_last_error());
    return NULL;
}

static void entry_races_free(action_t action) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    gate_init(&gate);
    atomic_store(&stalls_finished, 0);
    uform_deferred_t *running = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &running;
    CHECK_OK(uform_executor_for_n(executor, &call, 2, gated, NULL));
    wait_arrived(&gate, 2);

    freer_t freer = {executor, UFORM_STATUS_OK, -1};
    pthread_t freeing;
    CHECK(pthread_create(&freeing, NULL, free_it, &freer) == 0);
    wait_closing(executor);
    racer_t racer = {executor, action, UFORM_STATUS_OK, ""};
    pthread_t racing;
    CHECK(pthread_create(&racing, NULL, race, &racer) == 0);
    /* Let the racer be refused and stall; the running call ends meanwhile, so free would be
     * free to release the executor if it did not count the racer. */
    while (atomic_load(&executor->hold) / UFORM_HOLD_ENTERED < 2 && atomic_load(&stalls_finished) == 0) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    gate_open(&gate);
    pthread_join(racing, NULL);
    pthread_join(freeing, NULL);
    bool refused = racer.status == UFORM_STATUS_INVALID_ARGUMENT && strstr(racer.error, "being freed");
    if (action == ACT_ACCESSORS ? racer.status != UFORM_STATUS_OK : !refused)
        TEST_FAIL_("%s racing free: got %s (%s), expected %s", action_names[action],
                   uform_status_name(racer.status), racer.error,
                   action == ACT_ACCESSORS ? "OK" : "INVALID_ARGUMENT naming the free");
    CHECK_OK(freer.status);
    if (freer.stalls_seen_when_done < 1)
        TEST_FAIL_("%s racing free: free returned while the refused thread was still inside the API",
                   action_names[action]);
    CHECK_OK(uform_deferred_wait(running, 0));
    uform_deferred_free(running);
}

/* ---- 3. deferred waits racing free ---------------------------------------------------------- */

static void *wait_on(void *handle) { return (void *)(uintptr_t)uform_deferred_wait(handle, -1); }

static void deferred_wait_races_free(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    gate_init(&gate);
    uform_deferred_t *running = NULL, *queued = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &running;
    CHECK_OK(uform_executor_for_n(executor, &call, 2, gated, NULL));
    call.deferred = &queued;
    CHECK_OK(uform_executor_for_n(executor, &call, 4, nothing, NULL));
    wait_arrived(&gate, 2);
    pthread_t waiters[2];
    CHECK(pthread_create(&waiters[0], NULL, wait_on, running) == 0);
    CHECK(pthread_create(&waiters[1], NULL, wait_on, queued) == 0);
    freer_t freer = {executor, UFORM_STATUS_OK, -1};
    pthread_t freeing;
    CHECK(pthread_create(&freeing, NULL, free_it, &freer) == 0);
    wait_closing(executor);
    gate_open(&gate);
    for (int i = 0; i < 2; i++) {
        void *result = NULL;
        pthread_join(waiters[i], &result);
        CHECK_EQ_INT((uintptr_t)result, UFORM_STATUS_OK);
    }
    pthread_join(freeing, NULL);
    CHECK_OK(freer.status);
    /* The handles outlive the executor and still answer. */
    CHECK_OK(uform_deferred_wait(running, 0));
    CHECK_OK(uform_deferred_poll(queued));
    uform_deferred_free(running);
    uform_deferred_free(queued);
}

/* ---- 4. a drain already waiting when free begins ------------------------------------------ */

static void *drain_it(void *executor) {
    stall_me = true; /* stalled again right before it counts itself out */
    uform_status_t status = uform_executor_drain(executor, UFORM_MOOD_SPINNING);
    stall_me = false;
    return (void *)(uintptr_t)status;
}

static void waiting_drain_races_free(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    gate_init(&gate);
    atomic_store(&stalls_finished, 0);
    uform_deferred_t *running = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &running;
    CHECK_OK(uform_executor_for_n(executor, &call, 2, gated, NULL));
    wait_arrived(&gate, 2);
    pthread_t draining;
    CHECK(pthread_create(&draining, NULL, drain_it, executor) == 0);
    while (atomic_load(&executor->hold) / UFORM_HOLD_ENTERED < 1) { /* the drain is counted in, waiting */
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    freer_t freer = {executor, UFORM_STATUS_OK, -1};
    pthread_t freeing;
    CHECK(pthread_create(&freeing, NULL, free_it, &freer) == 0);
    wait_closing(executor);
    gate_open(&gate);
    void *result = NULL;
    pthread_join(draining, &result);
    pthread_join(freeing, NULL);
    CHECK_EQ_INT((uintptr_t)result, UFORM_STATUS_OK); /* it began before free: it finishes */
    CHECK_OK(freer.status);
    CHECK_EQ_INT(freer.stalls_seen_when_done, 1); /* free returned after the drain left */
    CHECK_OK(uform_deferred_wait(running, 0));
    uform_deferred_free(running);
}

int main(void) {
    uform__test_before_leave = stall_before_leave;
    for (int round = 0; round < 3; round++) finishing_call_races_free();
    for (int action = 0; action < ACT_COUNT; action++) entry_races_free((action_t)action);
    deferred_wait_races_free();
    for (int round = 0; round < 3; round++) waiting_drain_races_free();
    uform__test_before_leave = NULL;
    TEST_DONE();
}
