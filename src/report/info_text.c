/* `uform info` for people: lscpu's CPU lines, lstopo's caches and NUMA nodes, numactl's
 * distance matrix, nvidia-smi -L's GPU lines and nvidia-smi topo -m's GPU table. */
#include "report/info_format.h"

#include <stdio.h>
#include <string.h>

#include "hardware/vocabulary.h"
#include "uform.h"

#define LABEL "%-24s"

static const char *vendor_name(uint32_t vendor) {
    const char *name = uform__gpu_vendor_name((int)vendor);
    return name ? name : "unknown";
}

/* "L1d", "L1i", "L2": lscpu's cache names. */
static void put_cache_name(uform__writer_t *w, const uform__cache_t *cache) {
    const char *suffix = !strcmp(cache->type, "Data") ? "d" : !strcmp(cache->type, "Instruction") ? "i" : "";
    char name[16];
    snprintf(name, sizeof name, "L%d%s:", (int)cache->level, suffix);
    uform__put(w, "  %-5s", name);
}

/* Up to this many instances are listed one by one; more are summarised with an example. */
#define LISTED_INSTANCES 4

static void write_caches(uform__writer_t *w, const uform__cpu_info_t *cpu) {
    if (!cpu->cache_count) {
        uform__put(w, LABEL "unknown (no cpu*/cache files)\n", "Caches:");
        return;
    }
    uform__put(w, "Caches:\n");
    for (size_t i = 0; i < cpu->cache_count; i++) {
        const uform__cache_t *cache = &cpu->caches[i];
        put_cache_name(w, cache);
        uform__put_size(w, cache->size_bytes);
        uform__put(w, " x %zu", cache->instance_count);
        if (cache->instance_count <= LISTED_INSTANCES) {
            uform__put(w, ", shared by CPUs ");
            for (size_t k = 0; k < cache->instance_count; k++) {
                uform__put(w, "%s", k ? " | " : "");
                uform__put_cpulist(w, cache->instance_cpus[k], cache->instance_sizes[k]);
            }
        } else {
            size_t fewest = cache->instance_sizes[0], most = fewest;
            for (size_t k = 1; k < cache->instance_count; k++) {
                if (cache->instance_sizes[k] < fewest) fewest = cache->instance_sizes[k];
                if (cache->instance_sizes[k] > most) most = cache->instance_sizes[k];
            }
            if (fewest == most)
                uform__put(w, ", each shared by %zu CPU%s, as ", most, most == 1 ? "" : "s");
            else
                uform__put(w, ", each shared by %zu to %zu CPUs, as ", fewest, most);
            uform__put_cpulist(w, cache->instance_cpus[0], cache->instance_sizes[0]);
        }
        uform__put(w, "\n");
    }
}

static void write_cpu(uform__writer_t *w, const uform__facts_t *f) {
    const uform__cpu_info_t *cpu = f->cpu;
    if (!cpu)
        uform__put(w, LABEL "unreadable (%s)\n", "CPU model:", f->cpu_error);
    else
        uform__put(w, LABEL "%s\n", "CPU model:", *cpu->model ? cpu->model : "unknown");
    uform__put(w, LABEL "%s\n", "CPU class:", uform_cpu_class_name(uform_cpu_class_derived()));
    if (!cpu) return;
    uform__put(w, LABEL "%zu (", "Online CPUs:", cpu->online_count);
    uform__put_cpulist(w, cpu->online, cpu->online_count);
    uform__put(w, ")\n");
    if (cpu->sockets)
        uform__put(w, LABEL "%zu\n", "Sockets:", cpu->sockets);
    else
        uform__put(w, LABEL "unknown\n", "Sockets:");
    if (cpu->cores && cpu->sockets && cpu->cores % cpu->sockets == 0)
        uform__put(w, LABEL "%zu (%zu per socket)\n", "Cores:", cpu->cores, cpu->cores / cpu->sockets);
    else if (cpu->cores)
        uform__put(w, LABEL "%zu\n", "Cores:", cpu->cores);
    else
        uform__put(w, LABEL "unknown\n", "Cores:");
    if (cpu->threads_per_core)
        uform__put(w, LABEL "%zu\n", "Threads per core:", cpu->threads_per_core);
    else
        uform__put(w, LABEL "unknown\n", "Threads per core:");
    write_caches(w, cpu);
}

