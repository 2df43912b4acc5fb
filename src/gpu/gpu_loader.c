/* What the GPU loaders share (gpu_loader.h): the PCI bus order and the device snapshot. */
#include "gpu/gpu_loader.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/memory.h"

int uform__gpu_pci_order(const uint32_t x[4], const uint32_t y[4], int x_handle, int y_handle) {
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return x_handle < y_handle ? -1 : x_handle > y_handle;
}

bool uform__gpu_parse_pci_bus_id(const char *bus_id, uint32_t *domain, uint32_t *bus, uint32_t *device,
                                 uint32_t *function) {
    unsigned parsed[4];
    if (sscanf(bus_id, "%x:%x:%x.%x", &parsed[0], &parsed[1], &parsed[2], &parsed[3]) != 4) return false;
    *domain = parsed[0];
    *bus = parsed[1];
    *device = parsed[2];
    *function = parsed[3];
    return true;
}

uform_status_t uform__gpu_read_devices(uform__library_t *loader, const char *vendor, int count, size_t size,
                                       uform__gpu_read_device_t read, int (*order)(const void *, const void *),
                                       void **devices) {
    *devices = NULL;
    unsigned char *snapshot = uform__allocate_zeroed((size_t)count, size);
    if (!snapshot)
        return uform__library_fail(loader, UFORM_STATUS_OUT_OF_MEMORY, "no memory for %d %s devices", count, vendor);
    for (int i = 0; i < count; i++) {
        uform_status_t status = read(i, snapshot + (size_t)i * size);
        if (status != UFORM_STATUS_OK) {
            uform__deallocate(snapshot);
            return status;
        }
    }
    qsort(snapshot, (size_t)count, size, order);
    *devices = snapshot;
    return UFORM_STATUS_OK;
}
