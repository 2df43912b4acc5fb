/* The NUMA topology as this process may use it: nodes from sysfs, CPUs from affinity ∩ the
 * cgroup v2 cpuset, the cpu.max quota, and each node's CPUs ordered physical core first so
 * that spreading threads over a prefix of the list uses distinct cores before SMT siblings.
 * Built once through the seam, rebuilt when the seam's generation moves on. */
#include "hardware/topology.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hardware/cpulist.h"
#include "hardware/seam.h"

/* Sysfs lists and meminfo files are a few KiB even on the largest machines. */
#define TEXT_CAPACITY 65536

typedef struct list_t {
    int32_t *items;
    size_t count;
} list_t;

typedef struct reader_t {
    char *text; /* TEXT_CAPACITY bytes of scratch for every file */
} reader_t;

/* Reads and parses a list file. NOT_FOUND passes through silently for optional files. */
static uform_status_t read_list(reader_t *r, const char *path, list_t *list) {
    list->items = NULL;
    list->count = 0;
    uform_status_t status = uform__seam_read(path, r->text, TEXT_CAPACITY, NULL);
    if (status != UFORM_STATUS_OK) return status;
    return uform__cpulist_parse(r->text, path, &list->items, &list->count);
}

/* Keeps the items of `a` that `b` holds. */
static void intersect(list_t *a, const list_t *b) {
    size_t kept = 0;
    for (size_t i = 0; i < a->count; i++)
        if (uform__cpulist_contains(b->items, b->count, a->items[i])) a->items[kept++] = a->items[i];
    a->count = kept;
}

/* "MemTotal:  123 kB", anywhere in a (node or system) meminfo file; 0 if absent. */
static uform_status_t parse_memtotal(const char *text, const char *path, uint64_t *bytes) {
    *bytes = 0;
    const char *at = strstr(text, "MemTotal:");
    if (!at) return UFORM_STATUS_OK;
    at += strlen("MemTotal:");
    while (*at == ' ' || *at == '\t') at++;
    if (*at < '0' || *at > '9') return uform__fail(UFORM_STATUS_MALFORMED, "%s: MemTotal has no number", path);
    uint64_t kib = 0;
    for (; *at >= '0' && *at <= '9'; at++) {
        /* 2^50 KiB is an exabyte: past that the file is corrupt, not a big machine. */
        if (kib > ((uint64_t)1 << 50)) return uform__fail(UFORM_STATUS_MALFORMED, "%s: MemTotal is absurd", path);
        kib = kib * 10 + (uint64_t)(*at - '0');
    }
    while (*at == ' ' || *at == '\t') at++;
    if (strncmp(at, "kB", 2) != 0) return uform__fail(UFORM_STATUS_MALFORMED, "%s: MemTotal is not in kB", path);
    *bytes = kib * 1024;
    return UFORM_STATUS_OK;
}

static uform_status_t read_memtotal(reader_t *r, const char *path, uint64_t *bytes) {
    *bytes = 0;
    uform_status_t status = uform__seam_read(path, r->text, TEXT_CAPACITY, NULL);
    if (status == UFORM_STATUS_NOT_FOUND) return UFORM_STATUS_OK;
    if (status != UFORM_STATUS_OK) return status;
    return parse_memtotal(r->text, path, bytes);
}

/* A small non-negative integer file (core_id, physical_package_id); -1 when absent or odd. */
static int64_t read_small_int(reader_t *r, const char *path) {
    size_t length;
    if (uform__seam_read(path, r->text, 64, &length) != UFORM_STATUS_OK) return -1;
    char *end;
    long value = strtol(r->text, &end, 10);
    if (end == r->text || value < 0 || value > UFORM_CPULIST_MAX) return -1;
    return value;
}

/* ---- cgroup v2 ---- */

/* The process's cgroup v2 path ("/user.slice/..."), "" if it has none (v1 only or no file). */
static void cgroup_path(reader_t *r, char *path, size_t capacity) {
    path[0] = '\0';
    if (uform__seam_read("/proc/self/cgroup", r->text, TEXT_CAPACITY, NULL) != UFORM_STATUS_OK) return;
    for (char *line = r->text; line && *line;) {
        char *next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (strncmp(line, "0::/", 4) == 0 && strlen(line + 3) < capacity) {
            strcpy(path, line + 3);
            size_t n = strlen(path);
            while (n > 1 && (path[n - 1] == '/' || path[n - 1] == '\r' || path[n - 1] == ' ')) path[--n] = '\0';
            return;
        }
        line = next;
    }
}

