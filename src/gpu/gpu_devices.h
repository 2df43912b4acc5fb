/* Internal: the device list with what the public struct leaves out (PCI address, nearest NUMA
 * node, compute capability), for `uform info` and the VRAM executor. */
#ifndef UFORM_GPU_DEVICES_H
#define UFORM_GPU_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "uform/hardware.h"

typedef struct uform__gpu_detail_t {
    uform_gpu_device_t device; /**< what uform_gpu_devices answers at this position */
    char pci_address[24];      /**< "0000:19:00.0", as sysfs spells it */
    int32_t numa_node;         /**< nearest NUMA node from sysfs; -1 when none or unknown */
    int32_t compute_major, compute_minor; /**< NVIDIA compute capability */
} uform__gpu_detail_t;

/** As uform_gpu_devices, with the details; same statuses. */
uform_status_t uform__gpu_details(uform__gpu_detail_t *details, size_t capacity, size_t *count);

/** The GPU class (uform/hardware.h) whose kernels run on an NVIDIA GPU of this compute capability. */
uform_gpu_class_t uform__gpu_class_of_compute_capability(int major, int minor);

/** Why the list is empty, in words; valid after a listing call. */
const char *uform__gpu_note(void);

#endif
