/* The lscpu / lstopo part of the seam's readings on broken files: a cache size, level, type or
 * sharing list, a topology number or a distance row that is not in the kernel's format gives
 * MALFORMED naming the file, never a crash or a made-up value; absent files leave their fields
 * unknown; and the report still succeeds, saying which part it could not read. */
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "hardware/cpu_info.h"
#include "scratch_tree.h"

#define CPU "sys/devices/system/cpu/cpu"

/* Two CPUs of one core, one L1d each shared by both, two nodes. */
static void base(void) {
    remove_tree();
    CHECK_EQ_INT(mkdir(root, 0755), 0);
    put("seam.txt", "isa x86_64\naffinity 0-1\n");
    put("cpuid.txt", "# no leaves\n");
    put("proc/cpuinfo",
        "processor\t: 0\nmodel name\t: Test CPU @ 1GHz\n\nprocessor\t: 1\nmodel name\t: Test CPU @ 1GHz\n");
    put("sys/devices/system/node/online", "0-1\n");
    put("sys/devices/system/node/node0/cpulist", "0-1\n");
    put("sys/devices/system/node/node1/cpulist", "\n");
    put("sys/devices/system/node/node0/distance", "10 20\n");
    put("sys/devices/system/node/node1/distance", "20 10\n");
    put("sys/devices/system/cpu/online", "0-1\n");
    for (int c = 0; c < 2; c++) {
        char path[128];
        snprintf(path, sizeof path, CPU "%d/topology/physical_package_id", c);
        put(path, "0\n");
        snprintf(path, sizeof path, CPU "%d/topology/core_id", c);
        put(path, "0\n");
        snprintf(path, sizeof path, CPU "%d/topology/thread_siblings_list", c);
        put(path, "0-1\n");
        snprintf(path, sizeof path, CPU "%d/cache/index0/level", c);
        put(path, "1\n");
        snprintf(path, sizeof path, CPU "%d/cache/index0/type", c);
        put(path, "Data\n");
        snprintf(path, sizeof path, CPU "%d/cache/index0/size", c);
        put(path, "48K\n");
        snprintf(path, sizeof path, CPU "%d/cache/index0/shared_cpu_list", c);
        put(path, "0-1\n");
    }
}

static void expect_cpu(uform_status_t expected, const char *mention) {
    CHECK_OK(uform__seam_use_fixture(root));
    uform__cpu_info_t *info = (uform__cpu_info_t *)1;
    CHECK_STATUS(uform__cpu_info_read(&info), expected);
    if (expected == UFORM_STATUS_OK) {
        uform__cpu_info_free(info);
        return;
    }
    CHECK(info == NULL);
    if (!strstr(uform_last_error(), mention))
        TEST_FAIL_("message \"%s\" does not mention \"%s\"", uform_last_error(), mention);
    /* The report is still written, and says what it could not read. */
    char text[8192];
    size_t length = 0;
    CHECK_OK(uform_info_write(UFORM_INFO_TEXT, text, sizeof text, &length));
    CHECK(strstr(text, "CPU model:              unreadable (MALFORMED: ") != NULL);
    CHECK(strstr(text, mention) != NULL);
    CHECK_OK(uform_info_write(UFORM_INFO_JSON, text, sizeof text, &length));
    CHECK(strstr(text, "\"cpu\":null,\"cpu_error\":\"MALFORMED: ") != NULL);
}

static void expect_distances(uform_status_t expected, const char *mention) {
    CHECK_OK(uform__seam_use_fixture(root));
    int32_t *ids = NULL;
    size_t count = 99;
    uint32_t *distances = NULL;
    CHECK_STATUS(uform__numa_distances_read(&ids, &count, &distances), expected);
    if (expected != UFORM_STATUS_OK) {
        CHECK(ids == NULL && distances == NULL && count == 0);
        if (!strstr(uform_last_error(), mention))
            TEST_FAIL_("message \"%s\" does not mention \"%s\"", uform_last_error(), mention);
        char text[8192];
        size_t length = 0;
        CHECK_OK(uform_info_write(UFORM_INFO_TEXT, text, sizeof text, &length));
        CHECK(strstr(text, "NUMA distances:         unreadable (MALFORMED: ") != NULL);
    }
    free(ids);
    free(distances);
}

