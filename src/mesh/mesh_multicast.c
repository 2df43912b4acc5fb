/* This process's NVLink domain and the multicast create-and-bind probe (mesh_internal.h): the
 * GPU layer's answers for the executor (gpu/gpu_multicast.h); the mesh names no backend. */
#include "gpu/gpu_multicast.h"
#include "mesh/mesh_internal.h"

size_t uform__mesh_multimem_extent(uform_executor_t *executor) { return uform__gpu_multimem_extent(executor); }

bool uform__mesh_multicast_probe(uform_executor_t *executor, char *why, size_t capacity) {
    return uform__gpu_multicast_probe(executor, why, capacity);
}
