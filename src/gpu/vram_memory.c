/* Device scratch and pinned staging: one buffer of each per device, grown to a high-water mark.
 * The new buffer is taken before the old one goes, so a failed growth changes nothing; the old
 * one goes only once the stream has drained the work that may still read it. */
#include "core/error.h"
#include "gpu/vram_internal.h"

/* Growth in powers of two from 1 MiB, so a slowly rising demand reallocates O(log) times. */
static size_t rounded(size_t bytes, size_t limit) {
    size_t size = (size_t)1 << 20;
    while (size < bytes && size <= SIZE_MAX / 2) size <<= 1;
    if (size < bytes) size = bytes;
    if (limit && size > limit) size = limit;
    return size;
}

typedef uform_status_t (*allocate_t)(uform__gpu_device_t *device, size_t bytes, void **pointer);
typedef void (*release_t)(uform__gpu_device_t *device, void *pointer);

static uform_status_t grow(uform_executor_t *executor, uform__gpu_device_t *device, void **buffer,
                           size_t *buffer_bytes, size_t bytes, size_t limit, allocate_t allocate, release_t release,
                           const char *what, const char *caller) {
    if (!bytes) bytes = 1;
    if (*buffer && bytes <= *buffer_bytes) return UFORM_STATUS_OK;
    if (limit && bytes > limit)
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: %zu bytes of %s on GPU %d exceed the executor's limit of %zu",
                           caller, bytes, what, (int)device->ordinal, limit);
    size_t size = rounded(bytes, limit);
    void *fresh = NULL;
    uform_status_t status = allocate(device, size, &fresh);
    if (status != UFORM_STATUS_OK) {
        uform__vram_note_fault(executor, device);
        return status;
    }
    if (*buffer) {
        /* Work queued earlier in this call may still use the old buffer. */
        status = device->backend->stream_wait(device);
        if (status != UFORM_STATUS_OK) {
            uform__vram_note_fault(executor, device);
            release(device, fresh);
            return status;
        }
        release(device, *buffer);
    }
    *buffer = fresh;
    *buffer_bytes = size;
    return UFORM_STATUS_OK;
}

uform_status_t uform__vram_grow_scratch(uform_executor_t *executor, uform__gpu_device_t *device, size_t bytes,
                                        const char *caller) {
    return grow(executor, device, &device->scratch, &device->scratch_bytes, bytes, uform__vram_of(executor)->scratch_limit,
                device->backend->device_alloc, device->backend->device_free, "scratch", caller);
}

uform_status_t uform__vram_grow_staging(uform_executor_t *executor, uform__gpu_device_t *device, size_t bytes,
                                        const char *caller) {
    return grow(executor, device, &device->staging, &device->staging_bytes, bytes, 0, device->backend->host_alloc,
                device->backend->host_free, "pinned staging", caller);
}

/* Both public accessors: only from the device function of that device, where nothing else
 * touches that device's buffers, and the running call keeps the executor alive (no counting in). */
static uform_status_t device_of_caller(uform_executor_t *executor, size_t device, void **output, const char *caller,
                                       uform__gpu_device_t **out) {
    if (!output) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: output is NULL", caller);
    if (!executor) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the NULL executor has no devices", caller);
    const uform__gpu_device_t *current = uform__vram_current_device(executor);
    if (!current || current->index != device)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: call it from the device function running for device %zu (uform_executor_for_devices)",
                           caller, device);
    if (uform__forked_since(executor->fork_generation))
        return uform__fail(UFORM_STATUS_FORKED, "%s: the executor was inherited across fork(); the driver is not "
                                                "called in a child", caller);
    uform_status_t status = uform__vram_fault(executor, caller);
    if (status != UFORM_STATUS_OK) return status;
    *out = &uform__vram_of(executor)->devices[device];
    return UFORM_STATUS_OK;
}

uform_status_t uform_executor_device_scratch(uform_executor_t *executor, size_t device, size_t bytes,
                                             void **scratch) {
    static const char caller[] = "uform_executor_device_scratch";
    uform__gpu_device_t *state = NULL;
    uform_status_t status = device_of_caller(executor, device, scratch, caller, &state);
    if (status != UFORM_STATUS_OK) return status;
    status = uform__vram_grow_scratch(executor, state, bytes, caller);
    if (status == UFORM_STATUS_OK) *scratch = state->scratch;
    return status;
}

uform_status_t uform_executor_staging(uform_executor_t *executor, size_t device, size_t bytes, void **staging) {
    static const char caller[] = "uform_executor_staging";
    uform__gpu_device_t *state = NULL;
    uform_status_t status = device_of_caller(executor, device, staging, caller, &state);
    if (status != UFORM_STATUS_OK) return status;
    status = uform__vram_grow_staging(executor, state, bytes, caller);
    if (status == UFORM_STATUS_OK) *staging = state->staging;
    return status;
}
