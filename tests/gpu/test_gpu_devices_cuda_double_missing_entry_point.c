/* A driver lacking an entry point (the CUDA driver test double hides cuDeviceGetPCIBusId from
 * cuGetProcAddress): UNSUPPORTED naming it, never a crash, and the same on every call. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device name=any\nfault missing=cuDeviceGetPCIBusId");
    size_t count = 7;
    for (int attempt = 0; attempt < 2; attempt++) {
        CHECK_STATUS(uform_gpu_devices(NULL, 0, &count), UFORM_STATUS_UNSUPPORTED);
        CHECK_ERROR_NAMES("lacks cuDeviceGetPCIBusId");
        CHECK_ERROR_NAMES("CUDA_ERROR_NOT_FOUND");
        CHECK_ERROR_NAMES("symbol not found");
    }
    CHECK(!has_token(uform_capabilities_available(), "cuda"));
    char text[8192];
    size_t length = 0;
    CHECK_OK(uform_info_write(UFORM_INFO_TEXT, text, sizeof text, &length));
    CHECK(strstr(text, "GPUs:                   unavailable (UNSUPPORTED: ") != NULL);
    TEST_DONE();
}
