/* A driver lacking an entry point (the CUDA driver test double hides cuDeviceGetPCIBusId from
 * cuGetProcAddress): UNSUPPORTED naming it, never a crash, and the same on every call. */
#include "core/error.h"
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device name=any\nfault missing=cuDeviceGetPCIBusId");
    CHECK_GPU_FAILURE(UFORM_STATUS_UNSUPPORTED, "lacks cuDeviceGetPCIBusId", "CUDA_SUCCESS", "symbol not found");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "GPUs:                   unavailable (UNSUPPORTED: ");
    /* The report succeeded, so the caller's last error is what it was before. */
    uform__fail(UFORM_STATUS_OK, "before the report");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "lacks cuDeviceGetPCIBusId");
    CHECK_EQ_STR(uform_last_error(), "before the report");
    TEST_DONE();
}