/* Cuts the last component of a cgroup path; false once at the root. */
static bool cgroup_parent(char *path) {
    if (strcmp(path, "/") == 0 || !*path) return false;
    char *slash = strrchr(path, '/');
    if (slash == path) path[1] = '\0';
    else *slash = '\0';
    return true;
}

static void cgroup_file(char *out, size_t capacity, const char *group, const char *file) {
    snprintf(out, capacity, "/sys/fs/cgroup%s/%s", strcmp(group, "/") == 0 ? "" : group, file);
}

/* The effective cpuset of the nearest cgroup that has one; empty list when none does. */
static uform_status_t cgroup_cpuset(reader_t *r, const char *group, list_t *cpuset) {
    char walk[1024], path[1200];
    snprintf(walk, sizeof walk, "%s", group);
    cpuset->items = NULL;
    cpuset->count = 0;
    do {
        cgroup_file(path, sizeof path, walk, "cpuset.cpus.effective");
        uform_status_t status = read_list(r, path, cpuset);
        if (status != UFORM_STATUS_NOT_FOUND) return status;
    } while (cgroup_parent(walk));
    return UFORM_STATUS_OK;
}

/* The tightest cpu.max quota from the process's cgroup up to the root, in CPUs; 0 if none. */
static uform_status_t cgroup_quota(reader_t *r, const char *group, double *quota) {
    char walk[1024], path[1200];
    snprintf(walk, sizeof walk, "%s", group);
    *quota = 0;
    do {
        cgroup_file(path, sizeof path, walk, "cpu.max");
        uform_status_t status = uform__seam_read(path, r->text, 256, NULL);
        if (status == UFORM_STATUS_NOT_FOUND) continue;
        if (status != UFORM_STATUS_OK) return status;
        char limit[32];
        unsigned long long period = 0;
        char extra;
        if (sscanf(r->text, "%31s %llu %c", limit, &period, &extra) != 2 || period == 0 || period > 1000000000ull)
            return uform__fail(UFORM_STATUS_MALFORMED, "%s: expected \"<quota|max> <period>\", got \"%.40s\"", path,
                               r->text);
        if (strcmp(limit, "max") == 0) continue;
        char *end;
        unsigned long long amount = strtoull(limit, &end, 10);
        if (*end || limit[0] == '-' || amount == 0 || amount > 1000000000000ull)
            return uform__fail(UFORM_STATUS_MALFORMED, "%s: quota \"%s\" is not a positive number", path, limit);
        double cpus = (double)amount / (double)period;
        if (*quota == 0 || cpus < *quota) *quota = cpus;
    } while (cgroup_parent(walk));
    return UFORM_STATUS_OK;
}

/* ---- building ---- */

static void topology_free(uform__topology_t *t) {
    if (!t) return;
    for (size_t i = 0; i < t->node_count; i++) free(t->nodes[i].cpus);
    free(t->nodes);
    free(t->usable);
    free(t);
}

typedef struct keyed_t {
    int64_t key; /* package << 32 | core */
    size_t index;
} keyed_t;

static int by_key_then_index(const void *a, const void *b) {
    const keyed_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Orders a node's CPUs one per physical core first, then the SMT siblings, each ascending.
 * Sorting by core keeps this O(n log n) for the largest (or most hostile) CPU lists. */
static uform_status_t order_physical_first(reader_t *r, uform__node_t *node) {
    size_t n = node->cpu_count;
    if (n == 0) return UFORM_STATUS_OK;
    keyed_t *keyed = malloc(n * sizeof *keyed);
    int32_t *ordered = malloc(n * sizeof *ordered);
    bool *first = calloc(n, sizeof *first);
    if (!keyed || !ordered || !first) {
        free(keyed);
        free(ordered);
        free(first);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory to order node %d's CPUs", (int)node->id);
    }
    for (size_t i = 0; i < n; i++) {
        char path[128];
        int32_t cpu = node->cpus[i];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", (int)cpu);
        int64_t core = read_small_int(r, path);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", (int)cpu);
        int64_t package = read_small_int(r, path);
        /* Without topology files every CPU counts as its own core: the safe assumption. */
        keyed[i].key = core < 0 ? -1 - (int64_t)cpu : ((package < 0 ? 0 : package) << 32) | core;
        keyed[i].index = i;
    }
    qsort(keyed, n, sizeof *keyed, by_key_then_index);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || keyed[i].key != keyed[i - 1].key) first[keyed[i].index] = true;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (first[i]) ordered[k++] = node->cpus[i];
    node->physical_cores = k;
    for (size_t i = 0; i < n; i++)
        if (!first[i]) ordered[k++] = node->cpus[i];
    memcpy(node->cpus, ordered, n * sizeof *ordered);
    free(keyed);
    free(ordered);
    free(first);
    return UFORM_STATUS_OK;
}

