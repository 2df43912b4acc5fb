/* Placeholders while the multicast probe is written (removed when it lands): no multicast.
 * Nothing pretends: a mesh formed with these has PEER_READ, which is what a machine without
 * NVSwitch gets. (The NCCL hand-off's placeholders went when src/mesh/nccl/ landed.) */
#include "core/error.h"
#include "mesh/mesh_internal.h"

size_t uform__mesh_multimem_extent(uform_executor_t *executor) {
    (void)executor;
    return 1;
}

bool uform__mesh_multicast_probe(uform_executor_t *executor, char *why, size_t capacity) {
    (void)executor;
    if (why && capacity) why[0] = 0;
    return false;
}
