/* uform_deferred_cancel from a callback of the executor that runs the calls: a deferred call's
 * task cancels the call queued behind it and its own. Neither waits (a callback waiting for its
 * own executor would never end); the queued call never starts, the running one starts no task
 * once cancelled, and both answer INTERRUPTED. */
#include <stdatomic.h>
#include <time.h>

#include "executor/executor_internal.h"
#include "test.h"

enum { MANY = 100000 };

static uform_deferred_t *_Atomic self_handle, *_Atomic next_handle;
static _Atomic uint32_t cancel_next_status = 99, cancel_self_status = 99;
static _Atomic size_t first_ran, second_ran;

static uform_status_t first_task(void *context, size_t task, size_t thread) {
    (void)context, (void)thread;
    atomic_fetch_add(&first_ran, 1);
    if (task == 0) {
        while (!atomic_load(&next_handle) || !atomic_load(&self_handle)) {
        }
        atomic_store(&cancel_next_status, uform_deferred_cancel(atomic_load(&next_handle)));
        atomic_store(&cancel_self_status, uform_deferred_cancel(atomic_load(&self_handle)));
    } else {
        /* Every other task waits for the cancel (up to 10 s), so the call is still running then. */
        for (int turn = 0; turn < 100000 && atomic_load(&cancel_self_status) == 99; turn++) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
    }
    return UFORM_STATUS_OK;
}

static uform_status_t second_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    atomic_fetch_add(&second_ran, 1);
    return UFORM_STATUS_OK;
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    uform_deferred_t *first = NULL, *second = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &first;
    /* Dynamic: task 0 is thread 0's first, and the others are taken one by one after it. */
    CHECK_OK(uform_executor_for_n_dynamic(executor, &call, MANY, first_task, NULL));
    atomic_store(&self_handle, first);
    call.deferred = &second;
    CHECK_OK(uform_executor_for_n(executor, &call, 100, second_task, NULL));
    atomic_store(&next_handle, second);
    CHECK_STATUS(uform_deferred_wait(first, 20), UFORM_STATUS_INTERRUPTED);
    CHECK_STATUS(uform_deferred_wait(second, 20), UFORM_STATUS_INTERRUPTED);
    CHECK_EQ_INT(atomic_load(&cancel_next_status), UFORM_STATUS_OK);
    CHECK_EQ_INT(atomic_load(&cancel_self_status), UFORM_STATUS_OK);
    CHECK_EQ_INT(atomic_load(&second_ran), 0);
    /* Each thread's first task (0 and 1) ran; once cancelled, neither took another. */
    CHECK_EQ_INT(atomic_load(&first_ran), 2);
    uform_deferred_free(first);
    uform_deferred_free(second);
    /* The executor stays usable. */
    CHECK_OK(uform_executor_for_n(executor, NULL, 100, second_task, NULL));
    CHECK_EQ_INT(atomic_load(&second_ran), 100);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
