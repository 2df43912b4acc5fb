/* uform_executor_order_stream on a faulted executor: the first stream operation faults device
 * 0's context (`fault sticky=1`), the device function's call answers DEVICE_FAULT, and from then
 * on ordering a stream answers DEVICE_FAULT with the fault's words, the driver not called. */
#include "vram_double.h"

static cuda_double_t cu;

static uform_status_t fault_stream(void *context, const uform_device_slot_t *slot) {
    (void)context;
    uform_cuDevicePtr buffer = 0;
    CHECK_CU(cu.cuMemAlloc(&buffer, 64), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemsetD8Async(buffer, 1, 64, (uform_cuStream)slot->stream), UFORM_CUDA_SUCCESS);
    return UFORM_STATUS_OK;
}

int main(void) {
    cu = vram_double_open("device cc=9.0 memory=64M\nfault sticky=1\n");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    CHECK_OK(uform_executor_order_stream(executor, 0, NULL)); /* before the fault */
    CHECK_EQ_INT(uform_executor_for_devices(executor, NULL, fault_stream, NULL), UFORM_STATUS_DEVICE_FAULT);
    CHECK_EQ_INT(uform_executor_order_stream(executor, 0, NULL), UFORM_STATUS_DEVICE_FAULT);
    CHECK(strstr(uform_last_error(), "uform_executor_order_stream") != NULL);
    CHECK(strstr(uform_last_error(), "faulted") != NULL);
    uform_executor_free(executor);
    TEST_DONE();
}
