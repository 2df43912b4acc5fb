/* Fuzzes the topology reader: the input is cut at NUL bytes into the files of a fixture
 * (seam.txt, node lists, a node's cpulist and meminfo, cgroup files, a core_id), the seam is
 * pointed at it, and the topology is read. Any content must give a status, never a crash. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
};
#define FILE_COUNT (sizeof files / sizeof files[0])

static char root[PATH_MAX];

static void make_directories(void) {
    const char *directories[] = {"sys", "sys/devices", "sys/devices/system", "sys/devices/system/node",
                                 "sys/devices/system/node/node0", "sys/devices/system/node/node1",
                                 "sys/devices/system/cpu", "sys/devices/system/cpu/cpu1",
                                 "sys/devices/system/cpu/cpu1/topology", "sys/fs", "sys/fs/cgroup",
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
    (void)uform_capabilities_available();
    uform__seam_use_fixture(NULL);
    return 0;
}
