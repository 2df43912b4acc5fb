/* Arenas: the verbs, and host arenas (one mapping bound to the executor's NUMA nodes,
 * bump-allocated, freed whole; the arena copies what it needs, so it may outlive its executor).
 * An executor with a layer (executor_layer.h) makes its own arenas, which free themselves. */
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/memory.h"
#include "executor/arena_internal.h"
#include "executor/executor_internal.h"

#define UFORM_HUGE_PAGE_ (2u << 20)

static uform_status_t new_in(uform_executor_t *executor, size_t capacity, uform_arena_t **arena_out);

uform_status_t uform_arena_new_in(uform_executor_t *executor, size_t capacity, uform_arena_t **arena_out) {
    if (!arena_out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_arena_new_in: arena output is NULL");
    *arena_out = NULL;
    if (!capacity) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_arena_new_in: capacity is 0");
    if (!executor) return new_in(NULL, capacity, arena_out);
    /* Counted in while it reads the executor's domains: a racing free waits for it. */
    uform_status_t status = uform__enter_call(executor, "uform_arena_new_in");
    if (status != UFORM_STATUS_OK) return status;
    status = executor->ops ? executor->ops->arena_new(executor, capacity, arena_out)
                           : new_in(executor, capacity, arena_out);
    uform__leave(executor);
    return status;
}

static uform_status_t new_in(uform_executor_t *executor, size_t capacity, uform_arena_t **arena_out) {
    /* 2^56 bytes on 64-bit targets; on 32-bit ones (wasm32) half the address space. */
#if SIZE_MAX > 0xFFFFFFFFu
    if (capacity > ((size_t)1 << 56))
#else
    if (capacity > SIZE_MAX / 2)
#endif
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_arena_new_in: %zu bytes is more than any machine has",
                           capacity);
    uform_arena_t *arena = uform__allocate_zeroed(1, sizeof *arena);
    if (!arena) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_arena_new_in");
    bool huge = capacity >= UFORM_HUGE_PAGE_;
    size_t granule = huge ? UFORM_HUGE_PAGE_ : 4096;
    arena->mapped = (capacity + granule - 1) / granule * granule;
    arena->base = uform__pages_map(arena->mapped);
    if (!arena->base) {
        uform__deallocate(arena);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_arena_new_in: cannot map %zu bytes", capacity);
    }
    if (huge) uform__pages_advise_huge(arena->base, arena->mapped);
    if (executor) uform__pages_bind(arena->base, arena->mapped, executor->nodes, executor->node_count);
    arena->capacity = capacity;
    *arena_out = arena;
    return UFORM_STATUS_OK;
}

uform_status_t uform_arena_allocate(uform_arena_t *arena, size_t bytes, size_t alignment, void **pointer) {
    if (!arena || !pointer) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_arena_allocate: NULL argument");
    if (!alignment) alignment = 64;
    if (alignment & (alignment - 1))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_arena_allocate: alignment %zu is not a power of two",
                           alignment);
    size_t used = atomic_load(&arena->used);
    for (;;) {
        uintptr_t start = ((uintptr_t)arena->base + used + alignment - 1) & ~(uintptr_t)(alignment - 1);
        size_t offset = (size_t)(start - (uintptr_t)arena->base);
        if (offset > arena->capacity || bytes > arena->capacity - offset)
            return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_arena_allocate: %zu bytes do not fit (%zu of %zu used)",
                               bytes, used, arena->capacity);
        /* Other devices' reservations share device 0's offsets: their alignment must agree. */
        for (size_t d = 1; d < arena->device_count; d++)
            if (((uintptr_t)arena->device_bases[d] - (uintptr_t)arena->base) & (alignment - 1))
                return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                                   "uform_arena_allocate: alignment %zu is more than device %zu's reservation keeps "
                                   "(256 always holds)",
                                   alignment, d);
        if (atomic_compare_exchange_weak(&arena->used, &used, offset + bytes)) {
            *pointer = (void *)start;
            return UFORM_STATUS_OK;
        }
    }
}

uform_status_t uform_arena_usage(const uform_arena_t *arena, size_t *used, size_t *capacity) {
    if (!arena) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_arena_usage: arena is NULL");
    if (used) *used = atomic_load(&((uform_arena_t *)arena)->used);
    if (capacity) *capacity = arena->capacity;
    return UFORM_STATUS_OK;
}

void uform_arena_free(uform_arena_t *arena) {
    if (!arena) return;
    if (arena->release) {
        arena->release(arena);
        return;
    }
    uform__pages_free(arena->base, arena->mapped);
    uform__deallocate(arena);
}

size_t uform_arena_devices(const uform_arena_t *arena) { return arena ? arena->device_count : 0; }

uform_status_t uform_arena_device_pointer(const uform_arena_t *arena, size_t device, const void *pointer,
                                          void **device_pointer) {
    static const char caller[] = "uform_arena_device_pointer";
    if (!arena || !device_pointer) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: NULL argument", caller);
    if (!arena->device_count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a host arena has no devices", caller);
    if (device >= arena->device_count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: device %zu of %zu", caller, device, arena->device_count);
    uintptr_t address = (uintptr_t)pointer, base = (uintptr_t)arena->base;
    if (address < base || address - base >= arena->capacity)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %p is not inside device 0's reservation [%p, +%zu)",
                           caller, pointer, (void *)arena->base, arena->capacity);
    *device_pointer = (char *)arena->device_bases[device] + (address - base);
    return UFORM_STATUS_OK;
}
