/* A typo in a test's configuration of the CUDA driver test double must fail loudly, not
 * emulate another machine: the double refuses it (cuInit answers CUDA_ERROR_UNKNOWN and it
 * says why on stderr), and uform reports that as a driver failure. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device pci=0000:01:00.0 smz=132 name=typo in a key");
    size_t count = 0;
    CHECK_STATUS(uform_gpu_devices(NULL, 0, &count), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("CUDA_ERROR_UNKNOWN");
    TEST_DONE();
}
