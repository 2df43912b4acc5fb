/* The CUDA driver test double refuses a malformed `fault alloc=` or `fault sticky=` count
 * (zero, negative, not a number) like any other typo: cuInit answers CUDA_ERROR_UNKNOWN. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device\nfault alloc=2\nfault sticky=0");
    size_t count = 0;
    CHECK_STATUS(uform_gpu_devices(NULL, 0, &count), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("CUDA_ERROR_UNKNOWN");
    TEST_DONE();
}
