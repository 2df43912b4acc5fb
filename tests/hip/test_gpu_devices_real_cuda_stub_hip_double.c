/* The CUDA toolkit's stub libcuda.so (lib64/stubs: a real library this project did not write,
 * every entry of which answers CUDA_ERROR_STUB_LIBRARY, cuGetProcAddress_v2 included) found in
 * place of a driver, beside working AMD GPUs (the HIP double): zero NVIDIA devices, the AMD ones
 * still listed, and `uform info` saying "CUDA stub library, no driver". Skipped (77) where the
 * toolkit's stub is not installed. */
#include <stdio.h>
#include <unistd.h>

#include "gpu/gpu_devices.h"
#include "hip_double.h"

int main(void) {
    if (!*UFORM_TEST_CUDA_STUB || access(UFORM_TEST_CUDA_STUB, R_OK) != 0) {
        printf("SKIPPED: no CUDA toolkit stub libcuda.so here\n");
        return 77;
    }
    use_hip_double("device name=first-amd\ndevice name=second-amd");
    setenv("UFORM_CUDA_LIBRARY", UFORM_TEST_CUDA_STUB, 1);
    uform_gpu_device_t devices[4];
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(devices, 4, &count));
    CHECK_EQ_INT(count, 2);
    for (size_t i = 0; i < count; i++) CHECK_EQ_INT(devices[i].vendor, UFORM_GPU_VENDOR_AMD);
    CHECK(!has_token(uform_capabilities_available(), "cuda"));
    CHECK(has_token(uform_capabilities_available(), "hip"));

    uform__gpu_discovery_t vendors[2];
    CHECK_EQ_INT(uform__gpu_discovery(vendors, 2), 2);
    CHECK_EQ_INT(vendors[0].vendor, UFORM_GPU_VENDOR_NVIDIA);
    CHECK_OK(vendors[0].status);
    CHECK_EQ_INT(vendors[0].device_count, 0);
    CHECK(vendors[0].library_found);
    CHECK(strstr(vendors[0].message, "CUDA stub library, no driver") == vendors[0].message);
    CHECK(uform__gpu_discovery_worth_saying(&vendors[0]));
    CHECK_EQ_INT(vendors[1].device_count, 2);
    CHECK(!uform__gpu_discovery_worth_saying(&vendors[1]));
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "GPUs:                   2");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "CUDA: CUDA stub library, no driver");
    CHECK_INFO_HOLDS(UFORM_INFO_JSON,
                     "\"runtime\":\"CUDA\",\"status\":\"OK\",\"message\":\"CUDA stub library, no driver");
    TEST_DONE();
}
