/* uform_info_write: the report behind `uform info`, as text for people or one JSON object. It
 * sits above gpu/ and mesh/ and reads them all; nothing below it names the report.
 * Everything it says comes from the public queries, the cached topology and the GPU list
 * behind uform_gpu_devices (with its PCI addresses and NUMA nodes), so the report and the API
 * can never disagree. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "gpu/gpu_devices.h"
#include "hardware/cpulist.h"
#include "hardware/topology.h"
#include "hardware/vocabulary.h"
#include "uform.h"

/* An snprintf-style writer: it counts every byte and stores those that fit. */
typedef struct writer_t {
    char *buffer;
    size_t capacity, length;
} writer_t;

UFORM_PRINTF_(2, 3) static void put(writer_t *w, const char *format, ...) {
    va_list args;
    va_start(args, format);
    size_t room = w->length < w->capacity ? w->capacity - w->length : 0;
    int n = vsnprintf(room ? w->buffer + w->length : NULL, room, format, args);
    va_end(args);
    if (n > 0) w->length += (size_t)n;
}

/* A JSON string: quotes, backslashes and control characters escaped; other bytes as they are
 * (our strings are UTF-8 already). */
static void put_json_string(writer_t *w, const char *text) {
    put(w, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') put(w, "\\%c", *p);
        else if (*p < 0x20) put(w, "\\u%04x", *p);
        else put(w, "%c", *p);
    }
    put(w, "\"");
}

/* A comma-separated capability string as a JSON array of strings. */
static void put_json_tokens(writer_t *w, const char *tokens) {
    put(w, "[");
    for (const char *p = tokens; *p;) {
        size_t n = strcspn(p, ",");
        char token[64];
        snprintf(token, sizeof token, "%.*s", (int)(n < sizeof token ? n : sizeof token - 1), p);
        put(w, "%s", p == tokens ? "" : ",");
        put_json_string(w, token);
        p += n;
        if (*p == ',') p++;
    }
    put(w, "]");
}

