/* A CUDA driver that sees no device (the test double configured with none: cuInit answers
 * CUDA_ERROR_NO_DEVICE, as the driver does on a machine without GPUs): zero devices, OK. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("driver version=12080 # and no device lines");
    size_t count = 7;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 0);
    CHECK(!has_token(uform_capabilities_available(), "cuda"));
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "sees no device (cuInit: CUDA_ERROR_NO_DEVICE)");
    TEST_DONE();
}
