/* One vendor's failure hides nothing of the other's: a CUDA driver whose cuInit fails beside
 * working AMD GPUs lists the AMD GPUs (OK), and the discovery and `uform info` name the CUDA
 * failure; the reverse (a failing HIP runtime beside working NVIDIA GPUs) runs in a child with
 * its own, fresh loads. */
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/gpu_devices.h"
#include "hip_double.h"

/* Lists `expected` devices of `vendor`, and `failed`'s discovery entry names `names`. */
static int check_survivor(uint32_t vendor, size_t expected, size_t failed, const char *status_name, const char *names) {
    uform_gpu_device_t devices[4];
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(devices, 4, &count));
    CHECK_EQ_INT(count, expected);
    for (size_t i = 0; i < count; i++) CHECK_EQ_INT(devices[i].vendor, vendor);
    uform__gpu_discovery_t vendors[2];
    CHECK_EQ_INT(uform__gpu_discovery(vendors, 2), 2);
    CHECK_STATUS(vendors[failed].status, UFORM_STATUS_DEVICE_FAULT);
    CHECK(strstr(vendors[failed].message, names) != NULL);
    CHECK(uform__gpu_discovery_worth_saying(&vendors[failed]));
    CHECK(!uform__gpu_discovery_worth_saying(&vendors[1 - failed]));
    char line[128];
    snprintf(line, sizeof line, "  %s: %s: ", vendors[failed].runtime, status_name);
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, line);
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, names);
    return 0;
}

int main(void) {
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        use_cuda_and_hip_doubles("device name=a\ndevice name=b",
                                 "device name=x\nfault init=hipErrorInsufficientDriver");
        _exit(check_survivor(UFORM_GPU_VENDOR_NVIDIA, 2, 1, "DEVICE_FAULT", "hipErrorInsufficientDriver"));
    }
    int wait_status = 0;
    CHECK(waitpid(child, &wait_status, 0) == child);
    CHECK(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);

    use_cuda_and_hip_doubles("device name=x\nfault init=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "device name=amd");
    CHECK_EQ_INT(check_survivor(UFORM_GPU_VENDOR_AMD, 1, 0, "DEVICE_FAULT", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"), 0);
    /* A VRAM executor over the surviving vendor's GPU still forms. */
    uform_executor_t *executor = NULL;
    int32_t ordinal = 0;
    CHECK_OK(uform_executor_for_vram(&ordinal, 1, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