static void write_nodes(uform__writer_t *w, const uform__facts_t *f) {
    const uform__topology_t *t = f->topology;
    uform__put(w, LABEL "%zu%s\n", "NUMA nodes:", t->node_count, t->has_numa ? "" : " (no NUMA information)");
    for (size_t i = 0; i < t->node_count; i++) {
        const uform__node_t *node = &t->nodes[i];
        uform__put(w, "  node %d: ", (int)node->id);
        if (node->cpu_count) {
            uform__put(w, "%zu usable CPUs (", node->cpu_count);
            uform__put_cpulist(w, node->cpus, node->cpu_count);
            uform__put(w, "), %zu physical cores", node->physical_cores);
        } else {
            uform__put(w, "no usable CPUs");
        }
        if (node->memory_bytes)
            uform__put(w, ", %.1f GiB\n", (double)node->memory_bytes / (1024.0 * 1024 * 1024));
        else
            uform__put(w, ", memory unknown\n");
    }
    if (!f->distances) {
        if (*f->distance_error) uform__put(w, LABEL "unreadable (%s)\n", "NUMA distances:", f->distance_error);
        return;
    }
    /* numactl -H's matrix: rows and columns are the online nodes. */
    uform__put(w, "NUMA distances:\n  node");
    for (size_t j = 0; j < f->node_count; j++) uform__put(w, " %4d", (int)f->node_ids[j]);
    uform__put(w, "\n");
    for (size_t i = 0; i < f->node_count; i++) {
        uform__put(w, "  %4d", (int)f->node_ids[i]);
        for (size_t j = 0; j < f->node_count; j++) uform__put(w, " %4u", f->distances[i * f->node_count + j]);
        uform__put(w, "\n");
    }
}

/* One cell of the GPU table: X self, NV<n> n active NVLinks (NVML), else P<rank> peer access
 * (+A with native atomics), - none, ? the driver says nothing. */
static void link_cell(const uform__facts_t *f, size_t i, size_t j, char *cell, size_t capacity) {
    if (i == j) {
        snprintf(cell, capacity, "X");
        return;
    }
    const uform__gpu_link_t *link = &f->links[i * f->gpu_count + j];
    if (link->nvlinks > 0)
        snprintf(cell, capacity, "NV%d", (int)link->nvlinks);
    else if (link->access < 0)
        snprintf(cell, capacity, "?");
    else if (!link->access)
        snprintf(cell, capacity, "-");
    else if (link->performance_rank < 0)
        snprintf(cell, capacity, "P%s", link->native_atomics > 0 ? "+A" : "");
    else
        snprintf(cell, capacity, "P%d%s", (int)link->performance_rank, link->native_atomics > 0 ? "+A" : "");
}

