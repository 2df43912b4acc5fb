/* GPU discovery against the CUDA driver test double: an 8-GPU two-socket server (the
 * two_socket_6248_smt fixture, whose PCI numa_node files put four GPUs on each socket). The
 * double lists its devices in a made-up "fastest first" order; uform lists them in PCI bus
 * order with vendor ordinals to match, as nvidia-smi does. */
#include "cuda_double.h"
#include "gpu/gpu_devices.h"
#include "hardware/fixture.h"

static const char config[] =
    "device pci=0000:C3:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3 #6\n"
    "device pci=0000:1B:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3 #1\n"
    "device pci=0000:DF:00.0 cc=9.0 sms=132 memory=80G name=NVIDIA H100 80GB HBM3 #8\n"
    "device pci=0000:52:00.0 cc=8.0 sms=108 memory=40G name=NVIDIA A100-SXM4-40GB\n"
    "device pci=0000:43:00.0 cc=8.9 sms=142 memory=48G name=NVIDIA L40S\n"
    "device pci=0000:9D:00.0 cc=10.0 sms=148 memory=180G name=NVIDIA B200\n"
    "device pci=0000:61:00.0 cc=7.0 sms=80 memory=32G name=Tesla V100-SXM2-32GB\n"
    "device pci=0000:D1:00.0 cc=12.0 sms=170 memory=32G name=NVIDIA GeForce RTX 5090\n";

int main(void) {
    use_cuda_double(config);
    use_fixture("two_socket_6248_smt");

    size_t count = 99;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 8);

    /* Fewer slots than devices: the count is still the total, only the slots are written. */
    uform_gpu_device_t few[3];
    memset(few, 0xAB, sizeof few);
    CHECK_OK(uform_gpu_devices(few, 2, &count));
    CHECK_EQ_INT(count, 8);
    CHECK_EQ_STR(few[0].name, "NVIDIA H100 80GB HBM3");
    CHECK_EQ_INT(few[2].vendor, 0xABABABABu);

    uform__gpu_detail_t details[8];
    CHECK_OK(uform__gpu_details(details, 8, &count));
    static const struct {
        const char *pci, *name;
        int node;
        uform_gpu_class_t gpu_class;
        uint32_t sms;
        uint64_t gib;
    } expected[8] = {
        {"0000:1b:00.0", "NVIDIA H100 80GB HBM3", 0, UFORM_GPU_CLASS_NVIDIA_HOPPER, 132, 80},
        {"0000:43:00.0", "NVIDIA L40S", 0, UFORM_GPU_CLASS_NVIDIA_ADA, 142, 48},
        {"0000:52:00.0", "NVIDIA A100-SXM4-40GB", 0, UFORM_GPU_CLASS_NVIDIA_AMPERE, 108, 40},
        {"0000:61:00.0", "Tesla V100-SXM2-32GB", 0, UFORM_GPU_CLASS_NONE, 80, 32},
        {"0000:9d:00.0", "NVIDIA B200", 1, UFORM_GPU_CLASS_NVIDIA_BLACKWELL, 148, 180},
        {"0000:c3:00.0", "NVIDIA H100 80GB HBM3", 1, UFORM_GPU_CLASS_NVIDIA_HOPPER, 132, 80},
        {"0000:d1:00.0", "NVIDIA GeForce RTX 5090", 1, UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX, 170, 32},
        {"0000:df:00.0", "NVIDIA H100 80GB HBM3", 1, UFORM_GPU_CLASS_NVIDIA_HOPPER, 132, 80},
    };
    uform_gpu_device_t devices[8];
    CHECK_OK(uform_gpu_devices(devices, 8, &count));
    for (size_t i = 0; i < 8; i++) {
        CHECK_EQ_STR(details[i].pci_address, expected[i].pci);
        CHECK_EQ_INT(details[i].numa_node, expected[i].node);
        CHECK_EQ_STR(details[i].device.name, expected[i].name);
        CHECK_EQ_INT(details[i].device.vendor, UFORM_GPU_VENDOR_NVIDIA);
        CHECK_EQ_INT(details[i].device.vendor_ordinal, i);
        CHECK_EQ_INT(details[i].device.gpu_class, expected[i].gpu_class);
        CHECK_EQ_INT(details[i].device.compute_units, expected[i].sms);
        CHECK_EQ_INT(details[i].device.memory_bytes, expected[i].gib << 30);
        /* The public list is the details' first part, position for position. */
        CHECK(memcmp(&devices[i], &details[i].device, sizeof devices[i]) == 0);
    }

    /* Bad arguments get statuses, not crashes. */
    CHECK_STATUS(uform_gpu_devices(devices, 8, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_gpu_devices(NULL, 8, &count), UFORM_STATUS_INVALID_ARGUMENT);

    /* The backend is compiled in and, with devices, available. */
    CHECK(has_token(uform_capabilities_compiled(), "cuda"));
    CHECK(has_token(uform_capabilities_available(), "cuda"));

    /* A fixture without PCI files: the node is unknown, never an error. */
    use_fixture("emerald_vm_2cpu");
    CHECK_OK(uform__gpu_details(details, 8, &count));
    CHECK_EQ_INT(details[0].numa_node, -1);
    CHECK_OK(uform__seam_use_fixture(NULL));
    TEST_DONE();
}
