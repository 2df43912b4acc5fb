/* Placeholders while the multicast probe and the NCCL hand-off are written (removed when they
 * land): no multicast, no NCCL. Nothing pretends: a mesh formed with these has PEER_READ and no
 * data plane, which is what a machine without NVSwitch or NCCL gets. */
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

uform_status_t uform__nccl_available(int *version) {
    (void)version;
    return uform__fail(UFORM_STATUS_NOT_FOUND, "no NCCL: the NCCL loader is not built yet");
}

uform_status_t uform__nccl_unique_id(uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES]) {
    (void)id;
    return uform__fail(UFORM_STATUS_NOT_FOUND, "no NCCL");
}

uform_status_t uform__nccl_communicators_create(uform_executor_t *executor, const uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES],
                                                size_t first_rank, size_t nranks, uform__nccl_communicators_t *out) {
    (void)executor, (void)id, (void)first_rank, (void)nranks, (void)out;
    return uform__fail(UFORM_STATUS_NOT_FOUND, "no NCCL");
}

void uform__nccl_communicators_destroy(uform__nccl_communicators_t *communicators) { (void)communicators; }
