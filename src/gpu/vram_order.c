/* uform_executor_order_stream: another stream (a framework's: PyTorch's, CuPy's) waits, on the
 * device, for the work the executor's calls submitted before it queue on one device's stream.
 *
 * Calls run one at a time, and each VRAM call drains its stream before it finishes, so the
 * earlier calls' device work is all on the stream once every one of them has finished but the
 * last, and the last one (the one running) has queued everything it will queue on that device
 * (`settled`, set by its body in vram_verbs.c). Until then the caller waits on the host; from
 * then on nothing waits on the host: an event recorded on the executor's stream and
 * cuStreamWaitEvent / hipStreamWaitEvent make the foreign stream wait on the device. */
#include <stdio.h>
#include <time.h>

#include "core/error.h"
#include "gpu/vram_internal.h"

/* Whether every call submitted before has queued all its work on `device`'s stream: none is
 * queued or running, or the one running is a VRAM call settled on this device. CONTENDED when
 * another thread's synchronous call holds the executor or waits for it. */
static uform_status_t earlier_calls_queued(uform_executor_t *executor, const uform__gpu_device_t *device,
                                           bool *queued, const char *caller) {
    /* The word as it is with the bias revoked: a call its owner runs shows as BIASED. */
    uint32_t hold = uform__hold_settled(executor);
    if (hold & (UFORM_HOLD_RUNNING | UFORM_HOLD_CLAIM))
        return uform__fail(UFORM_STATUS_CONTENDED,
                           "%s: another thread's call holds this executor (an executor runs one call at a time)", caller);
    size_t outstanding = atomic_load(&executor->outstanding);
    /* `settled` is read after `outstanding`: a call clears it before it is counted out, so a
     * settled device seen with one call outstanding is that call's. */
    *queued = outstanding == 0 || (outstanding == 1 && atomic_load(&device->settled));
    return UFORM_STATUS_OK;
}

/* Sleeps between looks, from 20 us up to 1 ms: the earlier calls' own time is what is waited for. */
static void pause_for(uint64_t *nanoseconds) {
    struct timespec sleep_for = {0, (long)*nanoseconds};
    nanosleep(&sleep_for, NULL);
    if (*nanoseconds < 1000000) *nanoseconds *= 2;
}

static uform_status_t order_device(uform_executor_t *executor, size_t index, void *stream, const char *caller) {
    uform__vram_t *vram = uform__vram_of(executor);
    if (!vram)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a RAM executor has no devices (use for_vram)", caller);
    if (index >= vram->device_count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: device %zu of %zu", caller, index, vram->device_count);
    uform__gpu_device_t *device = &vram->devices[index];
    uint64_t nanoseconds = 20000;
    for (;;) {
        uform_status_t status = uform__vram_fault(executor, caller);
        if (status != UFORM_STATUS_OK) return status;
        bool queued = false;
        status = earlier_calls_queued(executor, device, &queued, caller);
        if (status != UFORM_STATUS_OK) return status;
        if (queued) break;
        pause_for(&nanoseconds);
    }
    uform_status_t status = device->backend->order_stream(device, stream);
    uform__vram_note_fault(executor, device);
    if (status == UFORM_STATUS_OK) return status;
    if (uform__vram_fault(executor, caller) != UFORM_STATUS_OK) return UFORM_STATUS_DEVICE_FAULT;
    char cause[256];
    snprintf(cause, sizeof cause, "%s", uform_last_error());
    return uform__fail(status, "%s: device %zu (GPU %d): %s", caller, index, (int)device->ordinal, cause);
}

uform_status_t uform_executor_order_stream(uform_executor_t *executor, size_t device, void *stream) {
    static const char caller[] = "uform_executor_order_stream";
    if (!executor) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the NULL executor has no devices", caller);
    /* Counted in (free waits for this call), refused from the executor's own callbacks, once
     * free has begun, and in a fork()ed child (which calls no driver). */
    uform_status_t status = uform__enter_call(executor, caller);
    if (status != UFORM_STATUS_OK) return status;
    status = order_device(executor, device, stream, caller);
    uform__leave(executor);
    return status;
}
