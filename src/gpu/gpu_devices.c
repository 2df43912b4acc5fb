/* GPU discovery: NVIDIA devices from the run-time-loaded CUDA driver (src/gpu/cuda/cuda_loader.c),
 * in PCI bus order; AMD follows them once the HIP backend lands. The nearest NUMA node is read
 * through the hardware seam at every listing, so fixtures (and a moved seam) are honoured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/gpu_devices.h"
#include "hardware/seam.h"
#include "uform.h"

uform_gpu_class_t uform__gpu_class_of_compute_capability(int major, int minor) {
    if (major < 8) return UFORM_GPU_CLASS_NONE;
    if (major == 8 && minor == 9) return UFORM_GPU_CLASS_NVIDIA_ADA;
    if (major == 9) return UFORM_GPU_CLASS_NVIDIA_HOPPER;
    if (major == 10 && (minor == 0 || minor == 3)) return UFORM_GPU_CLASS_NVIDIA_BLACKWELL;
    if (major == 10 && minor == 7) return UFORM_GPU_CLASS_NVIDIA_RUBIN;
    if (major == 12) return UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX;
    /* The floor whose code runs on every newer GPU. */
    return UFORM_GPU_CLASS_NVIDIA_AMPERE;
}

/* sysfs's numa_node: the node id, or -1 when the platform does not say. */
static int32_t nearest_node(const char *pci_address) {
    char path[128], text[32];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", pci_address);
    if (uform__seam_read(path, text, sizeof text, NULL) != UFORM_STATUS_OK) return -1;
    char *end = NULL;
    long node = strtol(text, &end, 10);
    if (end == text || node < 0 || node > INT32_MAX) return -1;
    return (int32_t)node;
}

static void describe_cuda(const uform__cuda_device_t *device, uint32_t vendor_ordinal, uform__gpu_detail_t *out) {
    memset(out, 0, sizeof *out);
    out->device.vendor = UFORM_GPU_VENDOR_NVIDIA;
    out->device.vendor_ordinal = vendor_ordinal;
    out->device.gpu_class = (uint32_t)uform__gpu_class_of_compute_capability(device->compute_major,
                                                                               device->compute_minor);
    out->device.compute_units = device->multiprocessors;
    out->device.memory_bytes = device->memory_bytes;
    memcpy(out->device.name, device->name, sizeof out->device.name);
    snprintf(out->pci_address, sizeof out->pci_address, "%04x:%02x:%02x.%x", device->pci_domain & 0xFFFFu,
             device->pci_bus & 0xFFu, device->pci_device & 0x1Fu, device->pci_function & 0x7u);
    out->numa_node = nearest_node(out->pci_address);
    out->compute_major = device->compute_major;
    out->compute_minor = device->compute_minor;
}

/* Both listings share this: validation, then the vendors in order. */
static uform_status_t list(const char *verb, uform__gpu_detail_t *details, uform_gpu_device_t *devices,
                           size_t capacity, size_t *count) {
    if (!count) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: count is NULL", verb);
    if (!details && !devices && capacity)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: devices is NULL with capacity %zu", verb, capacity);
    *count = 0;
    const uform__cuda_t *cuda = NULL;
    uform_status_t status = uform__cuda_get(&cuda);
    if (status != UFORM_STATUS_OK) return status;
    size_t total = cuda ? cuda->device_count : 0;
    for (size_t i = 0; i < total && i < capacity; i++) {
        uform__gpu_detail_t detail;
        describe_cuda(&cuda->devices[i], (uint32_t)i, &detail);
        if (details) details[i] = detail;
        else devices[i] = detail.device;
    }
    *count = total;
    return UFORM_STATUS_OK;
}

uform_status_t uform_gpu_devices(uform_gpu_device_t *devices, size_t capacity, size_t *count) {
    return list("uform_gpu_devices", NULL, devices, capacity, count);
}

uform_status_t uform__gpu_details(uform__gpu_detail_t *details, size_t capacity, size_t *count) {
    return list("uform__gpu_details", details, NULL, capacity, count);
}

const char *uform__gpu_note(void) { return uform__cuda_note(); }
