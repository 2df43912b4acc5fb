/* cuInit fails (fault injected into the CUDA driver test double): DEVICE_FAULT with the
 * driver's own error name, the same answer on every later call, cuda not available, and
 * `uform info` still reports, naming the failure. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("device name=unreachable\nfault init=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    size_t count = 7;
    for (int attempt = 0; attempt < 2; attempt++) {
        CHECK_STATUS(uform_gpu_devices(NULL, 0, &count), UFORM_STATUS_DEVICE_FAULT);
        CHECK_ERROR_NAMES("cuInit");
        CHECK_ERROR_NAMES("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    }
    CHECK(!has_token(uform_capabilities_available(), "cuda"));

    char json[8192];
    size_t length = 0;
    CHECK_OK(uform_info_write(UFORM_INFO_JSON, json, sizeof json, &length));
    CHECK(strstr(json, "\"gpus\":[]") != NULL);
    CHECK(strstr(json, "\"gpus_error\":\"DEVICE_FAULT: cuInit") != NULL);

    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                         &executor),
                 UFORM_STATUS_DEVICE_FAULT);
    TEST_DONE();
}
