/* Internal: the CUDA backend's multicast operations (gpu_backend.h's multimem_extent and
 * multicast_probe), in cuda_multicast.c. */
#ifndef UFORM_GPU_CUDA_MULTICAST_H
#define UFORM_GPU_CUDA_MULTICAST_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/gpu_backend.h"

size_t uform__cuda_multimem_extent(const uform__gpu_device_t *devices, size_t count);
bool uform__cuda_multicast_probe(const uform__gpu_device_t *devices, size_t count, char *why, size_t capacity);

#endif
