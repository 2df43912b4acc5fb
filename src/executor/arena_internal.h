/* Internal: an arena, host or device. Both are one reservation bump-allocated by offset; a device
 * arena has one reservation per device of its executor, all the size of device 0's (`base`). */
#ifndef UFORM_EXECUTOR_ARENA_INTERNAL_H
#define UFORM_EXECUTOR_ARENA_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "uform.h"

struct uform_arena_t {
    char *base;      /* host: the mapping; device: device 0's reservation */
    size_t capacity;
    size_t mapped;   /* host: bytes mapped (whole pages) */
    _Atomic size_t used;
    /* Device arenas only: the executor they hold (executor.h: the last one's free closes it). */
    uform_executor_t *executor;
    size_t device_count;
    void **device_bases; /* device_count reservations; device_bases[0] == base */
    uint32_t fork_generation; /* a child of fork() frees only host memory, never calls the driver */
};

/* src/gpu/vram_arena.c */
/** A device arena on every device of a VRAM executor; the caller has counted itself in. */
uform_status_t uform__arena_new_on_devices(uform_executor_t *executor, size_t capacity, uform_arena_t **arena);
/** Frees its reservations and drops its hold on the executor. */
void uform__arena_free_on_devices(uform_arena_t *arena);

#endif
