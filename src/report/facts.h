/* Internal to the report: everything `uform info` says, gathered once per report from the
 * layers below (the topology, the CPU description and NUMA distances through the hardware
 * seam, the GPU list, the CUDA driver's peer attributes and NVML's NVLinks), so the text and the JSON say the
 * same things. A part that cannot be read is said so, not fatal: the rest is still true. */
#ifndef UFORM_REPORT_FACTS_H
#define UFORM_REPORT_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu_devices.h"
#include "hardware/cpu_info.h"
#include "hardware/topology.h"

/** What the driver says of the link from one GPU to another; -1 where it says nothing (another
 *  vendor, a driver without the call, or a failing call). */
typedef struct uform__gpu_link_t {
    int32_t access;            /* cuDeviceCanAccessPeer */
    int32_t performance_rank;  /* CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: lower is faster */
    int32_t native_atomics;    /* ..._NATIVE_ATOMIC_SUPPORTED */
    int32_t cuda_array_access; /* ..._CUDA_ARRAY_ACCESS_SUPPORTED */
    int32_t nvlinks;           /* NVML: active NVLinks from this GPU whose far end is the other */
} uform__gpu_link_t;

typedef struct uform__facts_t {
    const uform__topology_t *topology;
    uform__cpu_info_t *cpu; /* NULL when unreadable; cpu_error says why */
    char cpu_error[512];
    int32_t *node_ids; /* the NUMA distance matrix: node_count x node_count, row-major */
    size_t node_count;
    uint32_t *distances; /* NULL when there is none; distance_error says why when unreadable */
    char distance_error[512];
    uform__gpu_detail_t *gpus;
    size_t gpu_count;
    uform_status_t gpu_status; /* of the listing; gpu_error says why when not OK */
    char gpu_error[512];
    int32_t **gpu_cpus; /* each GPU's local CPUs (PCI local_cpulist, else its node's), ascending */
    size_t *gpu_cpu_counts;
    uform__gpu_link_t *links;   /* gpu_count x gpu_count, row-major; the diagonal unused */
    uform_status_t nvml_status; /* of the NVLink query; nvml_error says why when not OK */
    char nvml_error[512];
} uform__facts_t;

/** Gathers the facts. Fails only for the topology (the report's ground) or OUT_OF_MEMORY; the
 *  caller's last error is left as it was otherwise. Free with _free. */
uform_status_t uform__facts_gather(uform__facts_t *facts);

void uform__facts_free(uform__facts_t *facts);

/** Why there are no GPUs, in words: the build or the machine. */
const char *uform__facts_no_gpu_reason(void);

#endif
