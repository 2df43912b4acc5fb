/* Internal: NCCL, loaded at run time. One load per process: dlopen of libnccl.so.2 (or
 * UFORM_NCCL_LIBRARY) and every entry point of UFORM_NCCL_ENTRY_POINTS bound. The mesh's
 * seam (uform__nccl_available, ..._unique_id, ..._communicators_*) is declared in
 * mesh/mesh_internal.h; this header adds what nccl/ shares inside itself and the device check. */
#ifndef UFORM_MESH_NCCL_LOADER_H
#define UFORM_MESH_NCCL_LOADER_H

#include <stdint.h>

#include "mesh/mesh_internal.h"
#include "mesh/nccl/nccl_abi.h"

/** The bound entry points, one field per UFORM_NCCL_ENTRY_POINTS row. */
typedef struct uform__nccl_api_t {
#define UFORM_NCCL_API_FIELD_(field, symbol, type) type field;
    UFORM_NCCL_ENTRY_POINTS(UFORM_NCCL_API_FIELD_)
    UFORM_NCCL_OPTIONAL_ENTRY_POINTS(UFORM_NCCL_API_FIELD_)
#undef UFORM_NCCL_API_FIELD_
} uform__nccl_api_t;

/**
 * The loaded library, loading it on the first call (thread-safe; later calls only read).
 * NOT_FOUND without libnccl ("no NCCL: <dlerror>"), UNSUPPORTED naming a missing entry point;
 * a failure is the process's answer from then on (same status, same message). In a child
 * fork()ed after the load, FORKED: a child never calls the parent's NCCL (one forked before the
 * load loads afresh).
 */
uform_status_t uform__nccl_get(const uform__nccl_api_t **api);

/** NCCL's string for `result` ("unhandled system error ..."), or "ncclResult_t <n>" when the
 *  library cannot say. `buffer` (at least 32 bytes) holds the fallback. */
const char *uform__nccl_error_string(const uform__nccl_api_t *api, uform_ncclResult result, char *buffer,
                                     size_t capacity);

/** The enumerator's name ("ncclSystemError"), or "ncclResult_t" for a value uform does not name. */
const char *uform__nccl_result_name(uform_ncclResult result);

/** The status uform answers for an NCCL failure: INVALID_ARGUMENT for ncclInvalidArgument and
 *  ncclInvalidUsage, IO_ERROR for ncclSystemError and ncclRemoteError, TIMEOUT for ncclTimeout,
 *  DEVICE_FAULT otherwise. */
uform_status_t uform__nccl_status(uform_ncclResult result);

/**
 * For scripts/device-check: all-reduces (sum) one float per device over `communicators` (made by
 * uform__nccl_communicators_create for this VRAM executor): each rank r contributes r + 1 on its
 * device's stream, and every device must read back nranks * (nranks + 1) / 2. Collective: every
 * process of the run calls it. The executor must be idle (nothing else on its streams), and no
 * NCCL operation in progress on the communicators. On non-blocking communicators NCCL answers
 * ncclInProgress and the check polls ncclCommGetAsyncError until every one is done, 120 s at most.
 * MISMATCH names the device and both values; an NCCL or driver failure keeps its own status and
 * message (naming the call, or "the all-reduce" for a failure NCCL reports asynchronously);
 * TIMEOUT names the ranks unfinished. After a failure once the collective was handed to NCCL,
 * every communicator has been aborted (ncclCommAbort, before the check's buffers were freed) and
 * set to NULL in `communicators`: they are unusable, and a caller holding copies of the handles
 * must not destroy them. The calling thread's current context is the same after as before.
 */
uform_status_t uform__nccl_all_reduce_check(uform_executor_t *executor, uform__nccl_communicators_t *communicators);

/** uform__nccl_all_reduce_check waiting at most `timeout_seconds` for NCCL. */
uform_status_t uform__nccl_all_reduce_check_bounded(uform_executor_t *executor,
                                                    uform__nccl_communicators_t *communicators,
                                                    double timeout_seconds);

#endif
