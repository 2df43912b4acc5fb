/* Records this machine as a fixture directory (tests/fixtures/README.md): the files the seam
 * reads, the CPUID leaves cpu_class.c asks for, XCR0, the AMX answer, auxv words and the
 * affinity. Usage: uform_capture_fixture <output-directory>. It reads through the real seam,
 * so what it records is exactly what the library would see here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hardware/cpulist.h"
#include "hardware/seam.h"

static const char *out_dir;

static void make_parents(const char *path) {
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    for (char *p = copy + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(copy, 0755);
            *p = '/';
        }
}

static char text[1 << 16];

/* Copies one machine file into the fixture if it exists; answers whether it did. */
static int copy(const char *path) {
    size_t length;
    if (uform__seam_read(path, text, sizeof text, &length) != UFORM_STATUS_OK) return 0;
    char target[4096];
    snprintf(target, sizeof target, "%s%s", out_dir, path);
    make_parents(target);
    FILE *f = fopen(target, "w");
    if (!f || fwrite(text, 1, length, f) != length) {
        fprintf(stderr, "cannot write %s: %s\n", target, strerror(errno));
        exit(1);
    }
    fclose(f);
    return 1;
}

static size_t read_list(const char *path, int32_t **items) {
    size_t count = 0;
    *items = NULL;
    if (uform__seam_read(path, text, sizeof text, NULL) != UFORM_STATUS_OK) return 0;
    if (uform__cpulist_parse(text, path, items, &count) != UFORM_STATUS_OK) return 0;
    return count;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <output-directory>\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    mkdir(out_dir, 0755);
    char path[4096];

    /* NUMA nodes and their CPUs and memory. */
    const char *node_files[] = {"online", "possible", "has_cpu", "has_memory"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/node/%s", node_files[i]);
        copy(path);
    }
    int32_t *nodes;
    size_t node_count = read_list("/sys/devices/system/node/possible", &nodes);
    for (size_t i = 0; i < node_count; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", (int)nodes[i]);
        copy(path);
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", (int)nodes[i]);
        copy(path);
    }
    free(nodes);
    copy("/proc/meminfo");
    int32_t *cpus;
    size_t cpu_count = read_list("/sys/devices/system/cpu/possible", &cpus);
    for (size_t i = 0; i < cpu_count; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", (int)cpus[i]);
        copy(path);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", (int)cpus[i]);
        copy(path);
    }
    free(cpus);

    /* The cgroup v2 path and every cpuset/cpu.max from it up to the root. */
    if (copy("/proc/self/cgroup")) {
        char *line = strstr(text, "0::/");
        if (line == text || (line && line[-1] == '\n')) {
            char group[2048];
            sscanf(line + 3, "%2047s", group);
            for (;;) {
                const char *files[] = {"cpuset.cpus.effective", "cpu.max"};
                for (size_t i = 0; i < 2; i++) {
                    snprintf(path, sizeof path, "/sys/fs/cgroup%s/%s", strcmp(group, "/") ? group : "", files[i]);
                    copy(path);
                }
                char *slash = strrchr(group, '/');
                if (!slash || strcmp(group, "/") == 0) break;
                if (slash == group) group[1] = '\0';
                else *slash = '\0';
            }
        }
    }

    /* CPUID: the basic leaves up to 0x24 with their subleaves the class code reads. */
    snprintf(path, sizeof path, "%s/cpuid.txt", out_dir);
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "# leaf subleaf eax ebx ecx edx, recorded by uform_capture_fixture\n");
    uform__cpuid_t r;
    uform__seam_cpuid(0, 0, &r);
    uint32_t max_leaf = r.eax;
    for (uint32_t leaf = 0; leaf <= max_leaf && leaf <= 0x24; leaf++) {
        uint32_t subleaves = leaf == 7 || leaf == 0xD || leaf == 0x24 ? 2 : 1;
        for (uint32_t sub = 0; sub < subleaves; sub++)
            if (uform__seam_cpuid(leaf, sub, &r))
                fprintf(f, "%x %x %08x %08x %08x %08x\n", leaf, sub, r.eax, r.ebx, r.ecx, r.edx);
    }
    fclose(f);

    snprintf(path, sizeof path, "%s/seam.txt", out_dir);
    f = fopen(path, "w");
    if (!f) return 1;
    uform__isa_t isa = uform__seam_isa();
    fprintf(f, "isa %s\n", isa == UFORM_ISA_X86_64 ? "x86_64" : isa == UFORM_ISA_ARM64 ? "arm64"
                          : isa == UFORM_ISA_RISCV64 ? "riscv64" : "other");
    fprintf(f, "xcr0 0x%llx\n", (unsigned long long)uform__seam_xcr0());
    fprintf(f, "amx_permission %d\n", uform__seam_amx_permission() ? 1 : 0);
    fprintf(f, "hwcap 0x%lx\nhwcap2 0x%lx\n", uform__seam_hwcap(1), uform__seam_hwcap(2));
    size_t n = 0;
    uform__seam_affinity(NULL, 0, &n);
    int32_t *affinity = calloc(n ? n : 1, sizeof *affinity);
    uform__seam_affinity(affinity, n, &n);
    uform__cpulist_format(affinity, n, text, sizeof text);
    fprintf(f, "affinity %s\n", text);
    free(affinity);
    fclose(f);
    printf("recorded this machine into %s\n", out_dir);
    return 0;
}
