/* cuInit fails (fault injected into the CUDA driver test double): DEVICE_FAULT with the
 * driver's own error name, the same answer on every later call, cuda not available, and
 * `uform info` still reports, naming the failure. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device name=unreachable\nfault init=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    CHECK_GPU_FAILURE(UFORM_STATUS_DEVICE_FAULT, "cuInit", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    CHECK_INFO_HOLDS(UFORM_INFO_JSON, "\"gpus\":[]");
    CHECK_INFO_HOLDS(UFORM_INFO_JSON, "\"gpus_error\":\"DEVICE_FAULT: cuInit");

    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                         &executor),
                 UFORM_STATUS_DEVICE_FAULT);
    TEST_DONE();
}
