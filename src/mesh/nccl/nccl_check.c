/* The device check's all-reduce over the communicators of the hand-off. They are non-blocking on
 * NCCL 2.14 and newer (nccl_communicators.c), so NCCL's group end answers ncclInProgress and issues
 * the kernels from a thread of its own: nothing else may touch the communicators or their streams
 * until ncclCommGetAsyncError says ncclSuccess, and buffers NCCL may still be enqueuing work on are
 * freed only once it has finished or been aborted. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "mesh/nccl/nccl_communicators.h"
#include "platform/platform.h"

/* Notes the first NCCL failure of `call` naming `what`; ncclInProgress is no failure for the calls
 * that may answer it (a non-blocking communicator's collective or group end). */
#define CHECK_NCCL_(call, what, in_progress_ok)                                                    \
    do {                                                                                           \
        uform_ncclResult result_ = (call);                                                         \
        if (result_ != UFORM_NCCL_SUCCESS && !((in_progress_ok) && result_ == UFORM_NCCL_IN_PROGRESS) && \
            status == UFORM_STATUS_OK)                                                             \
            status = uform__fail(uform__nccl_status(result_), "%s: %s: %s: %s", verb, what,       \
                                 uform__nccl_result_name(result_),                                 \
                                 uform__nccl_error_string(library, result_, buffer, sizeof buffer)); \
    } while (0)

typedef struct check_t {
    uform__vram_t *vram;
    const uform__nccl_api_t *library;
    uform_ncclComm *communicators;
    size_t count;
    void **buffers;
    float *values;
    int *ranks;
    int nranks;
} check_t;

static const char verb[] = "NCCL all-reduce check";

/* Each device's rank + 1 into a float of its memory. The copies are waited for before the
 * collective: on a GPU the stream would order them anyway; the NCCL test double reduces on the
 * host and needs them done. Nothing is handed to NCCL yet. */
static uform_status_t prepare(check_t *c) {
    const uform__nccl_api_t *library = c->library;
    uform_status_t status = UFORM_STATUS_OK;
    char buffer[32];
    for (size_t d = 0; d < c->count && status == UFORM_STATUS_OK; d++) {
        uform__gpu_device_t *device = &c->vram->devices[d];
        CHECK_NCCL_(library->ncclCommUserRank(c->communicators[d], &c->ranks[d]), "ncclCommUserRank", false);
        CHECK_NCCL_(library->ncclCommCount(c->communicators[d], &c->nranks), "ncclCommCount", false);
        if (status != UFORM_STATUS_OK) break;
        c->values[d] = (float)c->ranks[d] + 1.0f;
        status = device->backend->make_current(device);
        if (status == UFORM_STATUS_OK) status = device->backend->device_alloc(device, sizeof(float), &c->buffers[d]);
        if (status == UFORM_STATUS_OK)
            status = device->backend->copy_to_device_async(device, c->buffers[d], &c->values[d], sizeof(float));
        if (status == UFORM_STATUS_OK) status = device->backend->stream_wait(device);
    }
    return status;
}

/* One group around every device's part, as one thread drives them all, then every communicator
 * polled until NCCL has issued its part (or failed, or the deadline passed). */
static uform_status_t all_reduce(check_t *c, double timeout_seconds) {
    const uform__nccl_api_t *library = c->library;
    uform_status_t status = UFORM_STATUS_OK;
    char buffer[32];
    uint64_t deadline_ns = uform__now_ns() + (uint64_t)(timeout_seconds * 1e9);
    CHECK_NCCL_(library->ncclGroupStart(), "ncclGroupStart", false);
    if (status != UFORM_STATUS_OK) return status;
    for (size_t d = 0; d < c->count && status == UFORM_STATUS_OK; d++) {
        uform__gpu_device_t *device = &c->vram->devices[d];
        status = device->backend->make_current(device);
        if (status == UFORM_STATUS_OK)
            CHECK_NCCL_(library->ncclAllReduce(c->buffers[d], c->buffers[d], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM,
                                               c->communicators[d], (uform_ncclStream)device->stream),
                        "ncclAllReduce", true);
    }
    CHECK_NCCL_(library->ncclGroupEnd(), "ncclGroupEnd", true); /* ended even after a failure: the thread leaves it */
    if (status != UFORM_STATUS_OK) return status;
    return uform__nccl_await(library, c->communicators, c->count, c->ranks, 0, (size_t)c->nranks, deadline_ns,
                             timeout_seconds, NULL, verb, "the all-reduce");
}

