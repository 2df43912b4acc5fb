/* A failure that is not sticky, against the CUDA driver test double: device 1's primary context
 * is released under the executor (its last retain: the driver destroys the context and its
 * streams, and answers CUDA_ERROR_INVALID_CONTEXT or _HANDLE for them). The verb and the
 * drain must both answer DEVICE_FAULT with the driver's error name and the device, never OK
 * (a drain once swallowed it). The executor is not marked faulted for it (not a sticky error),
 * and its free still releases everything. */
#include <string.h>

#include "vram_double.h"

static uform_status_t nothing(void *context, const uform_device_slot_t *slot) {
    (void)context, (void)slot;
    return UFORM_STATUS_OK;
}

int main(void) {
    cuda_double_t cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    CHECK_OK(uform_executor_for_devices(executor, NULL, nothing, NULL));

    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS); /* the executor's own retain */
    CHECK_STATUS(uform_executor_for_devices(executor, NULL, nothing, NULL), UFORM_STATUS_DEVICE_FAULT);
    /* The driver's words reach the caller, though device 1 ran on another thread. */
    CHECK(strstr(uform_last_error(), "CUDA_ERROR_INVALID_") != NULL);
    CHECK(strstr(uform_last_error(), "device 1") != NULL);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_DEVICE_FAULT);
    CHECK(strstr(uform_last_error(), "uform_executor_drain") != NULL);
    CHECK(strstr(uform_last_error(), "CUDA_ERROR_INVALID_") != NULL);

    CHECK(strstr(uform_last_error(), "stays so until freed") == NULL); /* not a sticky fault */

    /* Retained again for the executor's own release at free (the driver destroyed the context
     * and its stream at the last release: the executor's stream is gone for good). */
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 1), UFORM_CUDA_SUCCESS);
    CHECK_OK(uform_executor_free(executor));
    CHECK_EQ_INT((int)vram_device_used(&cu, 0), 0);
    TEST_DONE();
}