static bool has_token(const char *tokens, const char *token) {
    size_t n = strlen(token);
    for (const char *p = tokens; (p = strstr(p, token)); p += n)
        if ((p == tokens || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return true;
    return false;
}

static const char *vendor_name(uint32_t vendor) {
    const char *name = uform__gpu_vendor_name((int)vendor);
    return name ? name : "unknown";
}

/* Why there are no GPUs, in words: the build or the machine. */
static const char *no_gpu_reason(void) {
    const char *compiled = uform_capabilities_compiled();
    if (!has_token(compiled, "cuda") && !has_token(compiled, "hip")) return "this build has no GPU backend";
    const char *note = uform__gpu_note();
    return *note ? note : "no driver or device found";
}

/* The GPU list for the report. A driver that fails is reported, not fatal: the rest of the
 * report is still true, and it is where a user looks to learn why. */
typedef struct gpu_list_t {
    uform__gpu_detail_t *items;
    size_t count;
    uform_status_t status;
    char error[512];
} gpu_list_t;

static uform_status_t gather_gpus(gpu_list_t *list) {
    memset(list, 0, sizeof *list);
    /* A call that succeeds leaves the caller's last error as it found it, even when the
     * driver's failure it reports set it on the way. */
    char saved[512];
    snprintf(saved, sizeof saved, "%s", uform_last_error());
    size_t count = 0;
    list->status = uform__gpu_details(NULL, 0, &count);
    if (list->status == UFORM_STATUS_OK && count) {
        list->items = calloc(count, sizeof *list->items);
        if (!list->items) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu GPU entries", count);
        size_t again = 0;
        list->status = uform__gpu_details(list->items, count, &again);
        list->count = again < count ? again : count;
    }
    if (list->status != UFORM_STATUS_OK) {
        snprintf(list->error, sizeof list->error, "%s: %s", uform_status_name(list->status), uform_last_error());
        list->count = 0;
        uform__fail(UFORM_STATUS_OK, "%s", saved);
    }
    return UFORM_STATUS_OK;
}

static void write_text(writer_t *w, const uform__topology_t *t, const gpu_list_t *gpus) {
    put(w, "uform %s\n", uform_version());
    put(w, "Capabilities compiled:  %s\n", uform_capabilities_compiled());
    put(w, "Capabilities available: %s\n", uform_capabilities_available());
    put(w, "CPU class:              %s\n", uform_cpu_class_name(uform_cpu_class_derived()));
    put(w, "Usable CPUs:            %zu\n", t->usable_count);
    if (t->quota_cpus > 0) put(w, "CPU quota:              %.2f CPUs (cgroup cpu.max)\n", t->quota_cpus);
    else put(w, "CPU quota:              none\n");
    put(w, "Default threads:        %zu\n", t->default_threads);
    put(w, "NUMA domains:           %zu%s\n", t->node_count, t->has_numa ? "" : " (no NUMA information)");
    for (size_t i = 0; i < t->node_count; i++) {
        const uform__node_t *node = &t->nodes[i];
        char *cpus = malloc(uform__cpulist_format(node->cpus, node->cpu_count, NULL, 0) + 1);
        put(w, "  node %d: ", (int)node->id);
        if (node->cpu_count && cpus) {
            /* The list is physical-first; show it ascending, as lscpu does. */
            int32_t *sorted = malloc(node->cpu_count * sizeof *sorted);
            if (sorted) {
                memcpy(sorted, node->cpus, node->cpu_count * sizeof *sorted);
                for (size_t a = 1; a < node->cpu_count; a++)
                    for (size_t b = a; b > 0 && sorted[b - 1] > sorted[b]; b--) {
                        int32_t swap = sorted[b];
                        sorted[b] = sorted[b - 1];
                        sorted[b - 1] = swap;
                    }
                uform__cpulist_format(sorted, node->cpu_count, cpus, node->cpu_count * 16 + 1);
                free(sorted);
            }
            put(w, "%zu CPUs (%s), %zu physical cores", node->cpu_count, sorted ? cpus : "?", node->physical_cores);
        } else {
            put(w, "no usable CPUs");
        }
        if (node->memory_bytes) put(w, ", %.1f GiB\n", (double)node->memory_bytes / (1024.0 * 1024 * 1024));
        else put(w, ", memory unknown\n");
        free(cpus);
    }
    if (gpus->status != UFORM_STATUS_OK) put(w, "GPUs:                   unavailable (%s)\n", gpus->error);
    else if (!gpus->count) put(w, "GPUs:                   none (%s)\n", no_gpu_reason());
    else put(w, "GPUs:                   %zu\n", gpus->count);
    /* One line a device, as nvidia-smi -L: position first, then what tells devices apart. */
    for (size_t i = 0; i < gpus->count; i++) {
        const uform__gpu_detail_t *g = &gpus->items[i];
        const char *class_name = uform_gpu_class_name((uform_gpu_class_t)g->device.gpu_class);
        /* NVIDIA counts streaming multiprocessors, AMD compute units. */
        const char *units = g->device.vendor == UFORM_GPU_VENDOR_AMD ? "CUs" : "SMs";
        put(w, "  GPU %zu: %s (%s %u, %s, compute %d.%d, %u %s, %.1f GiB, PCI %s, ", i, g->device.name,
            vendor_name(g->device.vendor), g->device.vendor_ordinal, class_name ? class_name : "no class",
            (int)g->compute_major, (int)g->compute_minor, g->device.compute_units, units,
            (double)g->device.memory_bytes / (1024.0 * 1024 * 1024), g->pci_address);
        if (g->numa_node >= 0) put(w, "NUMA node %d)\n", (int)g->numa_node);
        else put(w, "NUMA node unknown)\n");
    }
}

static void write_json(writer_t *w, const uform__topology_t *t, const gpu_list_t *gpus) {
    put(w, "{\"version\":");
    put_json_string(w, uform_version());
    put(w, ",\"capabilities_compiled\":");
    put_json_tokens(w, uform_capabilities_compiled());
    put(w, ",\"capabilities_available\":");
    put_json_tokens(w, uform_capabilities_available());
    put(w, ",\"cpu_class\":");
    put_json_string(w, uform_cpu_class_name(uform_cpu_class_derived()));
    put(w, ",\"usable_cpus\":%zu,\"cpu_quota\":", t->usable_count);
    if (t->quota_cpus > 0) put(w, "%.6g", t->quota_cpus);
    else put(w, "null");
    put(w, ",\"default_threads\":%zu,\"numa\":%s,\"numa_domains\":[", t->default_threads,
        t->has_numa ? "true" : "false");
    for (size_t i = 0; i < t->node_count; i++) {
        const uform__node_t *node = &t->nodes[i];
        put(w, "%s{\"node\":%d,\"usable_cpus\":%zu,\"physical_cores\":%zu,\"memory_bytes\":%llu,\"cpus\":[",
            i ? "," : "", (int)node->id, node->cpu_count, node->physical_cores,
            (unsigned long long)node->memory_bytes);
        for (size_t c = 0; c < node->cpu_count; c++) put(w, "%s%d", c ? "," : "", (int)node->cpus[c]);
        put(w, "]}");
    }
    put(w, "],\"gpus\":[");
    for (size_t i = 0; i < gpus->count; i++) {
        const uform__gpu_detail_t *g = &gpus->items[i];
        const char *class_name = uform_gpu_class_name((uform_gpu_class_t)g->device.gpu_class);
        put(w, "%s{\"position\":%zu,\"vendor\":\"%s\",\"vendor_ordinal\":%u,\"gpu_class\":", i ? "," : "", i,
            vendor_name(g->device.vendor), g->device.vendor_ordinal);
        if (class_name) put_json_string(w, class_name);
        else put(w, "null");
        put(w, ",\"compute_capability\":\"%d.%d\",\"compute_units\":%u,\"memory_bytes\":%llu,\"pci_address\":",
            (int)g->compute_major, (int)g->compute_minor, g->device.compute_units,
            (unsigned long long)g->device.memory_bytes);
        put_json_string(w, g->pci_address);
        put(w, ",\"numa_node\":");
        if (g->numa_node >= 0) put(w, "%d", (int)g->numa_node);
        else put(w, "null");
        put(w, ",\"name\":");
        put_json_string(w, g->device.name);
        put(w, "}");
    }
    put(w, "]");
    if (gpus->status != UFORM_STATUS_OK) {
        put(w, ",\"gpus_error\":");
        put_json_string(w, gpus->error);
    } else if (!gpus->count) {
        put(w, ",\"gpus_note\":");
        put_json_string(w, no_gpu_reason());
    }
    put(w, "}\n");
}

uform_status_t uform_info_write(uform_info_format_t format, char *buffer, size_t capacity, size_t *length) {
    if (!length) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_info_write: length is NULL");
    if (format != UFORM_INFO_TEXT && format != UFORM_INFO_JSON)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_info_write: %d is not a format", (int)format);
    if (!buffer && capacity)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_info_write: buffer is NULL with capacity %zu",
                           capacity);
    const uform__topology_t *t;
    uform_status_t status = uform__topology_get(&t);
    if (status != UFORM_STATUS_OK) return status;
    gpu_list_t gpus;
    status = gather_gpus(&gpus);
    if (status != UFORM_STATUS_OK) return status;
    writer_t w = {buffer, capacity, 0};
    if (format == UFORM_INFO_TEXT) write_text(&w, t, &gpus);
    else write_json(&w, t, &gpus);
    free(gpus.items);
    *length = w.length;
    return UFORM_STATUS_OK;
}
