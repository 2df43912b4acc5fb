/* Internal: multicast over a VRAM executor's devices, for the mesh (src/mesh/), which names no
 * backend: each call checks the executor and hands its devices to their backend's optional
 * multicast operation (gpu_backend.h). */
#ifndef UFORM_GPU_GPU_MULTICAST_H
#define UFORM_GPU_GPU_MULTICAST_H

#include <stdbool.h>
#include <stddef.h>

#include "uform.h"

/** The backend's multimem_extent over the executor's devices; 1 for a RAM executor, devices of
 *  more than one backend or one without multicast, or in a fork()ed child. */
size_t uform__gpu_multimem_extent(uform_executor_t *executor);

/** The backend's multicast_probe over the executor's devices; false, with the reason in `why`,
 *  wherever uform__gpu_multimem_extent answers 1 for want of a backend that can. */
bool uform__gpu_multicast_probe(uform_executor_t *executor, char *why, size_t capacity);

#endif
