/* A device function runs with its device's context current, and the thread gets back what it had
 * once the function returned: the caller's thread (thread 0, which runs the device function of a
 * one-device executor) keeps the caller's own context, NULL included. Left current there, the
 * device's primary context would stay current on the caller after uform released it at free:
 * with uform holding the last reference, a context reset while current on the caller. */
#include <pthread.h>

#include "vram/vram_double.h"

static cuda_double_t cu;

typedef struct seen_t {
    pthread_t caller;
    int on_caller;
    uform_cuContext during;
} seen_t;

static uform_status_t look(void *context, const uform_device_slot_t *slot) {
    seen_t *seen = context;
    seen->on_caller = pthread_equal(pthread_self(), seen->caller);
    CHECK_CU(cu.cuCtxGetCurrent(&seen->during), UFORM_CUDA_SUCCESS);
    CHECK(seen->during == (uform_cuContext)slot->native_context);
    return UFORM_STATUS_OK;
}

static uform_cuContext current(void) {
    uform_cuContext context = (uform_cuContext)(uintptr_t)1;
    CHECK_CU(cu.cuCtxGetCurrent(&context), UFORM_CUDA_SUCCESS);
    return context;
}

int main(void) {
    cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M");
    int32_t first = 0;

    /* No context on the caller: none after the device function, and none after free. */
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    uform_executor_t *executor = vram_executor(&first, 1, 0);
    seen_t seen = {.caller = pthread_self()};
    CHECK_OK(uform_executor_for_devices(executor, NULL, look, &seen));
    CHECK(seen.on_caller);
    CHECK(seen.during != NULL);
    CHECK(current() == NULL);
    CHECK_OK(uform_executor_free(executor));
    CHECK(current() == NULL);

    /* The caller's own context (device 1's primary, retained by the caller) stays its own. */
    uform_cuContext mine = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&mine, 1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(mine), UFORM_CUDA_SUCCESS);
    executor = vram_executor(&first, 1, 0);
    seen.on_caller = 0;
    CHECK_OK(uform_executor_for_devices(executor, NULL, look, &seen));
    CHECK(seen.on_caller);
    CHECK(seen.during != mine);
    CHECK(current() == mine);
    CHECK_OK(uform_executor_free(executor));
    CHECK(current() == mine);
    size_t free_bytes = 0, total = 0;
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total), UFORM_CUDA_SUCCESS); /* still a live context */
    CHECK_EQ_INT(total, 64u << 20);
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