static void write_gpus(uform__writer_t *w, const uform__facts_t *f) {
    if (f->gpu_status != UFORM_STATUS_OK)
        uform__put(w, LABEL "unavailable (%s)\n", "GPUs:", f->gpu_error);
    else if (!f->gpu_count)
        uform__put(w, LABEL "none (%s)\n", "GPUs:", uform__facts_no_gpu_reason());
    else
        uform__put(w, LABEL "%zu\n", "GPUs:", f->gpu_count);
    /* One line a device, as nvidia-smi -L: position first, then what tells devices apart. */
    for (size_t i = 0; i < f->gpu_count; i++) {
        const uform__gpu_detail_t *g = &f->gpus[i];
        const char *class_name = uform_gpu_class_name((uform_gpu_class_t)g->device.gpu_class);
        /* NVIDIA counts streaming multiprocessors, AMD compute units. */
        const char *units = g->device.vendor == UFORM_GPU_VENDOR_AMD ? "CUs" : "SMs";
        uform__put(w, "  GPU %zu: %s (%s %u, %s, compute %d.%d, %u %s, %.1f GiB, PCI %s, ", i, g->device.name,
                   vendor_name(g->device.vendor), g->device.vendor_ordinal, class_name ? class_name : "no class",
                   (int)g->compute_major, (int)g->compute_minor, g->device.compute_units, units,
                   (double)g->device.memory_bytes / (1024.0 * 1024 * 1024), g->pci_address);
        if (g->numa_node >= 0)
            uform__put(w, "NUMA node %d)\n", (int)g->numa_node);
        else
            uform__put(w, "NUMA node unknown)\n");
    }
    /* What the list does not show (a vendor that failed, the toolkit's stub, a driver without
     * devices); with no GPU at all the line above already says it. */
    uform__gpu_discovery_t vendors[2];
    size_t vendor_count = f->gpu_count ? uform__gpu_discovery(vendors, 2) : 0;
    for (size_t i = 0; i < vendor_count && i < 2; i++)
        if (uform__gpu_discovery_worth_saying(&vendors[i]))
            uform__put(w, "  %s: %s%s%s\n", vendors[i].runtime,
                       vendors[i].status != UFORM_STATUS_OK ? uform_status_name(vendors[i].status) : "",
                       vendors[i].status != UFORM_STATUS_OK ? ": " : "", vendors[i].message);
    /* Why the table has no NVLink cells where NVIDIA GPUs could have them. */
    if (f->nvml_status != UFORM_STATUS_OK)
        uform__put(w, "  NVML: %s: %s (NVLinks unknown)\n", uform_status_name(f->nvml_status), f->nvml_error);
    if (!f->gpu_count) return;
    /* nvidia-smi topo -m: a row per GPU, its links to every other, then its node and CPUs. */
    uform__put(w, "GPU topology:\n        ");
    size_t width = 4;
    char cell[32];
    for (size_t i = 0; i < f->gpu_count; i++)
        for (size_t j = 0; j < f->gpu_count; j++) {
            link_cell(f, i, j, cell, sizeof cell);
            if (strlen(cell) > width) width = strlen(cell);
        }
    for (size_t j = 0; j < f->gpu_count; j++) {
        char name[32];
        snprintf(name, sizeof name, "GPU%zu", j);
        uform__put(w, "%-*s  ", (int)width, name);
    }
    uform__put(w, "NUMA  CPUs\n");
    for (size_t i = 0; i < f->gpu_count; i++) {
        uform__put(w, "  GPU%-3zu", i);
        for (size_t j = 0; j < f->gpu_count; j++) {
            link_cell(f, i, j, cell, sizeof cell);
            uform__put(w, "%-*s  ", (int)width, cell);
        }
        if (f->gpus[i].numa_node >= 0)
            uform__put(w, "%-4d  ", (int)f->gpus[i].numa_node);
        else
            uform__put(w, "?     ");
        if (f->gpu_cpu_counts[i])
            uform__put_cpulist(w, f->gpu_cpus[i], f->gpu_cpu_counts[i]);
        else
            uform__put(w, "?");
        uform__put(w, "\n");
    }
    uform__put(w, "  X self; NV<n> n active NVLinks to it (NVML); P<rank> peer access with the driver's\n"
                  "  performance rank (lower is faster), +A with native atomics; - no peer access;\n"
                  "  ? the driver does not say\n");
}

void uform__info_write_text(uform__writer_t *w, const uform__facts_t *f) {
    const uform__topology_t *t = f->topology;
    uform__put(w, "uform %s\n", uform_version());
    uform__put(w, LABEL "%s\n", "Capabilities compiled:", uform_capabilities_compiled());
    uform__put(w, LABEL "%s\n", "Capabilities available:", uform_capabilities_available());
    write_cpu(w, f);
    uform__put(w, LABEL "%zu\n", "Usable CPUs:", t->usable_count);
    if (t->quota_cpus > 0)
        uform__put(w, LABEL "%.2f CPUs (cgroup cpu.max)\n", "CPU quota:", t->quota_cpus);
    else
        uform__put(w, LABEL "none\n", "CPU quota:");
    uform__put(w, LABEL "%zu\n", "Default threads:", t->default_threads);
    write_nodes(w, f);
    write_gpus(w, f);
}
