/* Internal: the machine's NUMA topology as this process may use it, read once through the
 * seam and cached (re-read when uform__seam_generation moves on). */
#ifndef UFORM_HARDWARE_TOPOLOGY_H
#define UFORM_HARDWARE_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uform/hardware.h"
#include "uform/status.h"

typedef struct uform__node_t {
    int32_t id;
    uint64_t memory_bytes;  /* MemTotal of the node, 0 when unknown */
    size_t cpu_count;       /* CPUs of the node this process may use (affinity ∩ cpuset) */
    int32_t *cpus;          /* ascending, physical cores first: one CPU per core, then SMT siblings */
    size_t physical_cores;  /* distinct cores among `cpus` */
} uform__node_t;

typedef struct uform__topology_t {
    size_t node_count;      /* nodes with memory or CPUs, ascending id; CPU-less ones included */
    uform__node_t *nodes;
    size_t usable_count;    /* CPUs this process may run on, all nodes together */
    int32_t *usable;        /* ascending */
    double quota_cpus;      /* cgroup v2 cpu.max quota/period, 0 when unlimited */
    size_t default_threads; /* n - n/8 of min(usable_count, ceil(quota)), at least 1 */
    bool has_numa;          /* /sys/devices/system/node exists */
} uform__topology_t;

/**
 * The cached topology, read on first use (thread-safe). On failure answers the status of the
 * read (IO_ERROR, MALFORMED) with uform_last_error() set, and `*topology` is NULL.
 */
uform_status_t uform__topology_get(const uform__topology_t **topology);

/** The node in `topology` with kernel id `id`, or NULL. */
const uform__node_t *uform__topology_node(const uform__topology_t *topology, int32_t id);

/** `n - n/8`, at least 1 for n >= 1 (the default thread count rule). */
size_t uform__default_threads_for(size_t cores);

/**
 * OK if this CPU (through the seam) can run `cpu_class`; UNSUPPORTED naming the missing
 * features otherwise ("intel_sapphire needs avx512fp16, amx-tile ..."); INVALID_ARGUMENT for
 * a number that is no class. NONE is OK.
 */
uform_status_t uform__cpu_class_check(uform_cpu_class_t cpu_class);

#endif
