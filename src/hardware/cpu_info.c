/* The CPU as lscpu and lstopo describe it (cpu_info.h), from the kernel's files through the
 * seam: /proc/cpuinfo, /sys/devices/system/cpu/online, cpuN/topology/{physical_package_id,
 * core_id,thread_siblings_list}, cpuN/cache/indexM/{level,type,size,shared_cpu_list} and
 * /sys/devices/system/node/nodeN/distance. */
#include "hardware/cpu_info.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hardware/cpulist.h"
#include "hardware/seam.h"

/* Sysfs files hold a line; a CPU list of the largest machine is a few KiB. */
#define FILE_CAPACITY 65536
/* /proc/cpuinfo is ~2 KiB a CPU; the first CPU's lines are all the model name needs, so a
 * longer file is read as its first part. */
#define CPUINFO_CAPACITY 262144
/* cpuN/cache/index0 .. index15: real CPUs have four or five. */
#define MAX_CACHE_INDEXES 16

static void trim(char *text) {
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ' || text[n - 1] == '\t'))
        text[--n] = 0;
}

/* A sysfs file whole, trimmed. NOT_FOUND passes through for optional files. */
static uform_status_t read_text(const char *path, char *buffer) {
    uform_status_t status = uform__seam_read(path, buffer, FILE_CAPACITY, NULL);
    if (status == UFORM_STATUS_OK) trim(buffer);
    return status;
}

/* A non-negative decimal that fills the file ("12\n"); MALFORMED otherwise. */
static uform_status_t read_number(const char *path, char *buffer, int64_t *value) {
    uform_status_t status = read_text(path, buffer);
    if (status != UFORM_STATUS_OK) return status;
    char *end = NULL;
    errno = 0;
    long long number = buffer[0] >= '0' && buffer[0] <= '9' ? strtoll(buffer, &end, 10) : -1;
    if (number < 0 || errno || *end || number > INT32_MAX)
        return uform__fail(UFORM_STATUS_MALFORMED, "%s: expected a number, got \"%.32s\"", path, buffer);
    *value = number;
    return UFORM_STATUS_OK;
}

/* A topology id: as read_number, but "-1", the kernel's word for an id it cannot name (a
 * package id no firmware table gave), is NOT_FOUND: unknown, as an absent file is. */
static uform_status_t read_id(const char *path, char *buffer, int64_t *value) {
    uform_status_t status = read_number(path, buffer, value);
    if (status == UFORM_STATUS_MALFORMED && !strcmp(buffer, "-1")) return UFORM_STATUS_NOT_FOUND;
    return status;
}

/* A cache size as sysfs writes it ("32K"; M and G accepted too), in bytes. */
static uform_status_t read_size(const char *path, char *buffer, uint64_t *bytes) {
    uform_status_t status = read_text(path, buffer);
    if (status != UFORM_STATUS_OK) return status;
    char *end = NULL;
    errno = 0;
    unsigned long long number = buffer[0] >= '0' && buffer[0] <= '9' ? strtoull(buffer, &end, 10) : 0;
    int shift = end && *end == 'K' ? 10 : end && *end == 'M' ? 20 : end && *end == 'G' ? 30 : -1;
    if (!end || errno || shift < 0 || end[1] || number > ((uint64_t)1 << 33))
        return uform__fail(UFORM_STATUS_MALFORMED, "%s: expected a size like \"32K\", got \"%.32s\"", path, buffer);
    *bytes = (uint64_t)number << shift;
    return UFORM_STATUS_OK;
}

/* ---- the model name ---- */

/* The value of the first "<key>\t: value" line of /proc/cpuinfo, or NULL. */
static const char *cpuinfo_value(char *text, const char *key, char *value, size_t capacity) {
    size_t n = strlen(key);
    for (char *line = text; line && *line;) {
        char *next = strchr(line, '\n');
        if (!strncmp(line, key, n) && (line[n] == ' ' || line[n] == '\t' || line[n] == ':')) {
            char *colon = strchr(line, ':');
            if (colon && (!next || colon < next)) {
                colon++;
                while (*colon == ' ' || *colon == '\t') colon++;
                size_t length = next ? (size_t)(next - colon) : strlen(colon);
                snprintf(value, capacity, "%.*s", (int)length, colon);
                trim(value);
                return value;
            }
        }
        line = next ? next + 1 : NULL;
    }
    return NULL;
}

