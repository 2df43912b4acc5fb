/* executor.h: every share with work gets an awake thread, so a barrier between tasks of
 * different slots ends, and a callback's failure stops a call the way a cancel does: each slot's
 * first task still starts. Three threads: slot 2's task fails at once, slots 0 and 1 wait for each
 * other, and worker 1 is held (the claim hook) until slot 2 has failed, as a worker that was
 * asleep or preempted would be. Slot 1's task must still start, or slot 0 waits forever. The
 * barrier gives up after 10 s so a hang fails the test instead of stalling it. Every verb,
 * synchronous and deferred. */
#include <stdatomic.h>
#include <time.h>

#include "executor/executor_internal.h"
#include "test.h"

static _Atomic int arrived, gave_up, ran, failed;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void hold_worker_one(size_t worker) {
    if (worker != 1) return;
    while (!atomic_load(&failed)) {
    }
    /* The failure is recorded once the failing task has returned: give that thread a moment. */
    struct timespec pause = {0, 20 * 1000000L};
    nanosleep(&pause, NULL);
}

static uform_status_t task(void *context, size_t index, size_t thread) {
    (void)context, (void)index;
    if (thread == 2) {
        atomic_store(&failed, 1);
        return UFORM_STATUS_IO_ERROR;
    }
    atomic_fetch_add(&arrived, 1);
    double end = now() + 10;
    while (atomic_load(&arrived) < 2)
        if (now() > end) {
            atomic_store(&gave_up, 1);
            break;
        }
    atomic_fetch_add(&ran, 1);
    return UFORM_STATUS_OK;
}

static uform_status_t slice(void *context, size_t first, size_t count, size_t thread) {
    (void)count;
    return task(context, first, thread);
}

typedef enum verb_t { FOR_N, FOR_N_DYNAMIC, FOR_THREADS, FOR_SLICES } verb_t;

static void one_call(uform_executor_t *executor, verb_t verb, bool deferred) {
    atomic_store(&arrived, 0);
    atomic_store(&gave_up, 0);
    atomic_store(&ran, 0);
    atomic_store(&failed, 0);
    uform_call_t call = UFORM_CALL_INIT;
    uform_deferred_t *handle = NULL;
    if (deferred) call.deferred = &handle;
    uform_status_t status = UFORM_STATUS_OK;
    switch (verb) {
    case FOR_N: status = uform_executor_for_n(executor, &call, 3, task, NULL); break;
    case FOR_N_DYNAMIC: status = uform_executor_for_n_dynamic(executor, &call, 3, task, NULL); break;
    case FOR_THREADS: status = uform_executor_for_threads(executor, &call, task, NULL); break;
    case FOR_SLICES: status = uform_executor_for_slices(executor, &call, 3, slice, NULL); break;
    }
    if (deferred) {
        CHECK_OK(status);
        status = uform_deferred_wait(handle, -1);
        uform_deferred_free(handle);
    }
    CHECK_EQ_INT(atomic_load(&gave_up), 0);
    CHECK_EQ_INT(atomic_load(&ran), 2);
    CHECK_STATUS(status, UFORM_STATUS_IO_ERROR); /* the call still answers the failure */
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 3, 0, &executor));
    atomic_store(&uform__test_before_claim, hold_worker_one);
    uform_mood_t moods[2] = {UFORM_MOOD_PARKED, UFORM_MOOD_SPINNING};
    for (int m = 0; m < 2; m++) {
        CHECK_OK(uform_executor_drain(executor, moods[m]));
        for (verb_t verb = FOR_N; verb <= FOR_SLICES; verb++) {
            one_call(executor, verb, false);
            one_call(executor, verb, true);
        }
    }
    atomic_store(&uform__test_before_claim, NULL);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
