/* `uform info --json`: the same facts as the text, as one JSON object (docs/info-json.md).
 * Keys are only ever added; an unknown value is null, never left out. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hardware/vocabulary.h"
#include "report/info_format.h"
#include "uform.h"

static void put_optional_string(uform__writer_t *w, const char *text) {
    if (text && *text)
        uform__put_json_string(w, text);
    else
        uform__put(w, "null");
}

static void put_count(uform__writer_t *w, size_t value) {
    if (value)
        uform__put(w, "%zu", value);
    else
        uform__put(w, "null");
}

/* -1 unknown, else a boolean or a number. */
static void put_tristate(uform__writer_t *w, int32_t value, int boolean) {
    if (value < 0)
        uform__put(w, "null");
    else if (boolean)
        uform__put(w, value ? "true" : "false");
    else
        uform__put(w, "%d", (int)value);
}

static void write_cpu(uform__writer_t *w, const uform__facts_t *f) {
    const uform__cpu_info_t *cpu = f->cpu;
    uform__put(w, ",\"cpu\":");
    if (!cpu) {
        uform__put(w, "null,\"cpu_error\":");
        uform__put_json_string(w, f->cpu_error);
        return;
    }
    uform__put(w, "{\"model\":");
    put_optional_string(w, cpu->model);
    uform__put(w, ",\"online_cpus\":");
    uform__put_json_ints(w, cpu->online, cpu->online_count);
    uform__put(w, ",\"sockets\":");
    put_count(w, cpu->sockets);
    uform__put(w, ",\"cores\":");
    put_count(w, cpu->cores);
    uform__put(w, ",\"threads_per_core\":");
    put_count(w, cpu->threads_per_core);
    uform__put(w, ",\"caches\":[");
    for (size_t i = 0; i < cpu->cache_count; i++) {
        const uform__cache_t *cache = &cpu->caches[i];
        char type[16];
        snprintf(type, sizeof type, "%s", cache->type);
        for (char *p = type; *p; p++)
            if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
        uform__put(w, "%s{\"level\":%d,\"type\":\"%s\",\"size_bytes\":%llu,\"instances\":[", i ? "," : "",
                   (int)cache->level, type, (unsigned long long)cache->size_bytes);
        for (size_t k = 0; k < cache->instance_count; k++) {
            uform__put(w, "%s", k ? "," : "");
            uform__put_json_ints(w, cache->instance_cpus[k], cache->instance_sizes[k]);
        }
        uform__put(w, "]}");
    }
    uform__put(w, "]}");
}

static void write_nodes(uform__writer_t *w, const uform__facts_t *f) {
    const uform__topology_t *t = f->topology;
    uform__put(w, ",\"numa\":%s,\"numa_domains\":[", t->has_numa ? "true" : "false");
    for (size_t i = 0; i < t->node_count; i++) {
        const uform__node_t *node = &t->nodes[i];
        uform__put(w, "%s{\"node\":%d,\"usable_cpus\":%zu,\"physical_cores\":%zu,\"memory_bytes\":%llu,\"cpus\":",
                   i ? "," : "", (int)node->id, node->cpu_count, node->physical_cores,
                   (unsigned long long)node->memory_bytes);
        uform__put_json_ints(w, node->cpus, node->cpu_count);
        uform__put(w, "}");
    }
    uform__put(w, "],\"numa_distances\":");
    if (!f->distances) {
        uform__put(w, "null");
        if (*f->distance_error) {
            uform__put(w, ",\"numa_distances_error\":");
            uform__put_json_string(w, f->distance_error);
        }
        return;
    }
    uform__put(w, "{\"nodes\":");
    uform__put_json_ints(w, f->node_ids, f->node_count);
    uform__put(w, ",\"matrix\":[");
    for (size_t i = 0; i < f->node_count; i++) {
        uform__put(w, "%s[", i ? "," : "");
        for (size_t j = 0; j < f->node_count; j++)
            uform__put(w, "%s%u", j ? "," : "", f->distances[i * f->node_count + j]);
        uform__put(w, "]");
    }
    uform__put(w, "]}");
}

