/* Internal: what the GPU loaders (cuda/cuda_loader.c, hip/hip_loader.c) share beyond the library
 * loading of core/dynamic_library.h: both list their devices in PCI bus order. */
#ifndef UFORM_GPU_GPU_LOADER_H
#define UFORM_GPU_GPU_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
