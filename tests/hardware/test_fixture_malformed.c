/* Broken fixtures, written into a temporary directory: empty, truncated, garbage and absurd
 * files must each give a clear status (and a message naming the file), never a crash. */
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "scratch_tree.h"

/* A fresh valid one-node machine to break one file of. */
static void base(void) {
    remove_tree();
    CHECK_EQ_INT(mkdir(root, 0755), 0);
    put("seam.txt", "isa x86_64\naffinity 0-3\n");
    put("cpuid.txt", "# a CPU that answers no leaves\n");
    put("sys/devices/system/node/online", "0\n");
    put("sys/devices/system/node/node0/cpulist", "0-3\n");
    put("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 1024 kB\n");
}

static void expect_topology(uform_status_t expected, const char *mention) {
    CHECK_OK(uform__seam_use_fixture(root));
    const uform__topology_t *t = (const uform__topology_t *)1;
    CHECK_STATUS(uform__topology_get(&t), expected);
    if (expected != UFORM_STATUS_OK) {
        CHECK(t == NULL);
        if (!strstr(uform_last_error(), mention))
            TEST_FAIL_("message \"%s\" does not mention \"%s\"", uform_last_error(), mention);
        size_t count;
        CHECK_STATUS(uform_numa_domains(NULL, 0, &count), expected);
        CHECK_EQ_INT(uform_default_threads(), 1);
        char text[256];
        size_t length;
        CHECK_STATUS(uform_info_write(UFORM_INFO_TEXT, text, sizeof text, &length), expected);
    }
}

static void expect_fixture(uform_status_t expected, const char *mention) {
    CHECK_STATUS(uform__seam_use_fixture(root), expected);
    if (!strstr(uform_last_error(), mention))
        TEST_FAIL_("message \"%s\" does not mention \"%s\"", uform_last_error(), mention);
}

