/* Internal: what the GPU loaders (cuda/cuda_loader.c, hip/hip_loader.c) share beyond the library
 * loading of core/dynamic_library.h: both list their devices in PCI bus order. */
#ifndef UFORM_GPU_GPU_LOADER_H
#define UFORM_GPU_GPU_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dynamic_library.h"
#include "uform.h"

/** A device's PCI address as uform__gpu_pci_order takes it; `device` has pci_domain, pci_bus,
 *  pci_device and pci_function fields. */
#define UFORM__GPU_PCI_ADDRESS(device)                                                             \
    ((const uint32_t[4]){(device)->pci_domain, (device)->pci_bus, (device)->pci_device, (device)->pci_function})

/** qsort order of two devices by PCI address (domain, bus, device, function). Equal addresses
 *  cannot happen on real hardware; the vendor's order (its handles) is kept then. */
int uform__gpu_pci_order(const uint32_t x[4], const uint32_t y[4], int x_handle, int y_handle);

/** Parses a PCI bus id ("0000:19:00.0", hexadecimal) into the four fields; false, writing
 *  nothing, when it does not parse. */
bool uform__gpu_parse_pci_bus_id(const char *bus_id, uint32_t *domain, uint32_t *bus, uint32_t *device,
                                 uint32_t *function);

/** Reads one device, `ordinal` in the vendor's numbering, into `device` (the vendor's device
 *  struct); a failure is recorded in the loader, as the load's answer. */
typedef uform_status_t (*uform__gpu_read_device_t)(int ordinal, void *device);

/** A vendor's device snapshot: `count` (> 0) devices of `size` bytes each, read by `read` in the
 *  vendor's order, then sorted by `order` (qsort's, over PCI addresses) into the bus order the
 *  vendor's tools number them in. The array, zeroed before reading, into *devices. On failure
 *  nothing is kept: OUT_OF_MEMORY recorded in `loader` naming `vendor` ("CUDA", "HIP"), or `read`'s
 *  own failure. */
uform_status_t uform__gpu_read_devices(uform__library_t *loader, const char *vendor, int count, size_t size,
                                       uform__gpu_read_device_t read, int (*order)(const void *, const void *),
                                       void **devices);

#endif