/* The node ids to report: online nodes that have CPUs or memory. */
static uform_status_t node_ids(reader_t *r, list_t *ids, bool *has_numa) {
    uform_status_t status = read_list(r, "/sys/devices/system/node/online", ids);
    if (status == UFORM_STATUS_NOT_FOUND) status = read_list(r, "/sys/devices/system/node/possible", ids);
    *has_numa = status != UFORM_STATUS_NOT_FOUND;
    if (status == UFORM_STATUS_NOT_FOUND) return UFORM_STATUS_OK;
    if (status != UFORM_STATUS_OK) return status;
    list_t with_cpu, with_memory;
    uform_status_t cpu_status = read_list(r, "/sys/devices/system/node/has_cpu", &with_cpu);
    uform_status_t memory_status = read_list(r, "/sys/devices/system/node/has_memory", &with_memory);
    status = cpu_status != UFORM_STATUS_NOT_FOUND && cpu_status != UFORM_STATUS_OK         ? cpu_status
             : memory_status != UFORM_STATUS_NOT_FOUND && memory_status != UFORM_STATUS_OK ? memory_status
                                                                                            : UFORM_STATUS_OK;
    /* Older kernels lack has_cpu/has_memory: then every online node counts. */
    if (status == UFORM_STATUS_OK && (cpu_status == UFORM_STATUS_OK || memory_status == UFORM_STATUS_OK)) {
        size_t kept = 0;
        for (size_t i = 0; i < ids->count; i++)
            if (uform__cpulist_contains(with_cpu.items, with_cpu.count, ids->items[i]) ||
                uform__cpulist_contains(with_memory.items, with_memory.count, ids->items[i]))
                ids->items[kept++] = ids->items[i];
        ids->count = kept;
    }
    free(with_cpu.items);
    free(with_memory.items);
    return status;
}

static uform_status_t read_nodes(reader_t *r, uform__topology_t *t, const list_t *ids) {
    t->nodes = calloc(ids->count ? ids->count : 1, sizeof *t->nodes);
    if (!t->nodes) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu NUMA nodes", ids->count);
    for (size_t i = 0; i < ids->count; i++) {
        uform__node_t *node = &t->nodes[t->node_count++];
        node->id = ids->items[i];
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", (int)node->id);
        list_t cpus;
        uform_status_t status = read_list(r, path, &cpus);
        if (status != UFORM_STATUS_OK && status != UFORM_STATUS_NOT_FOUND) return status;
        list_t usable = {t->usable, t->usable_count};
        intersect(&cpus, &usable);
        node->cpus = cpus.items;
        node->cpu_count = cpus.count;
        status = order_physical_first(r, node);
        if (status != UFORM_STATUS_OK) return status;
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", (int)node->id);
        status = read_memtotal(r, path, &node->memory_bytes);
        if (status != UFORM_STATUS_OK) return status;
    }
    return UFORM_STATUS_OK;
}

/* Without NUMA information: one node 0 with every usable CPU and the system's memory. */
static uform_status_t read_single_node(reader_t *r, uform__topology_t *t) {
    t->nodes = calloc(1, sizeof *t->nodes);
    int32_t *cpus = malloc((t->usable_count ? t->usable_count : 1) * sizeof *cpus);
    if (!t->nodes || !cpus) {
        free(cpus);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for the topology");
    }
    memcpy(cpus, t->usable, t->usable_count * sizeof *cpus);
    t->node_count = 1;
    t->nodes[0] = (uform__node_t){.id = 0, .cpus = cpus, .cpu_count = t->usable_count};
    uform_status_t status = order_physical_first(r, &t->nodes[0]);
    if (status != UFORM_STATUS_OK) return status;
    return read_memtotal(r, "/proc/meminfo", &t->nodes[0].memory_bytes);
}

