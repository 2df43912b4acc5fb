/* Fuzzes the hardware readers: the input is cut at NUL bytes into the files of a fixture
 * (seam.txt, node lists, a node's cpulist and meminfo, cgroup files, a CPU's topology and cache
 * files, node distances, /proc/cpuinfo), the seam is pointed at it, and the topology, the CPU
 * class of every class, the CPU description and the NUMA distances are read. Any content must
 * give a status, never a crash. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hardware/cpu_class.h"
#include "hardware/cpu_info.h"
#include "hardware/seam.h"
#include "hardware/topology.h"
#include "uform.h"

static const char *const files[] = {
    "seam.txt",
    "cpuid.txt",
    "sys/devices/system/node/online",
    "sys/devices/system/node/has_memory",
    "sys/devices/system/node/node0/cpulist",
    "sys/devices/system/node/node0/meminfo",
    "sys/devices/system/node/node1/cpulist",
    "proc/self/cgroup",
    "sys/fs/cgroup/a/cpuset.cpus.effective",
    "sys/fs/cgroup/a/cpu.max",
    "sys/devices/system/cpu/cpu1/topology/core_id",
    "proc/meminfo",
    /* New files go last, so the corpus's inputs keep their meaning. */
    "sys/devices/system/cpu/online",
    "sys/devices/system/cpu/cpu1/topology/physical_package_id",
    "sys/devices/system/cpu/cpu1/topology/thread_siblings_list",
    "sys/devices/system/cpu/cpu1/cache/index0/level",
    "sys/devices/system/cpu/cpu1/cache/index0/type",
    "sys/devices/system/cpu/cpu1/cache/index0/size",
    "sys/devices/system/cpu/cpu1/cache/index0/shared_cpu_list",
    "sys/devices/system/node/node0/distance",
    "sys/devices/system/node/node1/distance",
    "proc/cpuinfo",
};
#define FILE_COUNT (sizeof files / sizeof files[0])

static char root[PATH_MAX];

static void make_directories(void) {
    const char *directories[] = {"sys", "sys/devices", "sys/devices/system", "sys/devices/system/node",
                                 "sys/devices/system/node/node0", "sys/devices/system/node/node1",
                                 "sys/devices/system/cpu", "sys/devices/system/cpu/cpu1",
                                 "sys/devices/system/cpu/cpu1/topology", "sys/devices/system/cpu/cpu1/cache",
                                 "sys/devices/system/cpu/cpu1/cache/index0", "sys/fs", "sys/fs/cgroup",
                                 "sys/fs/cgroup/a", "proc", "proc/self"};
    char path[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof directories / sizeof directories[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", root, directories[i]);
        mkdir(path, 0755);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!root[0]) {
        snprintf(root, sizeof root, "/tmp/uform_fuzz_sysfs_%d", (int)getpid());
        mkdir(root, 0755);
        make_directories();
    }
    const char *cursor = (const char *)data, *end = (const char *)data + size;
    char path[PATH_MAX + 64];
    for (size_t i = 0; i < FILE_COUNT; i++) {
        snprintf(path, sizeof path, "%s/%s", root, files[i]);
        const char *stop = cursor < end ? memchr(cursor, '\0', (size_t)(end - cursor)) : NULL;
        if (!stop) stop = end;
        /* An input too short to reach a file leaves it absent, so "missing" is explored too. */
        if (cursor >= end) {
            unlink(path);
            continue;
        }
        FILE *f = fopen(path, "w");
        if (!f) continue;
        fwrite(cursor, 1, (size_t)(stop - cursor), f);
        fclose(f);
        cursor = stop < end ? stop + 1 : end;
    }
    if (uform__seam_use_fixture(root) != UFORM_STATUS_OK) return 0;
    const uform__topology_t *topology;
    if (uform__topology_get(&topology) == UFORM_STATUS_OK) {
        if (topology->default_threads < 1) abort();
        uform_numa_domain_t domains[4];
        size_t count;
        if (uform_numa_domains(domains, 4, &count) != UFORM_STATUS_OK) abort();
    }
    (void)uform_cpu_class_derived();
    for (int c = 0; c <= UFORM_CPU_CLASS_MONOVERSIONED + 1; c++) (void)uform__cpu_class_runs((uform_cpu_class_t)c);
    uform__cpu_info_t *info = NULL;
    if (uform__cpu_info_read(&info) == UFORM_STATUS_OK) {
        if (!info) abort();
        for (size_t i = 0; i < info->cache_count; i++)
            if (!info->caches[i].instance_count) abort();
        uform__cpu_info_free(info);
    }
    int32_t *ids = NULL;
    size_t count = 0;
    uint32_t *distances = NULL;
    if (uform__numa_distances_read(&ids, &count, &distances) == UFORM_STATUS_OK && count && (!ids || !distances))
        abort();
    free(ids);
    free(distances);
    uform__seam_use_fixture(NULL);
    return 0;
}
