/* NVIDIA first, then AMD (SPEC section 4): the CUDA driver test double's two GPUs, then the HIP
 * runtime test double's two, each vendor's `vendor_ordinal` counting from 0, and every AMD field
 * as the HIP double describes it (name, CUs, memory, class from gcnArchName, PCI address). */
#include "gpu/gpu_devices.h"
#include "hip_double.h"

int main(void) {
    use_cuda_and_hip_doubles("device pci=0000:41:00.0 cc=9.0 name=NVIDIA H100\n"
                             "device pci=0000:c1:00.0 cc=8.9 name=NVIDIA L40S",
                             "device arch=gfx942:sramecc+:xnack- cus=304 memory=192G pci=0000:05:00.0 name=AMD Instinct MI300X\n"
                             "device arch=gfx950 cus=256 memory=288G pci=0000:85:00.0 name=AMD Instinct MI355X");
    uform__gpu_detail_t details[4];
    size_t count = 0;
    CHECK_OK(uform__gpu_details(details, 4, &count));
    CHECK_EQ_INT(count, 4);
    static const uint32_t vendors[4] = {UFORM_GPU_VENDOR_NVIDIA, UFORM_GPU_VENDOR_NVIDIA, UFORM_GPU_VENDOR_AMD,
                                        UFORM_GPU_VENDOR_AMD};
    static const uint32_t ordinals[4] = {0, 1, 0, 1};
    static const char *names[4] = {"NVIDIA H100", "NVIDIA L40S", "AMD Instinct MI300X", "AMD Instinct MI355X"};
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(details[i].device.vendor, vendors[i]);
        CHECK_EQ_INT(details[i].device.vendor_ordinal, ordinals[i]);
        CHECK_EQ_STR(details[i].device.name, names[i]);
    }
    CHECK_EQ_INT(details[2].device.gpu_class, UFORM_GPU_CLASS_AMD_CDNA3);
    CHECK_EQ_INT(details[2].device.compute_units, 304);
    CHECK_EQ_INT(details[2].device.memory_bytes, 192ull << 30);
    CHECK_EQ_STR(details[2].pci_address, "0000:05:00.0");
    CHECK_EQ_INT(details[2].compute_major, 9); /* HIP's own major.minor for gfx942 */
    CHECK_EQ_INT(details[2].compute_minor, 4);
    CHECK_EQ_INT(details[3].device.gpu_class, UFORM_GPU_CLASS_AMD_CDNA4);
    CHECK_EQ_INT(details[3].device.compute_units, 256);
    CHECK_EQ_STR(details[3].pci_address, "0000:85:00.0");

    /* The public listing agrees, and a short buffer still counts everything. */
    uform_gpu_device_t devices[3];
    CHECK_OK(uform_gpu_devices(devices, 3, &count));
    CHECK_EQ_INT(count, 4);
    CHECK_EQ_INT(devices[2].vendor, UFORM_GPU_VENDOR_AMD);
    CHECK_EQ_STR(devices[2].name, "AMD Instinct MI300X");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "GPU 2: AMD Instinct MI300X (amd 0, amd_cdna3");
    TEST_DONE();
}