/* Arm parts by (implementer, part), as lscpu names them; an unlisted part is said by number. */
static const struct {
    unsigned implementer, part;
    const char *name;
} arm_parts[] = {
    {0x41, 0xd0c, "ARM Neoverse-N1"},   {0x41, 0xd40, "ARM Neoverse-V1"},    {0x41, 0xd49, "ARM Neoverse-N2"},
    {0x41, 0xd4f, "ARM Neoverse-V2"},   {0x41, 0xd84, "ARM Neoverse-V3"},    {0x41, 0xd8e, "ARM Neoverse-N3"},
    {0x61, 0x032, "Apple Blizzard-M2"}, {0x61, 0x033, "Apple Avalanche-M2"},
};

static void read_model(uform__cpu_info_t *info) {
    char *text = malloc(CPUINFO_CAPACITY);
    if (!text) return;
    uform_status_t status = uform__seam_read("/proc/cpuinfo", text, CPUINFO_CAPACITY, NULL);
    /* MALFORMED: longer than the buffer, which holds the first CPUs whole. */
    if (status == UFORM_STATUS_OK || status == UFORM_STATUS_MALFORMED) {
        char implementer[32], part[32];
        if (cpuinfo_value(text, "model name", info->model, sizeof info->model)) {
        } else if (cpuinfo_value(text, "CPU implementer", implementer, sizeof implementer) &&
                   cpuinfo_value(text, "CPU part", part, sizeof part)) {
            unsigned long i = strtoul(implementer, NULL, 0), p = strtoul(part, NULL, 0);
            snprintf(info->model, sizeof info->model, "Arm implementer %s part %s", implementer, part);
            for (size_t k = 0; k < sizeof arm_parts / sizeof arm_parts[0]; k++)
                if (arm_parts[k].implementer == i && arm_parts[k].part == p)
                    snprintf(info->model, sizeof info->model, "%s", arm_parts[k].name);
        }
    }
    free(text);
}

/* ---- sockets, cores, threads ---- */