static uform_status_t read_usable(reader_t *r, uform__topology_t *t) {
    size_t count = 0;
    uform_status_t status = uform__seam_affinity(NULL, 0, &count);
    if (status != UFORM_STATUS_OK) return status;
    list_t affinity = {malloc((count ? count : 1) * sizeof(int32_t)), 0};
    if (!affinity.items) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %zu CPUs", count);
    status = uform__seam_affinity(affinity.items, count, &affinity.count);
    if (affinity.count > count) affinity.count = count; /* CPUs came online between the calls */
    t->usable = affinity.items;
    t->usable_count = affinity.count;
    if (status != UFORM_STATUS_OK) return status;

    char group[1024];
    cgroup_path(r, group, sizeof group);
    if (!group[0]) return UFORM_STATUS_OK;
    list_t cpuset;
    status = cgroup_cpuset(r, group, &cpuset);
    if (status != UFORM_STATUS_OK) return status;
    /* Linux already keeps affinity inside the cpuset; the intersection matters for fixtures
     * and for a cpuset changed after the mask was set. An empty result means the two views
     * disagree outright, and the kernel's affinity answer is the one that schedules us. */
    if (cpuset.count) {
        list_t kept = {malloc(t->usable_count * sizeof(int32_t) + 1), 0};
        if (!kept.items) {
            free(cpuset.items);
            return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for the cpuset");
        }
        memcpy(kept.items, t->usable, t->usable_count * sizeof(int32_t));
        kept.count = t->usable_count;
        intersect(&kept, &cpuset);
        if (kept.count) {
            free(t->usable);
            t->usable = kept.items;
            t->usable_count = kept.count;
        } else {
            free(kept.items);
        }
    }
    free(cpuset.items);
    return cgroup_quota(r, group, &t->quota_cpus);
}

static uform_status_t build(uform__topology_t **out) {
    reader_t r = {malloc(TEXT_CAPACITY)};
    uform__topology_t *t = calloc(1, sizeof *t);
    if (!r.text || !t) {
        free(r.text);
        free(t);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for the topology");
    }
    list_t ids = {NULL, 0};
    uform_status_t status = read_usable(&r, t);
    if (status == UFORM_STATUS_OK) status = node_ids(&r, &ids, &t->has_numa);
    if (status == UFORM_STATUS_OK) status = t->has_numa ? read_nodes(&r, t, &ids) : read_single_node(&r, t);
    free(ids.items);
    free(r.text);
    if (status != UFORM_STATUS_OK) {
        topology_free(t);
        return status;
    }
    size_t cores = t->usable_count;
    if (t->quota_cpus > 0 && (double)cores > ceil(t->quota_cpus)) cores = (size_t)ceil(t->quota_cpus);
    t->default_threads = uform__default_threads_for(cores);
    *out = t;
    return UFORM_STATUS_OK;
}

/* A mutex rather than pthread_once: the cache is rebuilt when the seam moves. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uform__topology_t *cached;
static uint64_t cached_generation;

uform_status_t uform__topology_get(const uform__topology_t **topology) {
    if (!topology) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "topology: NULL output");
    *topology = NULL;
    pthread_mutex_lock(&lock);
    uform_status_t status = UFORM_STATUS_OK;
    uint64_t now = uform__seam_generation();
    if (cached && cached_generation != now) {
        /* The seam moved, which tests do alone: nobody still reads the old machine's answer. */
        topology_free(cached);
        cached = NULL;
    }
    if (!cached) {
        status = build(&cached);
        cached_generation = now;
    }
    *topology = cached;
    pthread_mutex_unlock(&lock);
    return status;
}

const uform__node_t *uform__topology_node(const uform__topology_t *topology, int32_t id) {
    for (size_t i = 0; topology && i < topology->node_count; i++)
        if (topology->nodes[i].id == id) return &topology->nodes[i];
    return NULL;
}

size_t uform__default_threads_for(size_t cores) {
    size_t threads = cores - cores / 8;
    return threads ? threads : 1;
}

/* ---- public ---- */

uform_status_t uform_numa_domains(uform_numa_domain_t *domains, size_t capacity, size_t *count) {
    if (!count) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_numa_domains: count is NULL");
    if (!domains && capacity)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_numa_domains: domains is NULL with capacity %zu",
                           capacity);
    const uform__topology_t *t;
    uform_status_t status = uform__topology_get(&t);
    if (status != UFORM_STATUS_OK) return status;
    for (size_t i = 0; i < t->node_count && i < capacity; i++)
        domains[i] = (uform_numa_domain_t){.node = t->nodes[i].id,
                                           .usable_cpus = (uint32_t)t->nodes[i].cpu_count,
                                           .physical_cores = (uint32_t)t->nodes[i].physical_cores,
                                           .memory_bytes = t->nodes[i].memory_bytes};
    *count = t->node_count;
    return UFORM_STATUS_OK;
}

size_t uform_default_threads(void) {
    const uform__topology_t *t;
    /* The answer has no status: an unreadable machine still gets one thread to work with. */
    if (uform__topology_get(&t) != UFORM_STATUS_OK) return 1;
    return t->default_threads;
}