static void write_gpus(uform__writer_t *w, const uform__facts_t *f) {
    uform__put(w, ",\"gpus\":[");
    for (size_t i = 0; i < f->gpu_count; i++) {
        const uform__gpu_detail_t *g = &f->gpus[i];
        const char *class_name = uform_gpu_class_name((uform_gpu_class_t)g->device.gpu_class);
        const char *vendor = uform__gpu_vendor_name((int)g->device.vendor);
        uform__put(w, "%s{\"position\":%zu,\"vendor\":\"%s\",\"vendor_ordinal\":%u,\"gpu_class\":", i ? "," : "", i,
                   vendor ? vendor : "unknown", g->device.vendor_ordinal);
        put_optional_string(w, class_name);
        uform__put(w, ",\"compute_capability\":\"%d.%d\",\"compute_units\":%u,\"memory_bytes\":%llu,\"pci_address\":",
                   (int)g->compute_major, (int)g->compute_minor, g->device.compute_units,
                   (unsigned long long)g->device.memory_bytes);
        uform__put_json_string(w, g->pci_address);
        uform__put(w, ",\"numa_node\":");
        if (g->numa_node >= 0)
            uform__put(w, "%d", (int)g->numa_node);
        else
            uform__put(w, "null");
        uform__put(w, ",\"name\":");
        uform__put_json_string(w, g->device.name);
        uform__put(w, "}");
    }
    uform__put(w, "]");
    if (f->gpu_status != UFORM_STATUS_OK) {
        uform__put(w, ",\"gpus_error\":");
        uform__put_json_string(w, f->gpu_error);
    } else if (!f->gpu_count) {
        uform__put(w, ",\"gpus_note\":");
        uform__put_json_string(w, uform__facts_no_gpu_reason());
    } else {
        /* As the text: the vendors whose discovery the list does not show. */
        uform__gpu_discovery_t vendors[2];
        size_t vendor_count = uform__gpu_discovery(vendors, 2);
        bool any = false;
        for (size_t i = 0; i < vendor_count && i < 2; i++) {
            if (!uform__gpu_discovery_worth_saying(&vendors[i])) continue;
            uform__put(w, "%s{\"runtime\":\"%s\",\"status\":\"%s\",\"message\":", any ? "," : ",\"gpus_discovery\":[",
                       vendors[i].runtime, uform_status_name(vendors[i].status));
            uform__put_json_string(w, vendors[i].message);
            uform__put(w, "}");
            any = true;
        }
        /* NVML, when it could not say which pairs NVLink joins. */
        if (f->nvml_status != UFORM_STATUS_OK) {
            uform__put(w, "%s{\"runtime\":\"NVML\",\"status\":\"%s\",\"message\":", any ? "," : ",\"gpus_discovery\":[",
                       uform_status_name(f->nvml_status));
            uform__put_json_string(w, f->nvml_error);
            uform__put(w, "}");
            any = true;
        }
        if (any) uform__put(w, "]");
    }
    /* nvidia-smi topo -m: each GPU's node and CPUs, and its links to every other GPU. */
    uform__put(w, ",\"gpu_topology\":[");
    for (size_t i = 0; i < f->gpu_count; i++) {
        uform__put(w, "%s{\"position\":%zu,\"numa_node\":", i ? "," : "", i);
        if (f->gpus[i].numa_node >= 0)
            uform__put(w, "%d", (int)f->gpus[i].numa_node);
        else
            uform__put(w, "null");
        uform__put(w, ",\"cpus\":");
        uform__put_json_ints(w, f->gpu_cpus[i], f->gpu_cpu_counts[i]);
        uform__put(w, ",\"links\":[");
        bool first = true;
        for (size_t j = 0; j < f->gpu_count; j++) {
            if (j == i) continue;
            const uform__gpu_link_t *link = &f->links[i * f->gpu_count + j];
            uform__put(w, "%s{\"peer\":%zu,\"access\":", first ? "" : ",", j);
            put_tristate(w, link->access, 1);
            uform__put(w, ",\"performance_rank\":");
            put_tristate(w, link->performance_rank, 0);
            uform__put(w, ",\"native_atomics\":");
            put_tristate(w, link->native_atomics, 1);
            uform__put(w, ",\"cuda_array_access\":");
            put_tristate(w, link->cuda_array_access, 1);
            uform__put(w, ",\"nvlinks\":");
            put_tristate(w, link->nvlinks, 0);
            uform__put(w, "}");
            first = false;
        }
        uform__put(w, "]}");
    }
    uform__put(w, "]");
}

void uform__info_write_json(uform__writer_t *w, const uform__facts_t *f) {
    const uform__topology_t *t = f->topology;
    uform__put(w, "{\"version\":");
    uform__put_json_string(w, uform_version());
    uform__put(w, ",\"capabilities_compiled\":");
    uform__put_json_tokens(w, uform_capabilities_compiled());
    uform__put(w, ",\"capabilities_available\":");
    uform__put_json_tokens(w, uform_capabilities_available());
    uform__put(w, ",\"cpu_class\":");
    uform__put_json_string(w, uform_cpu_class_name(uform_cpu_class_derived()));
    write_cpu(w, f);
    uform__put(w, ",\"usable_cpus\":%zu,\"cpu_quota\":", t->usable_count);
    if (t->quota_cpus > 0)
        uform__put(w, "%.6g", t->quota_cpus);
    else
        uform__put(w, "null");
    uform__put(w, ",\"default_threads\":%zu", t->default_threads);
    write_nodes(w, f);
    write_gpus(w, f);
    uform__put(w, "}\n");
}
