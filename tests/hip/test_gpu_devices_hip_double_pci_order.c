/* The HIP runtime test double's device ids follow its configuration (as HIP's follow the KFD
 * topology and HIP_VISIBLE_DEVICES), but uform lists AMD GPUs in PCI bus order, the order
 * rocm-smi shows, with vendor_ordinal the position there; each keeps its runtime id for later
 * calls. */
#include "gpu/gpu_devices.h"
#include "gpu/hip/hip_loader.h"
#include "hip_double.h"

int main(void) {
    use_hip_double("device pci=0001:00:00.0 name=second domain\n"
                   "device pci=0000:81:00.0 name=high bus\n"
                   "device pci=0000:02:01.0 name=device 1\n"
                   "device pci=0000:02:00.1 name=function 1\n");
    uform__gpu_detail_t details[4];
    size_t count = 0;
    CHECK_OK(uform__gpu_details(details, 4, &count));
    CHECK_EQ_INT(count, 4);
    static const char *names[4] = {"function 1", "device 1", "high bus", "second domain"};
    static const char *addresses[4] = {"0000:02:00.1", "0000:02:01.0", "0000:81:00.0", "0001:00:00.0"};
    static const int handles[4] = {3, 2, 1, 0};
    const uform__hip_t *hip = NULL;
    CHECK_OK(uform__hip_get(&hip));
    CHECK(hip != NULL);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(details[i].device.vendor, UFORM_GPU_VENDOR_AMD);
        CHECK_EQ_STR(details[i].device.name, names[i]);
        CHECK_EQ_STR(details[i].pci_address, addresses[i]);
        CHECK_EQ_INT(details[i].device.vendor_ordinal, i);
        CHECK_EQ_INT(hip->devices[i].handle, handles[i]);
    }
    TEST_DONE();
}
