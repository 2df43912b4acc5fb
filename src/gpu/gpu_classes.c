/* The GPU class of a device, from one table (gpu_classes.h).
 *
 * NVIDIA rows: the compute capabilities CUDA 13.0 lists as supported (its release notes and
 * programming guide: 7.5, 8.0, 8.6, 8.7, 8.8, 8.9, 9.0, 10.0, 10.3, 11.0, 12.0, 12.1), each
 * confirmed; a capability CUDA 13.0 does not list is marked unconfirmed (10.7 -> nvidia_rubin is
 * a guess at Rubin's number until a driver reports it). Capabilities without a row below 8.0
 * have no class; from 8.0 up they take the Ampere floor, whose code every newer GPU runs.
 *
 * AMD rows: the gcnArchName processors ROCm 7.0's supported-GPU list names (gfx942 for MI300X
 * and MI325X, gfx950 for MI350X and MI355X), confirmed; gfx1250 -> amd_cdna5 is not yet on that
 * list, so unconfirmed. Any other AMD GPU has no class. */
#include "gpu/gpu_classes.h"

#include <string.h>

static const uform__gpu_class_row_t rows[] = {
    {UFORM_GPU_VENDOR_NVIDIA, 7, 5, NULL, UFORM_GPU_CLASS_NONE, true}, /* Turing: below the floor */
    {UFORM_GPU_VENDOR_NVIDIA, 8, 0, NULL, UFORM_GPU_CLASS_NVIDIA_AMPERE, true},
    {UFORM_GPU_VENDOR_NVIDIA, 8, 6, NULL, UFORM_GPU_CLASS_NVIDIA_AMPERE, true},
    {UFORM_GPU_VENDOR_NVIDIA, 8, 7, NULL, UFORM_GPU_CLASS_NVIDIA_AMPERE, true},
    {UFORM_GPU_VENDOR_NVIDIA, 8, 8, NULL, UFORM_GPU_CLASS_NVIDIA_AMPERE, true},
    {UFORM_GPU_VENDOR_NVIDIA, 8, 9, NULL, UFORM_GPU_CLASS_NVIDIA_ADA, true},
    {UFORM_GPU_VENDOR_NVIDIA, 9, 0, NULL, UFORM_GPU_CLASS_NVIDIA_HOPPER, true},
    {UFORM_GPU_VENDOR_NVIDIA, 9, -1, NULL, UFORM_GPU_CLASS_NVIDIA_HOPPER, false},
    {UFORM_GPU_VENDOR_NVIDIA, 10, 0, NULL, UFORM_GPU_CLASS_NVIDIA_BLACKWELL, true},
    {UFORM_GPU_VENDOR_NVIDIA, 10, 3, NULL, UFORM_GPU_CLASS_NVIDIA_BLACKWELL, true},
    {UFORM_GPU_VENDOR_NVIDIA, 10, 7, NULL, UFORM_GPU_CLASS_NVIDIA_RUBIN, false},
    {UFORM_GPU_VENDOR_NVIDIA, 11, 0, NULL, UFORM_GPU_CLASS_NVIDIA_AMPERE, true}, /* Thor: the floor */
    {UFORM_GPU_VENDOR_NVIDIA, 12, 0, NULL, UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX, true},
    {UFORM_GPU_VENDOR_NVIDIA, 12, 1, NULL, UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX, true},
    {UFORM_GPU_VENDOR_NVIDIA, 12, -1, NULL, UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX, false},
    {UFORM_GPU_VENDOR_AMD, 0, 0, "gfx942", UFORM_GPU_CLASS_AMD_CDNA3, true},
    {UFORM_GPU_VENDOR_AMD, 0, 0, "gfx950", UFORM_GPU_CLASS_AMD_CDNA4, true},
    {UFORM_GPU_VENDOR_AMD, 0, 0, "gfx1250", UFORM_GPU_CLASS_AMD_CDNA5, false},
};

const uform__gpu_class_row_t *uform__gpu_class_rows(size_t *count) {
    if (count) *count = sizeof rows / sizeof rows[0];
    return rows;
}

uform_gpu_class_t uform__gpu_class_of_compute_capability(int major, int minor) {
    /* An exact row first, then a row for every minor of the major. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
            if (rows[i].vendor == UFORM_GPU_VENDOR_NVIDIA && rows[i].major == major &&
                rows[i].minor == (pass == 0 ? minor : -1))
                return rows[i].gpu_class;
    return major < 8 ? UFORM_GPU_CLASS_NONE : UFORM_GPU_CLASS_NVIDIA_AMPERE;
}

uform_gpu_class_t uform__gpu_class_of_gcn_arch(const char *gcn_arch_name) {
    if (!gcn_arch_name) return UFORM_GPU_CLASS_NONE;
    size_t length = strcspn(gcn_arch_name, ":"); /* "gfx942:sramecc+:xnack-": the target features follow */
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].vendor == UFORM_GPU_VENDOR_AMD && strlen(rows[i].arch) == length &&
            strncmp(gcn_arch_name, rows[i].arch, length) == 0)
            return rows[i].gpu_class;
    return UFORM_GPU_CLASS_NONE;
}
