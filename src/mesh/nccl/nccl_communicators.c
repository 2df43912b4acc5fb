/* The communicators NCCL hands this process: one per device of a VRAM executor, each made with
 * its device current, all inside one group so that a process driving several GPUs does not
 * deadlock in ncclCommInitRank's rendezvous. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/memory.h"
#include "mesh/nccl/nccl_communicators.h"
#include "platform/platform.h"

/* ncclCommAbort rather than destroy: a communicator whose initialisation failed inside a group
 * cannot be ncclCommDestroy'ed (destroy waits for it to be ready). */
void uform__nccl_abort_all(const uform__nccl_api_t *library, uform_ncclComm *communicators, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (communicators[i]) {
            library->ncclCommAbort(communicators[i]);
            communicators[i] = NULL;
        }
}

uform_status_t uform__nccl_devices(uform_executor_t *executor, const char *verb, uform__vram_t **out) {
    if (!executor) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the executor is NULL", verb);
    if (!uform__vram_of(executor))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: NCCL needs a VRAM executor, not a RAM one", verb);
    if (uform__forked_since(executor->fork_generation))
        return uform__fail(UFORM_STATUS_FORKED, "%s: the executor was inherited across fork()", verb);
    uform__vram_t *vram = uform__vram_of(executor);
    for (size_t d = 0; d < vram->device_count; d++)
        if (vram->devices[d].vendor != UFORM_GPU_VENDOR_NVIDIA)
            return uform__fail(UFORM_STATUS_UNSUPPORTED, "%s: device %zu of the executor is not NVIDIA's (%s): NCCL "
                                                         "drives CUDA devices only", verb, d,
                               vram->devices[d].backend->name);
    *out = vram;
    return uform__vram_fault(executor, verb); /* a faulted executor stays so */
}

/* Sleeps the next step of a backoff (0.1 ms doubling to 50 ms, so a cancel is seen within 50 ms). */
static void pause_step(uint64_t *step_ns) {
    if (!*step_ns) *step_ns = 100000;
    struct timespec sleep_for = {0, (long)*step_ns};
    nanosleep(&sleep_for, NULL);
    if (*step_ns < 50000000) *step_ns *= 2;
}

uform_status_t uform__nccl_await(const uform__nccl_api_t *library, uform_ncclComm *communicators, size_t count,
                                const int *ranks, size_t first_rank, size_t nranks, uint64_t deadline_ns,
                                double timeout_seconds, const volatile int *cancel, const char *verb, const char *step) {
    char buffer[32];
    uint64_t step_ns = 0;
    for (;;) {
        size_t pending = 0;
        char unfinished[160] = "";
        for (size_t d = 0; d < count; d++) {
            size_t rank = ranks ? (size_t)ranks[d] : first_rank + d;
            uform_ncclResult state = UFORM_NCCL_SUCCESS;
            uform_ncclResult asked = library->ncclCommGetAsyncError(communicators[d], &state);
            if (asked == UFORM_NCCL_SUCCESS && state == UFORM_NCCL_IN_PROGRESS) {
                size_t used = strlen(unfinished);
                if (used + 24 < sizeof unfinished)
                    snprintf(unfinished + used, sizeof unfinished - used, "%s%zu", pending ? ", " : "", rank);
                pending++;
                continue;
            }
            uform_ncclResult failed = asked != UFORM_NCCL_SUCCESS ? asked : state;
            if (failed != UFORM_NCCL_SUCCESS)
                return uform__fail(uform__nccl_status(failed), "%s: %s of rank %zu of %zu (device %zu) failed: %s: %s",
                                   verb, step, rank, nranks, d, uform__nccl_result_name(failed),
                                   uform__nccl_error_string(library, failed, buffer, sizeof buffer));
        }
        if (!pending) return UFORM_STATUS_OK;
        if (cancel && *cancel)
            return uform__fail(UFORM_STATUS_INTERRUPTED, "%s: %s cancelled (ranks %s of %zu unfinished)", verb, step,
                               unfinished, nranks);
        if (uform__now_ns() >= deadline_ns)
            return uform__fail(UFORM_STATUS_TIMEOUT,
                               "%s: %s did not finish within %g s: this process's ranks %s of %zu never "
                               "finished (NCCL waits for every rank: another process died or stalled in it)",
                               verb, step, timeout_seconds, unfinished, nranks);
        pause_step(&step_ns);
    }
}

uform_status_t uform__nccl_communicators_create(uform_executor_t *executor, const uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES],
                                                size_t first_rank, size_t nranks, uform__nccl_communicators_t *out) {
    return uform__nccl_communicators_create_bounded(executor, id, first_rank, nranks, 120.0, NULL, out);
}