int main(void) {
    snprintf(root, sizeof root, "%s/cpu_info_malformed.%d", UFORM_TEST_BINARY_DIR, (int)getpid());

    /* The valid base reads whole. */
    base();
    CHECK_OK(uform__seam_use_fixture(root));
    uform__cpu_info_t *info = NULL;
    CHECK_OK(uform__cpu_info_read(&info));
    CHECK_EQ_STR(info->model, "Test CPU @ 1GHz");
    CHECK_EQ_INT(info->online_count, 2);
    CHECK_EQ_INT(info->sockets, 1);
    CHECK_EQ_INT(info->cores, 1);
    CHECK_EQ_INT(info->threads_per_core, 2);
    CHECK_EQ_INT(info->cache_count, 1);
    CHECK_EQ_INT(info->caches[0].size_bytes, 48 * 1024);
    CHECK_EQ_INT(info->caches[0].instance_count, 1);
    CHECK_EQ_INT(info->caches[0].instance_sizes[0], 2);
    uform__cpu_info_free(info);
    expect_distances(UFORM_STATUS_OK, "");

    /* Cache files. */
    const char *const sizes[] = {"48\n", "K\n", "48KB\n", "-48K\n", "48 K\n", "99999999999999999999K\n", "\n"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        base();
        put(CPU "1/cache/index0/size", sizes[i]);
        expect_cpu(UFORM_STATUS_MALFORMED, "cpu1/cache/index0/size");
    }
    base();
    put(CPU "0/cache/index0/level", "one\n");
    expect_cpu(UFORM_STATUS_MALFORMED, "cpu0/cache/index0/level");
    base();
    put(CPU "0/cache/index0/type", "Victim\n");
    expect_cpu(UFORM_STATUS_MALFORMED, "cpu0/cache/index0/type");
    base();
    put(CPU "1/cache/index0/shared_cpu_list", "0\n"); /* a CPU's own cache must hold the CPU */
    expect_cpu(UFORM_STATUS_MALFORMED, "cpu1/cache/index0/shared_cpu_list");
    base();
    put(CPU "1/cache/index0/shared_cpu_list", "1-0\n");
    expect_cpu(UFORM_STATUS_MALFORMED, "cpu1/cache/index0/shared_cpu_list");
    /* Topology files. */
    base();
    put(CPU "1/topology/core_id", "0x1\n");
    expect_cpu(UFORM_STATUS_MALFORMED, "cpu1/topology/core_id");
    base();
    put(CPU "0/topology/thread_siblings_list", "zero\n");
    expect_cpu(UFORM_STATUS_MALFORMED, "cpu0/topology/thread_siblings_list");
    base();
    put("sys/devices/system/cpu/online", "0-\n");
    expect_cpu(UFORM_STATUS_MALFORMED, "cpu/online");

    /* Absent files: unknown, not errors. */
    base();
    char path[1024];
    snprintf(path, sizeof path, "%s/" CPU "1/topology/core_id", root);
    CHECK_EQ_INT(unlink(path), 0);
    snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
    CHECK_EQ_INT(unlink(path), 0);
    CHECK_OK(uform__seam_use_fixture(root));
    CHECK_OK(uform__cpu_info_read(&info));
    CHECK_EQ_STR(info->model, "");
    CHECK_EQ_INT(info->sockets, 0); /* one CPU without its place: no partial count */
    CHECK_EQ_INT(info->cores, 0);
    uform__cpu_info_free(info);

    /* The kernel writes -1 for a package it cannot name (topology_physical_package_id's
     * default, seen in VMs and on some Arm firmware): unknown, not MALFORMED. */
    base();
    put(CPU "0/topology/physical_package_id", "-1\n");
    CHECK_OK(uform__seam_use_fixture(root));
    CHECK_OK(uform__cpu_info_read(&info));
    CHECK_EQ_INT(info->sockets, 0);
    CHECK_EQ_INT(info->cores, 0);
    uform__cpu_info_free(info);
    base();
    put(CPU "0/topology/physical_package_id", "-2\n");
    expect_cpu(UFORM_STATUS_MALFORMED, "physical_package_id");

    /* Distance rows. */
    base();
    put("sys/devices/system/node/node1/distance", "20\n");
    expect_distances(UFORM_STATUS_MALFORMED, "node1/distance");
    base();
    put("sys/devices/system/node/node1/distance", "20 10 30\n");
    expect_distances(UFORM_STATUS_MALFORMED, "node1/distance");
    base();
    put("sys/devices/system/node/node0/distance", "10 x\n");
    expect_distances(UFORM_STATUS_MALFORMED, "node0/distance");
    base();
    put("sys/devices/system/node/node0/distance", "10 256\n");
    expect_distances(UFORM_STATUS_MALFORMED, "node0/distance");
    base();
    snprintf(path, sizeof path, "%s/sys/devices/system/node/node1/distance", root);
    CHECK_EQ_INT(unlink(path), 0);
    CHECK_OK(uform__seam_use_fixture(root));
    int32_t *ids = NULL;
    size_t count = 99;
    uint32_t *distances = NULL;
    CHECK_OK(uform__numa_distances_read(&ids, &count, &distances));
    CHECK_EQ_INT(count, 0); /* a kernel without the files: no matrix */
    CHECK(ids == NULL && distances == NULL);
    free(ids);
    free(distances);

    remove_tree();
    CHECK_OK(uform__seam_use_fixture(NULL));
    TEST_DONE();
}