static int by_value(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t distinct(int64_t *values, size_t n) {
    qsort(values, n, sizeof *values, by_value);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += i == 0 || values[i] != values[i - 1];
    return count;
}

static uform_status_t read_topology(uform__cpu_info_t *info, char *buffer) {
    size_t n = info->online_count;
    int64_t *packages = malloc((n ? n : 1) * sizeof *packages), *cores = malloc((n ? n : 1) * sizeof *cores);
    if (!packages || !cores) {
        free(packages);
        free(cores);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu CPUs' topology", n);
    }
    size_t known = 0, most_siblings = 0;
    uform_status_t status = UFORM_STATUS_OK;
    for (size_t i = 0; i < n && status == UFORM_STATUS_OK; i++) {
        char path[160];
        int64_t package = -1, core = -1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", (int)info->online[i]);
        uform_status_t a = read_id(path, buffer, &package);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", (int)info->online[i]);
        uform_status_t b = read_id(path, buffer, &core);
        if (a != UFORM_STATUS_OK && a != UFORM_STATUS_NOT_FOUND)
            status = a;
        else if (b != UFORM_STATUS_OK && b != UFORM_STATUS_NOT_FOUND)
            status = b;
        else if (a == UFORM_STATUS_OK && b == UFORM_STATUS_OK) {
            packages[known] = package;
            cores[known++] = (package << 32) | core;
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                 (int)info->online[i]);
        uform_status_t c = read_text(path, buffer);
        if (c == UFORM_STATUS_OK) {
            int32_t *siblings = NULL;
            size_t count = 0;
            c = uform__cpulist_parse(buffer, path, &siblings, &count);
            free(siblings);
            if (count > most_siblings) most_siblings = count;
        }
        if (status == UFORM_STATUS_OK && c != UFORM_STATUS_OK && c != UFORM_STATUS_NOT_FOUND) status = c;
    }
    /* Only when every online CPU says where it sits; a partial count would mislead. */
    if (status == UFORM_STATUS_OK && known == n && n) {
        info->sockets = distinct(packages, n);
        info->cores = distinct(cores, n);
        info->threads_per_core = most_siblings ? most_siblings : (n + info->cores - 1) / info->cores;
    } else if (status == UFORM_STATUS_OK) {
        info->threads_per_core = most_siblings;
    }
    free(packages);
    free(cores);
    return status;
}

/* ---- caches ---- */

static const char *const type_order[] = {"Data", "Instruction", "Unified"};

static int type_rank(const char *type) {
    for (int i = 0; i < 3; i++)
        if (!strcmp(type, type_order[i])) return i;
    return 3;
}

static int by_level_then_type(const void *a, const void *b) {
    const uform__cache_t *x = a, *y = b;
    if (x->level != y->level) return x->level < y->level ? -1 : 1;
    int r = type_rank(x->type) - type_rank(y->type);
    return r ? r : strcmp(x->type, y->type);
}

static bool same_list(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

/* Adds one cpuN/cache/indexM reading; takes `cpus` (freed here when the instance is known). */
static uform_status_t add_instance(uform__cpu_info_t *info, int32_t level, const char *type, uint64_t size,
                                   int32_t *cpus, size_t count) {
    uform__cache_t *cache = NULL;
    for (size_t i = 0; i < info->cache_count && !cache; i++)
        if (info->caches[i].level == level && !strcmp(info->caches[i].type, type)) cache = &info->caches[i];
    if (!cache) {
        uform__cache_t *grown = realloc(info->caches, (info->cache_count + 1) * sizeof *grown);
        if (!grown) goto no_memory;
        info->caches = grown;
        cache = &info->caches[info->cache_count++];
        memset(cache, 0, sizeof *cache);
        cache->level = level;
        snprintf(cache->type, sizeof cache->type, "%s", type);
        cache->size_bytes = size;
    }
    for (size_t i = 0; i < cache->instance_count; i++)
        if (same_list(cache->instance_cpus[i], cache->instance_sizes[i], cpus, count)) {
            free(cpus);
            return UFORM_STATUS_OK;
        }
    int32_t **lists = realloc(cache->instance_cpus, (cache->instance_count + 1) * sizeof *lists);
    if (!lists) goto no_memory;
    cache->instance_cpus = lists;
    size_t *sizes = realloc(cache->instance_sizes, (cache->instance_count + 1) * sizeof *sizes);
    if (!sizes) goto no_memory;
    cache->instance_sizes = sizes;
    cache->instance_cpus[cache->instance_count] = cpus;
    cache->instance_sizes[cache->instance_count++] = count;
    return UFORM_STATUS_OK;
no_memory:
    free(cpus);
    return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for the cache list");
}

static uform_status_t read_caches(uform__cpu_info_t *info, char *buffer) {
    for (size_t i = 0; i < info->online_count; i++) {
        for (int index = 0; index < MAX_CACHE_INDEXES; index++) {
            char base[128], path[192];
            snprintf(base, sizeof base, "/sys/devices/system/cpu/cpu%d/cache/index%d", (int)info->online[i], index);
            int64_t level = 0;
            snprintf(path, sizeof path, "%s/level", base);
            uform_status_t status = read_number(path, buffer, &level);
            if (status == UFORM_STATUS_NOT_FOUND) break;
            if (status != UFORM_STATUS_OK) return status;
            char type[16];
            snprintf(path, sizeof path, "%s/type", base);
            status = read_text(path, buffer);
            if (status != UFORM_STATUS_OK) return status;
            if (type_rank(buffer) == 3)
                return uform__fail(UFORM_STATUS_MALFORMED, "%s: \"%.32s\" is no cache type", path, buffer);
            snprintf(type, sizeof type, "%s", buffer);
            uint64_t size = 0;
            snprintf(path, sizeof path, "%s/size", base);
            status = read_size(path, buffer, &size);
            if (status != UFORM_STATUS_OK) return status;
            snprintf(path, sizeof path, "%s/shared_cpu_list", base);
            status = read_text(path, buffer);
            int32_t *cpus = NULL;
            size_t count = 0;
            if (status == UFORM_STATUS_OK) status = uform__cpulist_parse(buffer, path, &cpus, &count);
            if (status == UFORM_STATUS_OK && !uform__cpulist_contains(cpus, count, info->online[i])) {
                free(cpus);
                status =
                    uform__fail(UFORM_STATUS_MALFORMED, "%s does not hold CPU %d itself", path, (int)info->online[i]);
            }
            if (status != UFORM_STATUS_OK) return status;
            status = add_instance(info, (int32_t)level, type, size, cpus, count);
            if (status != UFORM_STATUS_OK) return status;
        }
    }
    if (info->cache_count > 1) qsort(info->caches, info->cache_count, sizeof *info->caches, by_level_then_type);
    return UFORM_STATUS_OK;
}

/* ---- the whole ---- */

static uform_status_t read_online(uform__cpu_info_t *info, char *buffer) {
    uform_status_t status = read_text("/sys/devices/system/cpu/online", buffer);
    if (status == UFORM_STATUS_OK)
        return uform__cpulist_parse(buffer, "/sys/devices/system/cpu/online", &info->online, &info->online_count);
    if (status != UFORM_STATUS_NOT_FOUND) return status;
    size_t count = 0;
    status = uform__seam_affinity(NULL, 0, &count);
    if (status != UFORM_STATUS_OK) return status;
    info->online = malloc((count ? count : 1) * sizeof *info->online);
    if (!info->online) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu CPUs", count);
    status = uform__seam_affinity(info->online, count, &info->online_count);
    if (info->online_count > count) info->online_count = count;
    return status;
}

uform_status_t uform__cpu_info_read(uform__cpu_info_t **out) {
    if (!out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "cpu info: NULL output");
    *out = NULL;
    uform__cpu_info_t *info = calloc(1, sizeof *info);
    char *buffer = malloc(FILE_CAPACITY);
    if (!info || !buffer) {
        free(info);
        free(buffer);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for the CPU description");
    }
    read_model(info);
    uform_status_t status = read_online(info, buffer);
    if (status == UFORM_STATUS_OK) status = read_topology(info, buffer);
    if (status == UFORM_STATUS_OK) status = read_caches(info, buffer);
    free(buffer);
    if (status != UFORM_STATUS_OK) {
        uform__cpu_info_free(info);
        return status;
    }
    *out = info;
    return UFORM_STATUS_OK;
}

void uform__cpu_info_free(uform__cpu_info_t *info) {
    if (!info) return;
    for (size_t i = 0; i < info->cache_count; i++) {
        for (size_t k = 0; k < info->caches[i].instance_count; k++) free(info->caches[i].instance_cpus[k]);
        free(info->caches[i].instance_cpus);
        free(info->caches[i].instance_sizes);
    }
    free(info->caches);
    free(info->online);
    free(info);
}

/* ---- NUMA distances ---- */

uform_status_t uform__numa_distances_read(int32_t **ids_out, size_t *count_out, uint32_t **distances_out) {
    *ids_out = NULL;
    *count_out = 0;
    *distances_out = NULL;
    char *buffer = malloc(FILE_CAPACITY);
    if (!buffer) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for the NUMA distances");
    int32_t *ids = NULL;
    size_t count = 0;
    uform_status_t status = read_text("/sys/devices/system/node/online", buffer);
    if (status == UFORM_STATUS_OK)
        status = uform__cpulist_parse(buffer, "/sys/devices/system/node/online", &ids, &count);
    if (status == UFORM_STATUS_NOT_FOUND) status = UFORM_STATUS_OK; /* no NUMA information: no matrix */
    uint32_t *distances = NULL;
    if (status == UFORM_STATUS_OK && count) {
        distances = malloc(count * count * sizeof *distances);
        if (!distances) status = uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu nodes' distances", count);
    }
    for (size_t row = 0; status == UFORM_STATUS_OK && row < count; row++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/distance", (int)ids[row]);
        status = read_text(path, buffer);
        if (status == UFORM_STATUS_NOT_FOUND) {
            /* A kernel without the files: no matrix, which is not an error. */
            free(ids);
            free(distances);
            ids = NULL;
            distances = NULL;
            count = 0;
            status = UFORM_STATUS_OK;
            break;
        }
        size_t column = 0;
        for (char *p = buffer; status == UFORM_STATUS_OK && *p;) {
            while (*p == ' ') p++;
            if (!*p) break;
            char *end = NULL;
            errno = 0;
            unsigned long value = *p >= '0' && *p <= '9' ? strtoul(p, &end, 10) : 0;
            if (!end || errno || value > 255 || (*end && *end != ' ') || column == count)
                status = uform__fail(UFORM_STATUS_MALFORMED, "%s: expected %zu distances from 0 to 255, got \"%.80s\"",
                                     path, count, buffer);
            else
                distances[row * count + column++] = (uint32_t)value;
            p = end ? end : p;
        }
        if (status == UFORM_STATUS_OK && column != count)
            status = uform__fail(UFORM_STATUS_MALFORMED, "%s: expected %zu distances (one per online node), got %zu",
                                 path, count, column);
    }
    free(buffer);
    if (status != UFORM_STATUS_OK) {
        free(ids);
        free(distances);
        return status;
    }
    *ids_out = ids;
    *count_out = count;
    *distances_out = distances;
    return UFORM_STATUS_OK;
}