static uform_status_t create(uform_executor_t *executor, const uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES],
                             size_t first_rank, size_t nranks, double timeout_seconds, const volatile int *cancel,
                             uform__nccl_communicators_t *out) {
    static const char verb[] = "NCCL communicators";
    if (!out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: output is NULL", verb);
    memset(out, 0, sizeof *out);
    if (!id) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the unique id is NULL", verb);
    uint64_t deadline_ns = uform__now_ns() + (uint64_t)(timeout_seconds * 1e9);
    uform__vram_t *vram = NULL;
    uform_status_t status = uform__nccl_devices(executor, verb, &vram);
    if (status != UFORM_STATUS_OK) return status;
    size_t count = vram->device_count;
    if (nranks == 0 || nranks > INT_MAX || first_rank > nranks || count > nranks - first_rank)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: ranks %zu..%zu of %zu do not fit (NCCL takes 1 to %d ranks, each below the count)", verb,
                           first_rank, first_rank + count, nranks, INT_MAX);
    const uform__nccl_api_t *library = NULL;
    status = uform__nccl_get(&library);
    if (status != UFORM_STATUS_OK) return status;

    /* Non-blocking where NCCL has it (2.14 and newer): the wait is then uform's, bounded by the
     * deadline and the cancel flag. Older releases block in ncclGroupEnd until every rank joined,
     * however long that is. */
    int version = 0;
    if (library->ncclGetVersion(&version) != UFORM_NCCL_SUCCESS) version = 0;
    bool bounded = library->ncclCommInitRankConfig && version >= 21400;
    uform_ncclConfig config = {sizeof config,
                               UFORM_NCCL_CONFIG_MAGIC,
                               (unsigned)(version < UFORM_NCCL_CONFIG_VERSION_KNOWN ? version
                                                                                    : UFORM_NCCL_CONFIG_VERSION_KNOWN),
                               0,
                               UFORM_NCCL_CONFIG_UNDEF_INT,
                               UFORM_NCCL_CONFIG_UNDEF_INT,
                               UFORM_NCCL_CONFIG_UNDEF_INT,
                               NULL};

    uform_ncclComm *communicators = uform__allocate_zeroed(count ? count : 1, sizeof *communicators);
    if (!communicators) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu handles", verb, count);
    uform_ncclUniqueId unique;
    memcpy(unique.internal, id, UFORM_NCCL_UNIQUE_ID_BYTES);
    char buffer[32];

    /* Every device is made current once before the group: a blocking group's end waits for every
     * rank queued in it, so a device failing after another's rank was queued would leave that
     * rank waiting for ever for one this process never adds. */
    for (size_t d = 0; d < count && status == UFORM_STATUS_OK; d++) {
        status = vram->devices[d].backend->make_current(&vram->devices[d]);
        if (status != UFORM_STATUS_OK) uform__vram_note_fault(executor, &vram->devices[d]);
    }
    if (status != UFORM_STATUS_OK) { /* the backend's message names the driver's error */
        uform__deallocate(communicators);
        return status;
    }

    /* Inside the group the initialisations are only recorded; the outermost ncclGroupEnd starts
     * them all together (non-blocking: and returns ncclInProgress). A failure before it (an
     * argument NCCL refuses at once) stops adding ranks, but the group is still ended, so the
     * thread does not stay inside it, and every communicator made is then aborted: none is left
     * waiting for ranks that will never join (non-blocking; a blocking group's end waits for
     * them, which the pass above keeps a device from causing). */
    uform_ncclResult result = library->ncclGroupStart();
    if (result != UFORM_NCCL_SUCCESS) {
        uform__deallocate(communicators);
        return uform__fail(uform__nccl_status(result), "%s: ncclGroupStart: %s: %s", verb,
                           uform__nccl_result_name(result), uform__nccl_error_string(library, result, buffer, sizeof buffer));
    }
    for (size_t d = 0; d < count && status == UFORM_STATUS_OK; d++) {
        uform__gpu_device_t *device = &vram->devices[d];
        status = device->backend->make_current(device);
        if (status != UFORM_STATUS_OK) { /* the backend's message names the driver's error */
            uform__vram_note_fault(executor, device);
            break;
        }
        int rank = (int)(first_rank + d);
        result = bounded ? library->ncclCommInitRankConfig(&communicators[d], (int)nranks, unique, rank, &config)
                         : library->ncclCommInitRank(&communicators[d], (int)nranks, unique, rank);
        if (result != UFORM_NCCL_SUCCESS && !(bounded && result == UFORM_NCCL_IN_PROGRESS))
            status = uform__fail(uform__nccl_status(result),
                                 "%s: %s (rank %d of %zu, device %zu) answered %s: %s", verb,
                                 bounded ? "ncclCommInitRankConfig" : "ncclCommInitRank", rank, nranks, d,
                                 uform__nccl_result_name(result),
                                 uform__nccl_error_string(library, result, buffer, sizeof buffer));
    }
    result = library->ncclGroupEnd();
    if (result != UFORM_NCCL_SUCCESS && !(bounded && result == UFORM_NCCL_IN_PROGRESS) && status == UFORM_STATUS_OK)
        status = uform__fail(uform__nccl_status(result),
                             "%s: ncclGroupEnd (initialising ranks %zu..%zu of %zu) answered %s: %s", verb, first_rank,
                             first_rank + count - 1, nranks, uform__nccl_result_name(result),
                             uform__nccl_error_string(library, result, buffer, sizeof buffer));
    if (status == UFORM_STATUS_OK && bounded)
        status = uform__nccl_await(library, communicators, count, NULL, first_rank, nranks, deadline_ns,
                                   timeout_seconds, cancel, verb, "NCCL init");

    /* NCCL's own view must be the one asked for. */
    for (size_t d = 0; d < count && status == UFORM_STATUS_OK; d++) {
        int rank = -1, ranks = -1;
        uform_ncclResult asked = library->ncclCommUserRank(communicators[d], &rank);
        if (asked == UFORM_NCCL_SUCCESS) asked = library->ncclCommCount(communicators[d], &ranks);
        if (asked != UFORM_NCCL_SUCCESS)
            status = uform__fail(uform__nccl_status(asked), "%s: asking device %zu's communicator its rank: %s: %s",
                                 verb, d, uform__nccl_result_name(asked),
                                 uform__nccl_error_string(library, asked, buffer, sizeof buffer));
        else if (rank != (int)(first_rank + d) || ranks != (int)nranks)
            status = uform__fail(UFORM_STATUS_DEVICE_FAULT,
                                 "%s: device %zu's communicator is rank %d of %d, not %zu of %zu", verb, d, rank, ranks,
                                 first_rank + d, nranks);
    }
    if (status != UFORM_STATUS_OK) {
        uform__nccl_abort_all(library, communicators, count);
        uform__deallocate(communicators);
        return status;
    }
    out->count = count;
    out->communicators = (void **)communicators;
    return UFORM_STATUS_OK;
}

