/* One call at a time: a synchronous call from a second thread while the first holds the
 * executor answers CONTENDED at once (without blocking), and the executor is intact after. */
#include "executor/executor_test_util.h"
#include "test.h"

static gate_t gate;

static uform_status_t block_on_gate(void *context, size_t task, size_t thread) {
    gate_pass(&gate);
    return UFORM_STATUS_OK;
}
static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

static void *hold_executor(void *argument) {
    uform_status_t status = uform_executor_for_n(argument, NULL, 2, block_on_gate, NULL);
    return (void *)(uintptr_t)status;
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    gate_init(&gate);
    pthread_t holder;
    CHECK(pthread_create(&holder, NULL, hold_executor, executor) == 0);
    wait_arrived(&gate, 2); /* both threads of the holder's call are inside it */

    double start = seconds_now();
    CHECK_STATUS(uform_executor_for_n(executor, NULL, 4, nothing, NULL), UFORM_STATUS_CONTENDED);
    CHECK(strstr(uform_last_error(), "holds this executor") != NULL);
    CHECK_STATUS(uform_executor_for_threads(executor, NULL, nothing, NULL), UFORM_STATUS_CONTENDED);
    CHECK_STATUS(uform_executor_for_n_dynamic(executor, NULL, 4, nothing, NULL), UFORM_STATUS_CONTENDED);
    CHECK(seconds_now() - start < 5.0); /* "at once": generous bound, it must simply not block on the gate */

    gate_open(&gate);
    void *result = NULL;
    pthread_join(holder, &result);
    CHECK_EQ_INT((uintptr_t)result, UFORM_STATUS_OK);
    /* The executor is intact: calls work again from this thread. */
    CHECK_OK(uform_executor_for_n(executor, NULL, 100, nothing, NULL));
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
