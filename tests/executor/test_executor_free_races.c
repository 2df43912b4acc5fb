/* Misuse that must not hang: while uform_executor_free (on another thread) waits for a
 * running call, new synchronous and deferred calls are refused with a clear error instead of
 * being accepted onto threads that are about to stop; then free completes. */
#include "executor/executor_test_util.h"
#include "test.h"

static gate_t gate;

static uform_status_t gated(void *context, size_t task, size_t thread) {
    gate_pass(&gate);
    return UFORM_STATUS_OK;
}
static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

static void *free_it(void *executor) { return (void *)(uintptr_t)uform_executor_free(executor); }

int main(void) {
    for (int round = 0; round < 20; round++) {
        uform_executor_t *executor = NULL;
        CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 4096, &executor));
        gate_init(&gate);
        uform_deferred_t *running = NULL;
        uform_call_t call = UFORM_CALL_INIT;
        call.deferred = &running;
        CHECK_OK(uform_executor_for_n(executor, &call, 2, gated, NULL));
        wait_arrived(&gate, 2);

        pthread_t freer;
        CHECK(pthread_create(&freer, NULL, free_it, executor) == 0);
        /* Wait until free has begun (it marks the executor closing), then knock. */
        uform_status_t status = UFORM_STATUS_OK;
        uform_deferred_t *late = NULL, *accepted[4000];
        size_t accepted_count = 0;
        call.deferred = &late;
        while (status == UFORM_STATUS_OK && accepted_count < 4000) {
            status = uform_executor_for_n(executor, &call, 1, nothing, NULL);
            if (status == UFORM_STATUS_OK) { /* accepted before free began: it must still run */
                accepted[accepted_count++] = late;
                struct timespec pause = {0, 50000};
                nanosleep(&pause, NULL);
            }
        }
        CHECK_STATUS(status, UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(strstr(uform_last_error(), "being freed") != NULL);
        CHECK(late == NULL);
        CHECK_STATUS(uform_executor_for_n(executor, NULL, 4, nothing, NULL), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_INVALID_ARGUMENT); /* a second free */

        gate_open(&gate);
        void *result = NULL;
        pthread_join(freer, &result);
        CHECK_EQ_INT((uintptr_t)result, UFORM_STATUS_OK);
        CHECK_OK(uform_deferred_wait(running, 0));
        uform_deferred_free(running);
        for (size_t i = 0; i < accepted_count; i++) {
            CHECK_OK(uform_deferred_wait(accepted[i], 0)); /* free drained them all */
            uform_deferred_free(accepted[i]);
        }
    }
    TEST_DONE();
}
