/* No CUDA driver at all (the library named does not exist): zero devices and OK, never an
 * error; cuda is compiled but not available; a VRAM executor is NOT_FOUND, saying why. */
#include "cuda_double.h"

int main(void) {
    setenv("UFORM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    size_t count = 7;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 0);
    uform_gpu_device_t devices[2];
    CHECK_OK(uform_gpu_devices(devices, 2, &count));
    CHECK_EQ_INT(count, 0);
    CHECK(has_token(uform_capabilities_compiled(), "cuda"));
    CHECK(!has_token(uform_capabilities_available(), "cuda"));

    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                         &executor),
                 UFORM_STATUS_NOT_FOUND);
    CHECK_ERROR_NAMES("no GPU");
    CHECK_ERROR_NAMES("/nonexistent/libcuda.so.1");
    CHECK(executor == NULL);

    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "GPUs:                   none (no CUDA driver");
    TEST_DONE();
}
