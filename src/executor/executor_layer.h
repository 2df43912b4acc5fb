/* Internal: the seam between the RAM executor and a layer built on it (src/gpu/ builds its
 * device executors this way). A layer creates a RAM executor, then attaches its operations and its state; the
 * RAM executor calls them at drain, close and arena making, and knows nothing else of the layer.
 * Whoever holds an executor beyond one call (a device arena, a mesh) retains it. */
#ifndef UFORM_EXECUTOR_LAYER_H
#define UFORM_EXECUTOR_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "uform.h"

/** What a layer adds to an executor. Every entry is set. */
typedef struct uform__executor_ops_t {
    /** Before any callback of a call runs: OK, or the layer's sticky failure (DEVICE_FAULT with
     *  its message), in the words of `caller`. */
    uform_status_t (*fault)(const uform_executor_t *executor, const char *caller);
    /** uform_executor_drain and free, once the host threads idle: the layer's own work (device
     *  streams); a sticky failure of the layer's fails the drain. */
    uform_status_t (*drain)(uform_executor_t *executor);
    /** The last reference went, the threads are joined: closes what the layer opened. */
    void (*close)(uform_executor_t *executor);
    /** Frees the layer's host-side state only (also in a fork()ed child, which calls no driver). */
    void (*release_memory)(uform_executor_t *executor);
    /** uform_arena_new_in for this executor; the caller is counted in. The arena it makes sets
     *  its own `release`. */
    uform_status_t (*arena_new)(uform_executor_t *executor, size_t capacity, uform_arena_t **arena);
} uform__executor_ops_t;

struct uform__topology_t;

/** Creates a RAM executor as uform_executor_for_ram, its messages in the words of `caller`
 *  (a layer's constructor making its host threads). */
uform_status_t uform__executor_create(const int32_t *memory_domains, size_t memory_domains_count,
                                      uform_cpu_class_t cpu_class, size_t threads, size_t deferred_limit,
                                      const char *caller, uform_executor_t **executor_out);
/** Makes `executor` (fresh from uform__executor_create, not yet handed out) a layer's. */
void uform__executor_attach(uform_executor_t *executor, const uform__executor_ops_t *ops, void *layer);
/** The layer attached with `ops`, or NULL when the executor is not that layer's. */
void *uform__executor_layer(const uform_executor_t *executor, const uform__executor_ops_t *ops);
/** Takes one reference; only while the caller is counted in (free has not begun then). */
void uform__executor_retain(uform_executor_t *executor);
/** Drops one reference (a device arena's, a mesh's, or the owner's once free has drained); the
 *  last closes the executor: threads joined, the layer closed, memory released. */
void uform__executor_release(uform_executor_t *executor);
/** Checks memory domains, class pin and deferred limit as every executor constructor must. */
uform_status_t uform__validate_ram_arguments(const int32_t *domains, size_t count, uform_cpu_class_t cpu_class,
                                             size_t deferred_limit, const char *caller,
                                             const struct uform__topology_t **topology_out);

#endif
