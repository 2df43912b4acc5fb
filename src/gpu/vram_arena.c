/* Device arenas: `capacity` bytes reserved on every device of a VRAM executor (a symmetric
 * arena: one offset names the same slot on each device). The arena takes a reference on its
 * executor, so the executor's memory, contexts and streams outlive it (executor.h, vram.h). */
#include <stdio.h>

#include "core/error.h"
#include "core/memory.h"
#include "executor/arena_internal.h"
#include "gpu/vram_internal.h"

static void arena_free_on_devices(uform_arena_t *arena);

uform_status_t uform__vram_arena_new(uform_executor_t *executor, size_t capacity, uform_arena_t **arena_out) {
    static const char caller[] = "uform_arena_new_in";
    uform_status_t status = uform__vram_fault(executor, caller);
    if (status != UFORM_STATUS_OK) return status;
    uform__vram_t *vram = uform__vram_of(executor);
    uform_arena_t *arena = uform__allocate_zeroed(1, sizeof *arena);
    void **bases = uform__allocate_zeroed(vram->device_count, sizeof *bases);
    if (!arena || !bases) {
        uform__deallocate(arena);
        uform__deallocate(bases);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: bookkeeping for %zu devices", caller, vram->device_count);
    }
    for (size_t i = 0; i < vram->device_count && status == UFORM_STATUS_OK; i++) {
        uform__gpu_device_t *device = &vram->devices[i];
        status = device->backend->device_alloc(device, capacity, &bases[i]);
        uform__vram_note_fault(executor, device);
    }
    if (status != UFORM_STATUS_OK) {
        char cause[256];
        snprintf(cause, sizeof cause, "%s", uform_last_error());
        for (size_t i = 0; i < vram->device_count; i++)
            if (bases[i]) vram->devices[i].backend->device_free(&vram->devices[i], bases[i]);
        uform__deallocate(bases);
        uform__deallocate(arena);
        return uform__fail(status, "%s: %zu bytes on each of %zu GPUs: %s", caller, capacity, vram->device_count, cause);
    }
    arena->base = bases[0];
    arena->capacity = capacity;
    arena->executor = executor;
    arena->release = arena_free_on_devices;
    arena->device_count = vram->device_count;
    arena->device_bases = bases;
    arena->fork_generation = uform__fork_generation();
    /* Taken while the caller is counted in, so free has not begun: the count cannot be zero. */
    uform__executor_retain(executor);
    *arena_out = arena;
    return UFORM_STATUS_OK;
}

static void arena_free_on_devices(uform_arena_t *arena) {
    uform_executor_t *executor = arena->executor;
    if (!uform__forked_since(arena->fork_generation)) {
        uform__vram_t *vram = uform__vram_of(executor);
        for (size_t i = 0; i < arena->device_count; i++)
            vram->devices[i].backend->device_free(&vram->devices[i], arena->device_bases[i]);
        uform__executor_release(executor);
    }
    /* In a fork()ed child the driver is never called: the host bookkeeping goes, the device
     * memory is the parent's. */
    uform__deallocate(arena->device_bases);
    uform__deallocate(arena);
}
