/* Allocation failure, injected at every allocation in turn (core/memory.h's hook): executor
 * creation, deferred submission and arenas answer OUT_OF_MEMORY cleanly, leave nothing
 * half-made (ASan's leak check runs this too), and the next call works. */
#include "core/memory.h"
#include "test.h"

static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

int main(void) {
    /* Warm the process-wide caches (topology, class) so the countdown hits the executor's own. */
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    CHECK_OK(uform_executor_free(executor));

    int failures = 0, successes = 0;
    for (long countdown = 0; countdown < 12; countdown++) {
        executor = (uform_executor_t *)1;
        uform__test_fail_allocations_after(countdown);
        uform_status_t status = uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 3, 4, &executor);
        uform__test_fail_allocations_after(-1);
        if (status == UFORM_STATUS_OK) {
            successes++;
            CHECK_OK(uform_executor_for_n(executor, NULL, 100, nothing, NULL));
            CHECK_OK(uform_executor_free(executor));
        } else {
            failures++;
            CHECK_STATUS(status, UFORM_STATUS_OUT_OF_MEMORY);
            CHECK(executor == NULL);
            CHECK(strlen(uform_last_error()) > 0);
        }
    }
    CHECK(failures >= 4); /* executor, placement (two lists), queue, workers */
    CHECK(successes >= 1);

    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    uform_deferred_t *handle = (uform_deferred_t *)1;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &handle;
    uform__test_fail_allocations_after(0);
    CHECK_STATUS(uform_executor_for_n(executor, &call, 10, nothing, NULL), UFORM_STATUS_OUT_OF_MEMORY);
    uform_arena_t *arena = (uform_arena_t *)1;
    CHECK_STATUS(uform_arena_new_in(executor, 4096, &arena), UFORM_STATUS_OUT_OF_MEMORY);
    uform__test_fail_allocations_after(-1);
    CHECK(handle == NULL && arena == NULL);
    CHECK_OK(uform_executor_for_n(executor, &call, 10, nothing, NULL)); /* and then it works */
    CHECK_OK(uform_deferred_wait(handle, -1));
    uform_deferred_free(handle);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
