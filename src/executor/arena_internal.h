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
    /* Arenas a layer made (device arenas): the executor they hold (executor.h: the last one's
     * free closes it), and the layer's own free; NULL for host arenas. */
    uform_executor_t *executor;
    void (*release)(uform_arena_t *arena);
    size_t device_count;
    void **device_bases; /* device_count reservations; device_bases[0] == base */
    uint32_t fork_generation; /* a child of fork() frees only host memory, never calls the driver */
};

#endif
