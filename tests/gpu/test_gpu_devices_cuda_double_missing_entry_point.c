/* A driver lacking an entry point (the CUDA driver test double hides cuDeviceGetPCIBusId from
 * cuGetProcAddress): UNSUPPORTED naming it, never a crash, and the same on every call. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device name=any\nfault missing=cuDeviceGetPCIBusId");
    CHECK_GPU_FAILURE(UFORM_STATUS_UNSUPPORTED, "lacks cuDeviceGetPCIBusId", "CUDA_ERROR_NOT_FOUND", "symbol not found");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "GPUs:                   unavailable (UNSUPPORTED: ");
    TEST_DONE();
}
