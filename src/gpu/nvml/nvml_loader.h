/* Internal: NVML, loaded at run time for what the CUDA driver API does not say: which GPUs an
 * NVLink joins (nvidia-smi topo -m's NV#). Optional everywhere: without libnvidia-ml.so.1 (or
 * UFORM_NVML_LIBRARY), or when it fails, the link counts are unknown and the reason is said;
 * nothing fails because of it. */
#ifndef UFORM_GPU_NVML_LOADER_H
#define UFORM_GPU_NVML_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "uform/status.h"

/**
 * The active NVLinks between each pair of `count` GPUs named by PCI address ("0000:1b:00.0"):
 * `nvlinks[i * count + j]` is how many active links of GPU i have GPU j at their far end, or
 * an NVSwitch that GPU j also has a link to (0 for none, the diagonal 0), or -1 where NVML
 * cannot say (no such GPU in NVML, a link query failing). The whole matrix is -1 when NVML is absent or fails to start; the status then
 * says why (NOT_FOUND without the library, UNSUPPORTED for a library lacking an entry point,
 * DEVICE_FAULT for a failing nvmlInit_v2) with the message in `why` ("" on OK). Each call
 * starts NVML and shuts it down again (nvmlInit_v2 and nvmlShutdown count), so no NVML state
 * outlives the question and a fork()ed child asks afresh. Thread-safe.
 */
uform_status_t uform__nvml_nvlinks(const char *const *pci_addresses, size_t count, int32_t *nvlinks, char *why,
                                   size_t capacity);

#endif
