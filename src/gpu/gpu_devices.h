/* Internal: the device list with what the public struct leaves out (PCI address, nearest NUMA
 * node, compute capability), for `uform info` and the VRAM executor. */
#ifndef UFORM_GPU_DEVICES_H
#define UFORM_GPU_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu_classes.h" /* the class of a device */
#include "uform/hardware.h"

typedef struct uform__gpu_detail_t {
    uform_gpu_device_t device; /**< what uform_gpu_devices answers at this position */
    char pci_address[24];      /**< "0000:19:00.0", as sysfs spells it */
    int32_t numa_node;         /**< nearest NUMA node from sysfs; -1 when none or unknown */
    int32_t compute_major, compute_minor; /**< NVIDIA compute capability */
} uform__gpu_detail_t;

/** As uform_gpu_devices, with the details; same statuses. */
uform_status_t uform__gpu_details(uform__gpu_detail_t *details, size_t capacity, size_t *count);


/** Why the list is empty, in words; valid after a listing call. */
const char *uform__gpu_note(void);

/** One vendor's discovery, as the report says it. */
typedef struct uform__gpu_discovery_t {
    uint32_t vendor;         /**< uform_gpu_vendor_t */
    const char *runtime;     /**< "CUDA", "HIP" */
    uform_status_t status;   /**< OK (devices or none), or the load's failure (its devices are not listed) */
    size_t device_count;     /**< the devices it lists */
    bool library_found;      /**< a library was opened: false is the plain "no driver here" */
    const char *message;     /**< the failure's message, or why there are no devices ("" when there are) */
} uform__gpu_discovery_t;

/**
 * Each vendor's discovery (NVIDIA, then AMD), loading the runtimes if no call did yet: writes up to
 * `capacity` entries, answers how many vendors there are. The listing (uform_gpu_devices) shows
 * what worked; this says what did not: a failed vendor, the toolkit's stub libcuda ("CUDA stub
 * library, no driver"), a driver that sees no device. Leaves uform_last_error() as it found it.
 * The strings live as long as the process.
 */
size_t uform__gpu_discovery(uform__gpu_discovery_t *entries, size_t capacity);

/** True when `entry` says something the device list does not: a failure, or a library that was
 *  found yet lists no device (the stub, a driver without devices). */
bool uform__gpu_discovery_worth_saying(const uform__gpu_discovery_t *entry);

#endif
