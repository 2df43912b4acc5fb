/* Internal: what a VRAM executor adds to a RAM executor (uform__vram_of(executor)). Read-only after
 * creation except the devices' scratch and staging, which only the thread running that device's
 * function (or thread 0 of a staged copy) touches, one call at a time. */
#ifndef UFORM_GPU_VRAM_INTERNAL_H
#define UFORM_GPU_VRAM_INTERNAL_H

#include <stdatomic.h>

#include "executor/executor_internal.h"
#include "gpu/gpu_backend.h"

/** A staged copy's chunk: large enough that a DMA amortises the per-chunk event round trip, small
 *  enough that the two staging halves stay modest (UFORM_STAGING_CHUNK_BYTES overrides, for tests
 *  and tuning; documented in the README). */
#define UFORM_STAGING_CHUNK_DEFAULT (8u << 20)

typedef struct uform__vram_t {
    size_t device_count;
    uform__gpu_device_t *devices;
    uform_gpu_class_t gpu_class; /* the pin, or the devices' common class */
    size_t scratch_limit;        /* bytes per device; 0 unbounded */
    size_t chunk_bytes;          /* a staged copy's chunk */
    /* Sticky: once a device faulted, every call answers DEVICE_FAULT with this message. */
    _Atomic uint32_t faulted;
    char fault_message[384];
} uform__vram_t;

/** The executor's operations: drain, close and memory release of the devices, their fault,
 *  device arenas (vram_executor.c, vram_arena.c). */
extern const uform__executor_ops_t uform__vram_ops;

/** The devices of a VRAM executor; NULL for any other executor. */
static inline uform__vram_t *uform__vram_of(const uform_executor_t *executor) {
    return (uform__vram_t *)uform__executor_layer(executor, &uform__vram_ops);
}

/** DEVICE_FAULT with the fault's message (in the words of `caller`) when the executor is
 *  faulted, else OK. */
uform_status_t uform__vram_fault(const uform_executor_t *executor, const char *caller);

/** Marks the executor faulted (first message wins) when `device` saw a sticky error. */
void uform__vram_note_fault(uform_executor_t *executor, const uform__gpu_device_t *device);

/* vram_executor.c */
struct uform__gpu_detail_t;
/** The host threads' NUMA nodes when none are named: those nearest the devices, each once, in
 *  device order, skipping devices whose node the platform does not say. 0 (every node) when no
 *  device's node is known, or when one is a node without a CPU this process may use (a
 *  Grace-Hopper's HBM node, a restricted cpuset). `nodes` holds `count` entries. */
size_t uform__vram_host_domains(const struct uform__gpu_detail_t *details, size_t count, int32_t *nodes);

/* vram_arena.c: device arenas (uform__vram_ops.arena_new); the caller is counted in. */
uform_status_t uform__vram_arena_new(uform_executor_t *executor, size_t capacity, uform_arena_t **arena);

/* vram_memory.c: high-water buffers */
/** Grows the device's scratch to at least `bytes` (within scratch_limit), waiting for its stream
 *  before the old buffer goes. */
uform_status_t uform__vram_grow_scratch(uform_executor_t *executor, uform__gpu_device_t *device, size_t bytes,
                                        const char *caller);
/** Grows the device's pinned staging to at least `bytes`, likewise. */
uform_status_t uform__vram_grow_staging(uform_executor_t *executor, uform__gpu_device_t *device, size_t bytes,
                                        const char *caller);

/* vram_verbs.c: tests only: called by a staged copy right before the host copies chunk `chunk`
 * of `chunks` (into the staging for copies to the device, out of it for copies to the host), so
 * a test can see which DMAs are still in flight then. NULL in production. */
extern void (*_Atomic uform__test_before_host_copy)(const uform__gpu_device_t *device, size_t chunk, size_t chunks,
                                                    bool to_device);

/* vram_verbs.c: the device a device function runs for, on this thread (NULL outside one) */
const uform__gpu_device_t *uform__vram_current_device(const uform_executor_t *executor);

#endif
