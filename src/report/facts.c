/* The report's facts (facts.h). */
#include "report/facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/nvml/nvml_loader.h"
#include "hardware/cpulist.h"
#include "hardware/seam.h"
#include "platform/platform.h"
#include "uform.h"

static bool has_token(const char *tokens, const char *token) {
    size_t n = strlen(token);
    for (const char *p = tokens; (p = strstr(p, token)); p += n)
        if ((p == tokens || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return true;
    return false;
}

const char *uform__facts_no_gpu_reason(void) {
    const char *compiled = uform_capabilities_compiled();
    if (!has_token(compiled, "cuda") && !has_token(compiled, "hip")) return "this build has no GPU backend";
    const char *note = uform__gpu_note();
    return *note ? note : "no driver or device found";
}

static void say(char *into, size_t capacity, uform_status_t status) {
    snprintf(into, capacity, "%s: %s", uform_status_name(status), uform_last_error());
}

static uform_status_t gather_gpus(uform__facts_t *f) {
    size_t count = 0;
    f->gpu_status = uform__gpu_details(NULL, 0, &count);
    if (f->gpu_status == UFORM_STATUS_OK && count) {
        f->gpus = calloc(count, sizeof *f->gpus);
        if (!f->gpus) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu GPU entries", count);
        size_t again = 0;
        f->gpu_status = uform__gpu_details(f->gpus, count, &again);
        f->gpu_count = again < count ? again : count;
    }
    if (f->gpu_status != UFORM_STATUS_OK) {
        say(f->gpu_error, sizeof f->gpu_error, f->gpu_status);
        f->gpu_count = 0;
    }
    return UFORM_STATUS_OK;
}

/* A GPU's CPUs as nvidia-smi topo -m takes them: the PCI device's local_cpulist, else the CPUs
 * of its NUMA node, else none. */
static uform_status_t gpu_cpus(const uform__facts_t *f, const uform__gpu_detail_t *gpu, int32_t **cpus, size_t *count) {
    *cpus = NULL;
    *count = 0;
    char path[96], text[4096];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/local_cpulist", gpu->pci_address);
    if (uform__seam_read(path, text, sizeof text, NULL) == UFORM_STATUS_OK &&
        uform__cpulist_parse(text, path, cpus, count) == UFORM_STATUS_OK)
        return UFORM_STATUS_OK;
    const uform__node_t *node = gpu->numa_node >= 0 ? uform__topology_node(f->topology, gpu->numa_node) : NULL;
    if (!node || !node->cpu_count) return UFORM_STATUS_OK;
    *cpus = malloc(node->cpu_count * sizeof **cpus);
    if (!*cpus) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for a GPU's CPU list");
    memcpy(*cpus, node->cpus, node->cpu_count * sizeof **cpus);
    *count = node->cpu_count;
    return UFORM_STATUS_OK;
}

/* The CUDA driver's word on each pair of NVIDIA GPUs; other pairs stay unknown. */
static void gather_links(uform__facts_t *f) {
    const uform__cuda_t *cuda = NULL;
    if (uform__cuda_get(&cuda) != UFORM_STATUS_OK || !cuda || uform__forked_since(cuda->fork_generation)) return;
    const uform__cuda_peer_api_t *peers = NULL;
    if (uform__cuda_peers(&peers) != UFORM_STATUS_OK) return;
    uform_cuDeviceCanAccessPeer_t access_of = peers->cuDeviceCanAccessPeer;
    uform_cuDeviceGetP2PAttribute_t attribute_of = peers->cuDeviceGetP2PAttribute;
    for (size_t i = 0; i < f->gpu_count; i++)
        for (size_t j = 0; j < f->gpu_count; j++) {
            const uform_gpu_device_t *a = &f->gpus[i].device, *b = &f->gpus[j].device;
            if (i == j || a->vendor != UFORM_GPU_VENDOR_NVIDIA || b->vendor != UFORM_GPU_VENDOR_NVIDIA ||
                a->vendor_ordinal >= cuda->device_count || b->vendor_ordinal >= cuda->device_count)
                continue;
            uform_cuDevice source = cuda->devices[a->vendor_ordinal].handle;
            uform_cuDevice destination = cuda->devices[b->vendor_ordinal].handle;
            uform__gpu_link_t *link = &f->links[i * f->gpu_count + j];
            int value = 0;
            if (access_of && access_of(&value, source, destination) == UFORM_CUDA_SUCCESS) link->access = value;
            if (!attribute_of) continue;
            if (attribute_of(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, source, destination) ==
                UFORM_CUDA_SUCCESS)
                link->performance_rank = value;
            if (attribute_of(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, source, destination) ==
                UFORM_CUDA_SUCCESS)
                link->native_atomics = value;
            if (attribute_of(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, source, destination) ==
                UFORM_CUDA_SUCCESS)
                link->cuda_array_access = value;
        }
}

/* NVML's NVLinks between NVIDIA GPUs, asked only where a pair of them could have one. */
static uform_status_t gather_nvlinks(uform__facts_t *f) {
    size_t n = f->gpu_count, nvidia = 0;
    for (size_t i = 0; i < n; i++) nvidia += f->gpus[i].device.vendor == UFORM_GPU_VENDOR_NVIDIA;
    if (nvidia < 2) return UFORM_STATUS_OK;
    const char **addresses = malloc(n * sizeof *addresses);
    int32_t *counts = malloc(n * n * sizeof *counts);
    if (!addresses || !counts) {
        free(addresses);
        free(counts);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu GPUs' NVLinks", n);
    }
    for (size_t i = 0; i < n; i++) addresses[i] = f->gpus[i].pci_address;
    f->nvml_status = uform__nvml_nvlinks(addresses, n, counts, f->nvml_error, sizeof f->nvml_error);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (f->gpus[i].device.vendor == UFORM_GPU_VENDOR_NVIDIA &&
                f->gpus[j].device.vendor == UFORM_GPU_VENDOR_NVIDIA)
                f->links[i * n + j].nvlinks = counts[i * n + j];
    free(addresses);
    free(counts);
    if (f->nvml_status == UFORM_STATUS_OUT_OF_MEMORY) return uform__fail(f->nvml_status, "%s", f->nvml_error);
    return UFORM_STATUS_OK;
}

static uform_status_t gather_gpu_topology(uform__facts_t *f) {
    size_t n = f->gpu_count;
    if (!n) return UFORM_STATUS_OK;
    f->gpu_cpus = calloc(n, sizeof *f->gpu_cpus);
    f->gpu_cpu_counts = calloc(n, sizeof *f->gpu_cpu_counts);
    f->links = malloc(n * n * sizeof *f->links);
    if (!f->gpu_cpus || !f->gpu_cpu_counts || !f->links)
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu GPUs' topology", n);
    for (size_t i = 0; i < n * n; i++) f->links[i] = (uform__gpu_link_t){-1, -1, -1, -1, -1};
    for (size_t i = 0; i < n; i++) {
        uform_status_t status = gpu_cpus(f, &f->gpus[i], &f->gpu_cpus[i], &f->gpu_cpu_counts[i]);
        if (status != UFORM_STATUS_OK) return status;
    }
    gather_links(f);
    return gather_nvlinks(f);
}

uform_status_t uform__facts_gather(uform__facts_t *f) {
    memset(f, 0, sizeof *f);
    uform_status_t status = uform__topology_get(&f->topology);
    if (status != UFORM_STATUS_OK) return status;
    /* The report succeeds with parts unreadable, and a call that succeeds leaves the caller's
     * last error as it found it, though the parts set it on the way. */
    char saved[512];
    snprintf(saved, sizeof saved, "%s", uform_last_error());
    status = uform__cpu_info_read(&f->cpu);
    if (status == UFORM_STATUS_OUT_OF_MEMORY) return status;
    if (status != UFORM_STATUS_OK) say(f->cpu_error, sizeof f->cpu_error, status);
    status = uform__numa_distances_read(&f->node_ids, &f->node_count, &f->distances);
    if (status == UFORM_STATUS_OUT_OF_MEMORY) return status;
    if (status != UFORM_STATUS_OK) say(f->distance_error, sizeof f->distance_error, status);
    status = gather_gpus(f);
    if (status == UFORM_STATUS_OK) status = gather_gpu_topology(f);
    if (status != UFORM_STATUS_OK) return status;
    uform__fail(UFORM_STATUS_OK, "%s", saved);
    return UFORM_STATUS_OK;
}

void uform__facts_free(uform__facts_t *f) {
    uform__cpu_info_free(f->cpu);
    free(f->node_ids);
    free(f->distances);
    for (size_t i = 0; f->gpu_cpus && i < f->gpu_count; i++) free(f->gpu_cpus[i]);
    free(f->gpu_cpus);
    free(f->gpu_cpu_counts);
    free(f->links);
    free(f->gpus);
    memset(f, 0, sizeof *f);
}
