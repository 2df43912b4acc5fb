/* Internal: the CPU as lscpu and lstopo describe it, read through the seam: the model name,
 * sockets, cores, threads per core, and each cache level with the CPUs sharing each instance.
 * It covers every online CPU (the machine), not only those this process may use (the
 * topology's `usable`). Read afresh on each call: only the report asks, and rarely. */
#ifndef UFORM_HARDWARE_CPU_INFO_H
#define UFORM_HARDWARE_CPU_INFO_H

#include <stddef.h>
#include <stdint.h>

#include "uform/status.h"

/** One cache of one level and type, with every instance of it (one per group of CPUs). */
typedef struct uform__cache_t {
    int32_t level;           /* 1, 2, 3, ... */
    char type[16];           /* "Data", "Instruction" or "Unified", as sysfs spells it */
    uint64_t size_bytes;     /* of one instance */
    size_t instance_count;   /* distinct shared_cpu_list values */
    int32_t **instance_cpus; /* each instance's CPUs, ascending; instances by their first CPU */
    size_t *instance_sizes;  /* how many CPUs each instance holds */
} uform__cache_t;

typedef struct uform__cpu_info_t {
    char model[128];         /* "model name" of /proc/cpuinfo, or the Arm part's name; "" unknown */
    size_t online_count;     /* /sys/devices/system/cpu/online, else the usable CPUs */
    int32_t *online;         /* ascending */
    size_t sockets;          /* distinct physical_package_id; 0 when the files are absent */
    size_t cores;            /* distinct (package, core_id); 0 when the files are absent */
    size_t threads_per_core; /* the most CPUs in one thread_siblings_list (else CPUs / cores); 0 unknown */
    size_t cache_count;
    uform__cache_t *caches; /* by level, then Data, Instruction, Unified */
} uform__cpu_info_t;

/** Reads the CPU's description. OUT_OF_MEMORY, or MALFORMED naming a file that is not in the
 *  kernel's format; absent files leave their fields unknown (0, ""). Free with _free. */
uform_status_t uform__cpu_info_read(uform__cpu_info_t **info);

void uform__cpu_info_free(uform__cpu_info_t *info);

/**
 * The NUMA distance matrix: `*count` online node ids ascending in `*ids`, and row-major
 * `*distances` (count x count) from each node's `distance` file, whose columns follow the
 * online nodes. OK with count 0 when the machine has no NUMA information; MALFORMED when a
 * row's length differs from the node count. Both arrays malloc'd, the caller frees them.
 */
uform_status_t uform__numa_distances_read(int32_t **ids, size_t *count, uint32_t **distances);

#endif
