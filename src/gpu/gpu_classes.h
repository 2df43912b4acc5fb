/* Internal: which GPU class (uform/hardware.h) a device is, from what its runtime reports: one
 * table for both vendors (gpu_classes.c), each row saying whether its source confirms it. */
#ifndef UFORM_GPU_GPU_CLASSES_H
#define UFORM_GPU_GPU_CLASSES_H

#include <stdbool.h>
#include <stddef.h>

#include "uform/hardware.h"

/** One row of the mapping. */
typedef struct uform__gpu_class_row_t {
    uint32_t vendor;             /**< UFORM_GPU_VENDOR_NVIDIA or _AMD */
    int major, minor;            /**< NVIDIA: the compute capability; minor -1 is every minor of `major` */
    const char *arch;            /**< AMD: the gcnArchName processor ("gfx942"); NULL for NVIDIA */
    uform_gpu_class_t gpu_class; /**< NONE: a device below the classes' floor */
    bool confirmed;              /**< listed by the row's source; false: a guess no driver has shown yet */
} uform__gpu_class_row_t;

/** The whole table, NVIDIA rows first; `count` receives its length. */
const uform__gpu_class_row_t *uform__gpu_class_rows(size_t *count);

/** The class whose kernels run on an NVIDIA GPU of this compute capability: the table's row, else
 *  no class below 8.0 and the Ampere floor (whose code runs on every newer GPU) from 8.0 up. */
uform_gpu_class_t uform__gpu_class_of_compute_capability(int major, int minor);

/** The class of an AMD GPU from its gcnArchName ("gfx942:sramecc+:xnack-" is amd_cdna3); the
 *  target features after ':' are ignored; an architecture the table lacks has no class. */
uform_gpu_class_t uform__gpu_class_of_gcn_arch(const char *gcn_arch_name);

#endif