int main(void) {
    snprintf(root, sizeof root, "%s/malformed_fixture_%d", UFORM_TEST_BINARY_DIR, (int)getpid());

    base();
    expect_topology(UFORM_STATUS_OK, NULL);
    CHECK_EQ_INT(topology()->nodes[0].memory_bytes, 1024 * 1024);

    /* Node files. */
    const char *bad_lists[] = {"0-3,x\n", "3-0\n", "0-\n", "0-99999999\n", "garbage", "1,,2"};
    for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++) {
        base();
        put("sys/devices/system/node/node0/cpulist", bad_lists[i]);
        expect_topology(UFORM_STATUS_MALFORMED, "node0/cpulist");
        base();
        put("sys/devices/system/node/online", bad_lists[i]);
        expect_topology(UFORM_STATUS_MALFORMED, "node/online");
    }
    base();
    put("sys/devices/system/node/node0/cpulist", ""); /* empty: a CPU-less node */
    expect_topology(UFORM_STATUS_OK, NULL);
    CHECK_EQ_INT(topology()->nodes[0].cpu_count, 0);
    CHECK_EQ_INT(uform_default_threads(), 4); /* 4 usable CPUs (4 - 4/8), though none in a node */

    base();
    put("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: lots kB\n");
    expect_topology(UFORM_STATUS_MALFORMED, "MemTotal");
    base();
    put("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 99999999999999999999999 kB\n");
    expect_topology(UFORM_STATUS_MALFORMED, "absurd");
    base();
    put("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 12"); /* truncated */
    expect_topology(UFORM_STATUS_MALFORMED, "kB");
    base();
    put("sys/devices/system/node/node0/meminfo", ""); /* empty: memory unknown */
    expect_topology(UFORM_STATUS_OK, NULL);
    CHECK_EQ_INT(topology()->nodes[0].memory_bytes, 0);

    /* Topology files that make no sense count each CPU as its own core. */
    base();
    put("sys/devices/system/cpu/cpu0/topology/core_id", "banana\n");
    put("sys/devices/system/cpu/cpu1/topology/core_id", "-5\n");
    expect_topology(UFORM_STATUS_OK, NULL);
    CHECK_EQ_INT(topology()->nodes[0].physical_cores, 4);

    /* cgroup files. */
    base();
    put("proc/self/cgroup", "0::/job\n");
    put("sys/fs/cgroup/job/cpu.max", "lots 100000\n");
    expect_topology(UFORM_STATUS_MALFORMED, "cpu.max");
    base();
    put("proc/self/cgroup", "0::/job\n");
    put("sys/fs/cgroup/job/cpu.max", "100000 0\n");
    expect_topology(UFORM_STATUS_MALFORMED, "cpu.max");
    base();
    put("proc/self/cgroup", "0::/job\n");
    put("sys/fs/cgroup/job/cpu.max", "");
    expect_topology(UFORM_STATUS_MALFORMED, "cpu.max");
    base();
    put("proc/self/cgroup", "0::/job\n");
    put("sys/fs/cgroup/job/cpu.max", "max 100000\n");
    put("sys/fs/cgroup/job/cpuset.cpus.effective", "2-3\n");
    expect_topology(UFORM_STATUS_OK, NULL);
    CHECK(topology()->quota_cpus == 0);
    CHECK_EQ_INT(topology()->usable_count, 2);
    base();
    put("proc/self/cgroup", "0::/job\n");
    put("sys/fs/cgroup/job/cpuset.cpus.effective", "0-2,zz\n");
    expect_topology(UFORM_STATUS_MALFORMED, "cpuset.cpus.effective");
    base();
    put("proc/self/cgroup", "garbage without a v2 line");
    expect_topology(UFORM_STATUS_OK, NULL);
    base();
    put("proc/self/cgroup", "0::/a\n");
    put("sys/fs/cgroup/a/cpu.max", "50000 100000\n"); /* half a CPU still gets one thread */
    expect_topology(UFORM_STATUS_OK, NULL);
    CHECK_EQ_INT(uform_default_threads(), 1);

    /* An oversized file is refused, not cut. */
    base();
    char *huge = malloc(200000);
    memset(huge, '1', 199999);
    huge[199999] = '\0';
    put("sys/devices/system/node/node0/cpulist", huge);
    free(huge);
    expect_topology(UFORM_STATUS_MALFORMED, "larger");

    /* No NUMA information: one node 0 with every usable CPU and the system's memory. */
    base();
    put("sys/devices/system/node/online", "");
    remove(strcat(strcpy((char[512]){0}, root), "/sys/devices/system/node/online"));
    put("proc/meminfo", "MemTotal: 2048 kB\n");
    expect_topology(UFORM_STATUS_OK, NULL);
    CHECK(!topology()->has_numa);
    CHECK_EQ_INT(topology()->nodes[0].cpu_count, 4);
    CHECK_EQ_INT(topology()->nodes[0].memory_bytes, 2048 * 1024);
    CHECK(!has_token(uform_capabilities_available(), "numa"));

    /* The fixture's own files. */
    base();
    put("seam.txt", "");
    expect_fixture(UFORM_STATUS_MALFORMED, "no isa");
    put("seam.txt", "isa x86_64\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "no affinity");
    put("seam.txt", "isa vax\naffinity 0\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "unknown isa");
    put("seam.txt", "isa x86_64\naffinity 0\nxcr0 banana\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "xcr0");
    put("seam.txt", "isa x86_64\naffinity 0\nhwcap -1\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "hwcap");
    put("seam.txt", "isa x86_64\naffinity 0\namx_permission 7\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "amx_permission");
    put("seam.txt", "isa x86_64\naffinity 0-\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "affinity");
    put("seam.txt", "isa x86_64\naffinity 0\ncolour blue\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "colour");
    put("seam.txt", "isa x86_64 # comment\naffinity 0 # comment\n\n");
    put("cpuid.txt", "0 0 1 2 3\n"); /* truncated line */
    expect_fixture(UFORM_STATUS_MALFORMED, "cpuid.txt line 1");
    put("cpuid.txt", "0 0 1 2 3 4 5\n");
    expect_fixture(UFORM_STATUS_MALFORMED, "cpuid.txt");
    put("cpuid.txt", "1 0 100000000 0 0 0\n"); /* wider than 32 bits */
    expect_fixture(UFORM_STATUS_MALFORMED, "cpuid.txt");
    put("cpuid.txt", "# nothing\n\n");
    uint64_t before = uform__seam_generation();
    CHECK_OK(uform__seam_use_fixture(root));
    /* A move the caches can see: each one counts once. */
    CHECK_EQ_INT(uform__seam_generation(), before + 1);
    CHECK_CLASS("serial"); /* an x86 CPU that answers no leaves is the floor */
    remove_tree();
    CHECK_STATUS(uform__seam_use_fixture(root), UFORM_STATUS_NOT_FOUND);
    /* A failed switch keeps the previous fixture, and the caches built from it. */
    CHECK_EQ_INT(uform__seam_generation(), before + 1);
    CHECK_CLASS("serial");
    CHECK_OK(uform__seam_use_fixture(NULL));
    CHECK_EQ_INT(uform__seam_generation(), before + 2);
    TEST_DONE();
}