/* Saved before NCCL's devices are made current one by one and given back after: the caller's
 * runtime (PyTorch on cuda:1) keeps its device there. */
uform__gpu_device_t *uform__nccl_save_caller(uform_executor_t *executor, uintptr_t *saved) {
    uform__vram_t *vram = executor ? uform__vram_of(executor) : NULL;
    if (!vram || !vram->device_count || uform__forked_since(executor->fork_generation)) return NULL;
    uform__gpu_device_t *device = &vram->devices[0];
    if (!device->backend->save_current || !device->backend->restore_current) return NULL;
    char kept[512];
    snprintf(kept, sizeof kept, "%s", uform_last_error());
    bool ok = device->backend->save_current(device, saved) == UFORM_STATUS_OK;
    uform__fail(UFORM_STATUS_OK, "%s", kept); /* saving leaves the caller's last error */
    return ok ? device : NULL;
}

uform_status_t uform__nccl_communicators_create_bounded(uform_executor_t *executor,
                                                        const uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES], size_t first_rank,
                                                        size_t nranks, double timeout_seconds,
                                                        const volatile int *cancel, uform__nccl_communicators_t *out) {
    uintptr_t saved = 0;
    uform__gpu_device_t *saved_by = uform__nccl_save_caller(executor, &saved);
    uform_status_t status = create(executor, id, first_rank, nranks, timeout_seconds, cancel, out);
    if (saved_by) saved_by->backend->restore_current(saved_by, saved);
    return status;
}

void uform__nccl_communicators_destroy(uform__nccl_communicators_t *communicators) {
    if (!communicators) return;
    if (communicators->communicators) {
        /* A fork()ed child never calls NCCL: the communicators are the parent's; only the
         * array, which is the child's copy, is freed. */
        const uform__nccl_api_t *library = NULL;
        char saved[512];
        snprintf(saved, sizeof saved, "%s", uform_last_error());
        if (uform__nccl_get(&library) == UFORM_STATUS_OK)
            for (size_t i = 0; i < communicators->count; i++) {
                uform_ncclComm communicator = (uform_ncclComm)communicators->communicators[i];
                if (!communicator) continue;
                /* ncclCommDestroy of a communicator with work in progress or an asynchronous
                 * error answers an error and frees nothing; ncclCommAbort frees it in any state. */
                uform_ncclResult state = UFORM_NCCL_SUCCESS;
                if (library->ncclCommGetAsyncError(communicator, &state) != UFORM_NCCL_SUCCESS ||
                    state != UFORM_NCCL_SUCCESS)
                    library->ncclCommAbort(communicator);
                else
                    library->ncclCommDestroy(communicator);
            }
        uform__fail(UFORM_STATUS_OK, "%s", saved); /* destroying leaves the caller's last error */
        uform__deallocate(communicators->communicators);
    }
    communicators->communicators = NULL;
    communicators->count = 0;
}
