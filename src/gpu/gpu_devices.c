/* GPU discovery: NVIDIA devices from the run-time-loaded CUDA driver (src/gpu/cuda/cuda_loader.c),
 * then AMD devices from the run-time-loaded HIP runtime (src/gpu/hip/hip_loader.c), each vendor in
 * PCI bus order; a vendor that fails lists nothing and is reported (uform__gpu_discovery). The nearest NUMA node is read through the hardware seam at every listing, so
 * fixtures (and a moved seam) are honoured. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/gpu_classes.h"
#include "gpu/gpu_devices.h"
#include "gpu/hip/hip_loader.h"
#include "hardware/seam.h"
#include "uform.h"

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

/* The device's PCI address as sysfs spells it ("0000:19:00.0") and the NUMA node nearest it. */
static void place_on_bus(uform__gpu_detail_t *out, uint32_t domain, uint32_t bus, uint32_t device,
                         uint32_t function) {
    snprintf(out->pci_address, sizeof out->pci_address, "%04x:%02x:%02x.%x", domain & 0xFFFFu, bus & 0xFFu,
             device & 0x1Fu, function & 0x7u);
    out->numa_node = nearest_node(out->pci_address);
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
    place_on_bus(out, device->pci_domain, device->pci_bus, device->pci_device, device->pci_function);
    out->compute_major = device->compute_major;
    out->compute_minor = device->compute_minor;
}

static void describe_hip(const uform__hip_device_t *device, uint32_t vendor_ordinal, uform__gpu_detail_t *out) {
    memset(out, 0, sizeof *out);
    out->device.vendor = UFORM_GPU_VENDOR_AMD;
    out->device.vendor_ordinal = vendor_ordinal;
    out->device.gpu_class = (uint32_t)uform__gpu_class_of_gcn_arch(device->arch);
    out->device.compute_units = device->compute_units;
    out->device.memory_bytes = device->memory_bytes;
    memcpy(out->device.name, device->name, sizeof out->device.name);
    place_on_bus(out, device->pci_domain, device->pci_bus, device->pci_device, device->pci_function);
    /* HIP's own major.minor (9.4 for gfx942); the class comes from the architecture name. */
    out->compute_major = device->major;
    out->compute_minor = device->minor;
}

/* Both listings share this: validation, then the vendors in order. A vendor whose runtime fails
 * lists nothing and does not hide the other's devices; only when no vendor lists a device is the
 * first failure the answer (uform__gpu_discovery says what failed either way). */
static uform_status_t list(const char *caller, uform__gpu_detail_t *details, uform_gpu_device_t *devices,
                           size_t capacity, size_t *count) {
    if (!count) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: count is NULL", caller);
    if (!details && !devices && capacity)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: devices is NULL with capacity %zu", caller, capacity);
    *count = 0;
    char first_failure[512] = "";
    uform_status_t failure = UFORM_STATUS_OK;
    const uform__cuda_t *cuda = NULL;
    uform_status_t status = uform__cuda_get(&cuda);
    if (status != UFORM_STATUS_OK) {
        failure = status;
        snprintf(first_failure, sizeof first_failure, "%s", uform_last_error());
    }
    const uform__hip_t *hip = NULL;
    status = uform__hip_get(&hip);
    if (status != UFORM_STATUS_OK && failure == UFORM_STATUS_OK) {
        failure = status;
        snprintf(first_failure, sizeof first_failure, "%s", uform_last_error());
    }
    size_t nvidia = cuda ? cuda->device_count : 0;
    size_t amd = hip ? hip->device_count : 0;
    size_t total = nvidia + amd;
    if (!total && failure != UFORM_STATUS_OK) return uform__fail(failure, "%s", first_failure);
    for (size_t i = 0; i < total && i < capacity; i++) {
        uform__gpu_detail_t detail;
        if (i < nvidia) describe_cuda(&cuda->devices[i], (uint32_t)i, &detail);
        else describe_hip(&hip->devices[i - nvidia], (uint32_t)(i - nvidia), &detail);
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

/* Both runtimes' notes, CUDA's first; each is fixed once its runtime has loaded. */
static pthread_once_t note_once = PTHREAD_ONCE_INIT;
static char note[1100];

static void join_notes(void) {
    const char *cuda = uform__cuda_note(), *hip = uform__hip_note();
    snprintf(note, sizeof note, "%s%s%s", cuda, *cuda && *hip ? "; " : "", hip);
}

const char *uform__gpu_note(void) {
    pthread_once(&note_once, join_notes);
    return note;
}

/* One vendor's entry from its load. */
static void discovery_of(const uform__library_t *library, uint32_t vendor, const char *runtime, size_t devices,
                         uform__gpu_discovery_t *entry) {
    entry->vendor = vendor;
    entry->runtime = runtime;
    entry->status = library->status;
    entry->device_count = library->status == UFORM_STATUS_OK ? devices : 0;
    entry->library_found = library->handle != NULL;
    entry->message = library->status != UFORM_STATUS_OK ? library->message : library->note;
}

size_t uform__gpu_discovery(uform__gpu_discovery_t *entries, size_t capacity) {
    char saved[512];
    snprintf(saved, sizeof saved, "%s", uform_last_error());
    const uform__cuda_t *cuda = NULL;
    const uform__hip_t *hip = NULL;
    (void)uform__cuda_get(&cuda);
    (void)uform__hip_get(&hip);
    uform__gpu_discovery_t found[2];
    discovery_of(uform__cuda_library(), UFORM_GPU_VENDOR_NVIDIA, "CUDA", cuda ? cuda->device_count : 0, &found[0]);
    discovery_of(uform__hip_library(), UFORM_GPU_VENDOR_AMD, "HIP", hip ? hip->device_count : 0, &found[1]);
    for (size_t i = 0; i < 2 && i < capacity; i++) entries[i] = found[i];
    (void)uform__fail(UFORM_STATUS_OK, "%s", saved);
    return 2;
}

bool uform__gpu_discovery_worth_saying(const uform__gpu_discovery_t *entry) {
    return entry->status != UFORM_STATUS_OK || (entry->library_found && entry->device_count == 0 && *entry->message);
}