/* Read back on each stream (ordered after the collective's kernels) and compared. */
static uform_status_t read_back(check_t *c) {
    uform_status_t status = UFORM_STATUS_OK;
    for (size_t d = 0; d < c->count && status == UFORM_STATUS_OK; d++) {
        uform__gpu_device_t *device = &c->vram->devices[d];
        c->values[d] = -1.0f;
        status = device->backend->make_current(device);
        if (status == UFORM_STATUS_OK)
            status = device->backend->copy_to_host_async(device, &c->values[d], c->buffers[d], sizeof(float));
        if (status == UFORM_STATUS_OK) status = device->backend->stream_wait(device);
    }
    float expected = (float)c->nranks * ((float)c->nranks + 1.0f) / 2.0f;
    for (size_t d = 0; d < c->count && status == UFORM_STATUS_OK; d++)
        if (c->values[d] != expected)
            status = uform__fail(UFORM_STATUS_MISMATCH, "%s: device %zu (rank %d of %d) read back %g, expected %g", verb,
                                 d, c->ranks[d], c->nranks, (double)c->values[d], (double)expected);
    return status;
}

static uform_status_t check(uform_executor_t *executor, uform__nccl_communicators_t *communicators,
                            double timeout_seconds) {
    check_t c = {0};
    uform_status_t status = uform__nccl_devices(executor, verb, &c.vram);
    if (status != UFORM_STATUS_OK) return status;
    if (!communicators || communicators->count != c.vram->device_count || !communicators->communicators)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the communicators are not this executor's (%zu devices)",
                           verb, c.vram->device_count);
    for (size_t d = 0; d < communicators->count; d++)
        if (!communicators->communicators[d])
            return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: device %zu's communicator is NULL (aborted)", verb,
                               d);
    status = uform__nccl_get(&c.library);
    if (status != UFORM_STATUS_OK) return status;
    c.count = c.vram->device_count;
    c.communicators = (uform_ncclComm *)communicators->communicators;
    size_t slots = c.count ? c.count : 1;
    c.buffers = uform__allocate_zeroed(slots, sizeof *c.buffers);
    c.values = uform__allocate_zeroed(slots, sizeof *c.values);
    c.ranks = uform__allocate_zeroed(slots, sizeof *c.ranks);
    if (!c.buffers || !c.values || !c.ranks)
        status = uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu devices", verb, c.count);
    if (status == UFORM_STATUS_OK) status = prepare(&c);
    if (status == UFORM_STATUS_OK) {
        status = all_reduce(&c, timeout_seconds);
        /* NCCL may still hold work on the buffers (a timeout, an error inside the group, a failed
         * communicator): abort first, so that nothing is enqueued on them once they are freed. */
        if (status != UFORM_STATUS_OK) uform__nccl_abort_all(c.library, c.communicators, c.count);
    }
    if (status == UFORM_STATUS_OK) status = read_back(&c);
    for (size_t d = 0; d < c.count && c.buffers; d++) {
        uform__vram_note_fault(executor, &c.vram->devices[d]); /* a sticky driver error seen here */
        if (c.buffers[d]) c.vram->devices[d].backend->device_free(&c.vram->devices[d], c.buffers[d]);
    }
    uform__deallocate(c.buffers);
    uform__deallocate(c.values);
    uform__deallocate(c.ranks);
    return status;
}

uform_status_t uform__nccl_all_reduce_check_bounded(uform_executor_t *executor,
                                                    uform__nccl_communicators_t *communicators,
                                                    double timeout_seconds) {
    /* Every device is made current in turn: the caller's context is given back after. */
    uintptr_t saved = 0;
    uform__gpu_device_t *saved_by = uform__nccl_save_caller(executor, &saved);
    uform_status_t status = check(executor, communicators, timeout_seconds);
    if (saved_by) saved_by->backend->restore_current(saved_by, saved);
    return status;
}

uform_status_t uform__nccl_all_reduce_check(uform_executor_t *executor, uform__nccl_communicators_t *communicators) {
    return uform__nccl_all_reduce_check_bounded(executor, communicators, 120.0);
}
