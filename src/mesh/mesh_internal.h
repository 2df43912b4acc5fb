/* Internal: the mesh's parts and the seams between them.
 *   mesh_bootstrap.c   the public verbs: validation, the executor's reference, the description
 *   mesh_rendezvous.c  meeting the run's processes in directory/job/ (mesh_rendezvous.h; index
 *                      0's side in mesh_lead.c, the others' in mesh_follow.c, the files'
 *                      formats in mesh_records.c, what they share in mesh_session.h)
 *   mesh_files.c       whole-file writes and reads relative to the job directory (NFS-safe)
 *   mesh_multicast.c   this process's NVLink domain and the multicast create-and-bind probe
 *   nccl/              libnccl.so.2 loaded at run time, and the communicators it hands out */
#ifndef UFORM_MESH_INTERNAL_H
#define UFORM_MESH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uform.h"

/** NCCL's ncclUniqueId is 128 opaque bytes (NCCL_UNIQUE_ID_BYTES). */
#define UFORM_NCCL_UNIQUE_ID_BYTES 128

/* ---- mesh_multicast.c (CUDA only: other vendors are one-GPU domains without multicast) ---- */

/**
 * How many of the executor's devices form one NVLink domain on this host: those that support
 * multicast (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) and can all access each other as peers;
 * 1 when fewer than two do, when the devices are not CUDA's, or in a fork()ed child.
 */
size_t uform__mesh_multimem_extent(uform_executor_t *executor);

/**
 * The multicast create-and-bind probe: a multicast object over every device of the executor,
 * each device added, physical memory of the object's granularity created on each device and
 * bound to it, then everything released. True only when every step succeeded on every device.
 * Never a status: a failing step is the answer "no", with the driver's error name in `why`
 * (`capacity` bytes, may be NULL). Nothing stays allocated either way.
 */
bool uform__mesh_multicast_probe(uform_executor_t *executor, char *why, size_t capacity);

/* ---- nccl/ ---- */

/** One communicator per device of this process, spanning the run. */
typedef struct uform__nccl_communicators_t {
    size_t count;          /* the executor's devices */
    void **communicators;  /* ncclComm_t each, rank = first_rank + device */
} uform__nccl_communicators_t;

/**
 * Loads libnccl.so.2 (UFORM_NCCL_LIBRARY overrides) once per process. OK when loaded; NOT_FOUND
 * when there is no NCCL here (the mesh then has no data plane; uform_last_error() says why);
 * UNSUPPORTED naming a missing entry point. `version` (may be NULL) receives ncclGetVersion's code.
 */
uform_status_t uform__nccl_available(int *version);

/** ncclGetUniqueId: the id index 0 publishes in the roster. */
uform_status_t uform__nccl_unique_id(uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES]);

/**
 * Creates this process's communicators: for each device d of the executor (its context current),
 * ncclCommInitRank(nranks, id, first_rank + d), all inside one ncclGroupStart/ncclGroupEnd so a
 * process driving several GPUs does not deadlock. Collective: every process of the run calls it.
 * On failure nothing stays created; the message names NCCL's error string.
 */
uform_status_t uform__nccl_communicators_create(uform_executor_t *executor, const uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES],
                                                size_t first_rank, size_t nranks, uform__nccl_communicators_t *out);

/**
 * The same, bounded: with NCCL 2.14 and newer, ncclCommInitRankConfig with blocking = 0, then
 * ncclCommGetAsyncError polled (at least every 50 ms) until every communicator is ready, one
 * fails, `timeout_seconds` pass (TIMEOUT naming "NCCL init" and this process's ranks that never
 * finished: NCCL never notices a dead peer) or `*cancel` (may be NULL) turns nonzero
 * (INTERRUPTED). On any failure, uform's own inside the group included, every communicator made
 * is aborted (ncclCommAbort). Older NCCLs (no ncclCommInitRankConfig) take the blocking path:
 * unbounded, as NCCL waits for every rank. uform__nccl_communicators_create bounds it by 120 s.
 */
uform_status_t uform__nccl_communicators_create_bounded(uform_executor_t *executor,
                                                        const uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES], size_t first_rank,
                                                        size_t nranks, double timeout_seconds,
                                                        const volatile int *cancel, uform__nccl_communicators_t *out);

/** ncclCommDestroy of each (ncclCommAbort of one whose state is not ncclSuccess; errors ignored),
 *  then the array. Safe on a zeroed struct. */
void uform__nccl_communicators_destroy(uform__nccl_communicators_t *communicators);

#endif
