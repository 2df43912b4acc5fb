/* The CUDA toolkit's stub libcuda found instead of a driver (the test double's cuInit answers
 * CUDA_ERROR_STUB_LIBRARY, as the stub does): no driver means zero devices, never an error, and
 * `uform info` says what it found. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device name=never-seen\nfault init=CUDA_ERROR_STUB_LIBRARY");
    size_t count = 7;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 0);
    CHECK(!has_token(uform_capabilities_available(), "cuda"));
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "CUDA stub library, no driver");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "(cuInit: CUDA_ERROR_STUB_LIBRARY)");
    TEST_DONE();
}
