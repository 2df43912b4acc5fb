/* No HIP runtime at all (the library named does not exist): zero devices and OK, never an error;
 * hip is compiled but not available; the report says why. (Named for the HIP double's suite: the
 * double is what is absent here.) */
#include "gpu/gpu_devices.h"
#include "hip_double.h"

int main(void) {
    setenv("UFORM_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
    setenv("UFORM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    size_t count = 7;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 0);
    CHECK(has_token(uform_capabilities_compiled(), "hip"));
    CHECK(!has_token(uform_capabilities_available(), "hip"));
    CHECK(strstr(uform__gpu_note(), "no HIP runtime") != NULL);
    CHECK(strstr(uform__gpu_note(), "/nonexistent/libamdhip64.so") != NULL);
    CHECK(strstr(uform__gpu_note(), "no CUDA driver") == uform__gpu_note()); /* CUDA's note first */

    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                         &executor),
                 UFORM_STATUS_NOT_FOUND);
    CHECK_ERROR_NAMES("/nonexistent/libamdhip64.so");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "no HIP runtime");
    TEST_DONE();
}
