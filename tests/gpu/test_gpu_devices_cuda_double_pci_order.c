/* CUDA_DEVICE_ORDER=PCI_BUS_ID changes the driver's ordinals (the CUDA driver test double
 * honours it as the driver does) but not uform's list: PCI bus order either way. */
#include "cuda_double.h"
#include "gpu/gpu_devices.h"

int main(void) {
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    use_cuda_double("device pci=0001:00:00.0 name=second domain\n"
                    "device pci=0000:81:00.0 name=high bus\n"
                    "device pci=0000:02:01.0 name=device 1\n"
                    "device pci=0000:02:00.1 name=function 1\n");
    uform__gpu_detail_t details[4];
    size_t count = 0;
    CHECK_OK(uform__gpu_details(details, 4, &count));
    CHECK_EQ_INT(count, 4);
    static const char *names[4] = {"function 1", "device 1", "high bus", "second domain"};
    static const char *addresses[4] = {"0000:02:00.1", "0000:02:01.0", "0000:81:00.0", "0001:00:00.0"};
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_STR(details[i].device.name, names[i]);
        CHECK_EQ_STR(details[i].pci_address, addresses[i]);
        CHECK_EQ_INT(details[i].device.vendor_ordinal, i);
    }
    TEST_DONE();
}
