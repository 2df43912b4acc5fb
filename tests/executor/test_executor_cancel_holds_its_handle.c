/* uform_deferred_cancel while the handle's other owners let go: the canceller must hold the
 * handle until it is done with it. A queued call is cancelled on another thread, which a hook
 * stops right after it moved the call to CANCELLED; meanwhile the owner frees the handle from a
 * callback of the executor (allowed: that does not wait) and the leader drops the cancelled
 * slot. Both references are then gone, and the canceller, resumed, finishes the handle: without
 * a reference of its own it writes to freed memory (ASan reports it; this test runs there). */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "executor/executor_internal.h"
#include "executor/executor_test_util.h"
#include "test.h"

static gate_t blocker_gate;
static uform_deferred_t *_Atomic queued_handle;
static _Atomic int in_hook, resume, queued_ran;

static void pause_after_cancel_claim(void) {
    atomic_store(&in_hook, 1);
    while (!atomic_load(&resume)) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
}

/* The call ahead: waits for the gate, then frees the queued call's handle, as its owner. */
static uform_status_t blocker(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    gate_pass(&blocker_gate);
    uform_deferred_free(atomic_load(&queued_handle));
    return UFORM_STATUS_OK;
}

static uform_status_t must_not_run(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    atomic_fetch_add(&queued_ran, 1);
    return UFORM_STATUS_OK;
}

static void *cancel_it(void *argument) {
    (void)argument;
    return (void *)(intptr_t)uform_deferred_cancel(atomic_load(&queued_handle));
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    for (int round = 0; round < 3; round++) {
        gate_init(&blocker_gate);
        atomic_store(&in_hook, 0);
        atomic_store(&resume, 0);
        uform_deferred_t *first = NULL, *second = NULL;
        uform_call_t call = UFORM_CALL_INIT;
        call.deferred = &first;
        CHECK_OK(uform_executor_for_n(executor, &call, 1, blocker, NULL));
        call.deferred = &second;
        CHECK_OK(uform_executor_for_n(executor, &call, 1, must_not_run, NULL));
        atomic_store(&queued_handle, second);

        atomic_store(&uform__test_after_cancel_claim, pause_after_cancel_claim);
        pthread_t canceller;
        CHECK(pthread_create(&canceller, NULL, cancel_it, NULL) == 0);
        while (!atomic_load(&in_hook)) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
        /* The call ahead frees the cancelled handle, and the leader drops its slot: the drain
         * returns once the slot is gone. */
        gate_open(&blocker_gate);
        CHECK_OK(uform_deferred_wait(first, -1));
        uform_deferred_free(first);
        CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
        atomic_store(&resume, 1);
        void *answer = NULL;
        CHECK(pthread_join(canceller, &answer) == 0);
        atomic_store(&uform__test_after_cancel_claim, NULL);
        CHECK_EQ_INT((int)(intptr_t)answer, UFORM_STATUS_OK);
        CHECK_EQ_INT(atomic_load(&queued_ran), 0);
    }
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
