/* Internal: what nccl_communicators.c (the hand-off) shares with nccl_check.c (the device check):
 * refusing executors NCCL cannot serve, polling non-blocking communicators, aborting them, and
 * saving the caller's current context around the devices made current. */
#ifndef UFORM_MESH_NCCL_COMMUNICATORS_H
#define UFORM_MESH_NCCL_COMMUNICATORS_H

#include "gpu/vram_internal.h"
#include "mesh/nccl/nccl_loader.h"

/** The executor's devices (`*out`), or why NCCL cannot serve it: NULL or RAM executor, fork()ed,
 *  a device not NVIDIA's, a faulted executor. */
uform_status_t uform__nccl_devices(uform_executor_t *executor, const char *verb, uform__vram_t **out);

/**
 * Polls ncclCommGetAsyncError of every communicator until all answer ncclSuccess (OK), one fails
 * (its status, naming `step`, the rank and the device), the deadline passes (TIMEOUT naming the
 * ranks unfinished) or `*cancel` is set (INTERRUPTED). A non-blocking communicator's state is
 * ncclInProgress while NCCL still works on it; a blocking one's is never. `ranks[d]` (NULL:
 * first_rank + d) is device d's rank, for the messages.
 */
uform_status_t uform__nccl_await(const uform__nccl_api_t *library, uform_ncclComm *communicators, size_t count,
                                const int *ranks, size_t first_rank, size_t nranks, uint64_t deadline_ns,
                                double timeout_seconds, const volatile int *cancel, const char *verb, const char *step);

/** ncclCommAbort of every non-NULL communicator, each set to NULL: frees them in any state and
 *  stops what NCCL still runs on them. Errors are ignored: nothing better can be done with them. */
void uform__nccl_abort_all(const uform__nccl_api_t *library, uform_ncclComm *communicators, size_t count);

/** Saves the calling thread's current context or device in `*saved` (the caller's last error
 *  kept): the device whose backend restore_current gives it back, NULL when there is nothing to
 *  give back. */
uform__gpu_device_t *uform__nccl_save_caller(uform_executor_t *executor, uintptr_t *saved);

#endif
