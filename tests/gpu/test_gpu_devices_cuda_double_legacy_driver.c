/* A driver older than CUDA 12.0 exports no cuGetProcAddress_v2 (the legacy build of the CUDA
 * driver test double): uform binds the versioned names with dlsym (cuDeviceTotalMem_v2, whose
 * 64-bit size an 80 GiB device needs) and lists the devices as before. */
#include "cuda_double.h"

int main(void) {
    use_cuda_double("driver version=11080\ndevice pci=0000:41:00.0 cc=8.0 sms=108 memory=80G name=NVIDIA A100-SXM4-80GB");
    setenv("UFORM_CUDA_LIBRARY", UFORM_TEST_CUDA_DOUBLE_LEGACY, 1);
    uform_gpu_device_t device;
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(&device, 1, &count));
    CHECK_EQ_INT(count, 1);
    CHECK_EQ_STR(device.name, "NVIDIA A100-SXM4-80GB");
    CHECK_EQ_INT(device.memory_bytes, 80ull << 30);
    CHECK_EQ_INT(device.gpu_class, UFORM_GPU_CLASS_NVIDIA_AMPERE);
    CHECK_EQ_INT(device.compute_units, 108);
    TEST_DONE();
}
