/* A driver older than CUDA 12.0 exports no cuGetProcAddress_v2 (the legacy build of the CUDA
 * driver test double): uform binds the versioned names with dlsym (cuDeviceTotalMem_v2, whose
 * 64-bit size an 80 GiB device needs) and lists the devices as before. The double reads its
 * configuration from a file here (`@path`), the form longer configurations will take. */
#include <unistd.h>

#include "cuda_double.h"

int main(void) {
    char path[] = "/tmp/uform_cuda_double_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    static const char config[] = "# a pre-12.0 driver\n"
                                 "driver version=11080\n"
                                 "device pci=0000:41:00.0 cc=8.0 sms=108 memory=80G name=NVIDIA A100-SXM4-80GB\n";
    CHECK(write(fd, config, sizeof config - 1) == (ssize_t)(sizeof config - 1));
    close(fd);
    char setting[sizeof path + 1];
    snprintf(setting, sizeof setting, "@%s", path);
    use_cuda_double(setting);
    setenv("UFORM_CUDA_LIBRARY", UFORM_TEST_CUDA_DOUBLE_LEGACY, 1);

    uform_gpu_device_t device;
    size_t count = 0;
    uform_status_t status = uform_gpu_devices(&device, 1, &count);
    unlink(path);
    CHECK_OK(status);
    CHECK_EQ_INT(count, 1);
    CHECK_EQ_STR(device.name, "NVIDIA A100-SXM4-80GB");
    CHECK_EQ_INT(device.memory_bytes, 80ull << 30);
    CHECK_EQ_INT(device.gpu_class, UFORM_GPU_CLASS_NVIDIA_AMPERE);
    CHECK_EQ_INT(device.compute_units, 108);
    TEST_DONE();
}
