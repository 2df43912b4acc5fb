/* NVLinks through NVSwitches (an HGX board), in the NVML double and in uform__nvml_nvlinks.
 * The CUDA double's configuration holds six GPUs: four in NVLink group 0, which the NVML
 * double's `nvswitch group=0 switches=4` wires through four switches (every one of a GPU's 18
 * links active, link l to switch l mod 4), and two in group 1, joined directly (min(4, 18) = 4
 * links). nvmlDeviceGetNvLinkRemoteDeviceType answers SWITCH for the first group's links and
 * GPU for the second's; the remote PCI query answers the switch's address. uform counts a link
 * to a switch for every other GPU with a link to that switch: 18 between each pair of group 0,
 * as `nvidia-smi topo -m` shows NV18 there. A failing type query leaves the pairs unknown. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/nvml/nvml_loader.h"
#include "nvml_double_api.h"

#define GPUS 6
static const char *const addresses[GPUS] = {"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0",
                                            "0000:61:00.0", "0000:9d:00.0", "0000:c3:00.0"};

/* Runs `body` in a child with `config` as UFORM_NVML_DOUBLE_CONFIG (the double reads it once
 * per process); the child fails with a nonzero exit (`body`'s, or a failed check's). */
static void in_child(const char *config, int (*body)(void), const char *what) {
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        setenv("UFORM_NVML_DOUBLE_CONFIG", config, 1);
        _exit(body());
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) TEST_FAIL_("%s: the child failed (status %d)", what, status);
}

static int compare(const int32_t *counts, const int32_t *expected) {
    int failures = 0;
    for (int k = 0; k < GPUS * GPUS; k++)
        if (counts[k] != expected[k]) {
            fprintf(stderr, "nvlinks[%d][%d] = %d, expected %d\n", k / GPUS, k % GPUS, counts[k], expected[k]);
            failures++;
        }
    return failures;
}

/* The double's own answers for the switched and the direct links. */
static int switched_semantics(void) {
    nvml_double_api_t api;
    void *library = nvml_double_open(&api);
    uform_nvmlDevice gpu = NULL, direct = NULL, alone = NULL;
    uform_nvmlIntNvLinkDeviceType type = 77;
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1b:00.0", &gpu), UFORM_NVML_ERROR_UNINITIALIZED);
    CHECK_EQ_INT(api.nvmlInit_v2(), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1b:00.0", &gpu), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:9d:00.0", &direct), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:d0:00.0", &alone), UFORM_NVML_SUCCESS);
    for (unsigned link = 0; link < UFORM_NVML_NVLINK_MAX_LINKS; link++) {
        uform_nvmlEnableState state = 77;
        CHECK_EQ_INT(api.nvmlDeviceGetNvLinkState(gpu, link, &state), UFORM_NVML_SUCCESS);
        CHECK_EQ_INT(state, UFORM_NVML_FEATURE_ENABLED); /* all 18 go to switches */
        CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType(gpu, link, &type), UFORM_NVML_SUCCESS);
        CHECK_EQ_INT(type, UFORM_NVML_NVLINK_DEVICE_TYPE_SWITCH);
        uform_nvmlPciInfo pci;
        memset(&pci, 0, sizeof pci);
        CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(gpu, link, &pci), UFORM_NVML_SUCCESS);
        char expected[32];
        snprintf(expected, sizeof expected, "0000FFFF:%02X:00.0", link % 4);
        CHECK_EQ_STR(pci.busId, expected);
        CHECK_EQ_INT(pci.domain, 0xFFFF);
        CHECK_EQ_INT(pci.bus, link % 4);
    }
    /* The direct pair: links 0-3 reach the other GPU, the rest are disabled. */
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType(direct, 0, &type), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(type, UFORM_NVML_NVLINK_DEVICE_TYPE_GPU);
    type = 77;
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType(direct, 4, &type),
                 UFORM_NVML_ERROR_NOT_SUPPORTED); /* disabled: no far end */
    CHECK_EQ_INT(type, 77);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType(alone, 0, &type),
                 UFORM_NVML_ERROR_NOT_SUPPORTED); /* on no NVLink */
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType(gpu, UFORM_NVML_NVLINK_MAX_LINKS, &type),
                 UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType(gpu, 0, NULL), UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType((uform_nvmlDevice)&type, 0, &type),
                 UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(api.nvmlShutdown(), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemoteDeviceType(gpu, 0, &type), UFORM_NVML_ERROR_UNINITIALIZED);
    dlclose(library);
    return 0; /* a failed check has exited with 1 */
}

/* uform's matrix: 18 within the switched group, 4 within the direct pair, none across. */
static int switched_counts(void) {
    int32_t counts[GPUS * GPUS];
    char why[256] = "x";
    if (uform__nvml_nvlinks(addresses, GPUS, counts, why, sizeof why) != UFORM_STATUS_OK || why[0]) return 1;
    static const int32_t expected[GPUS * GPUS] = {
        0,  18, 18, 18, 0, 0, /* */
        18, 0,  18, 18, 0, 0, /* */
        18, 18, 0,  18, 0, 0, /* */
        18, 18, 18, 0,  0, 0, /* */
        0,  0,  0,  0,  0, 4, /* */
        0,  0,  0,  0,  4, 0,
    };
    return compare(counts, expected);
}

/* The type query failing (a driver that cannot tell): every pair of a GPU with active links is
 * unknown, and the diagonal still 0. */
static int unknown_counts(void) {
    int32_t counts[GPUS * GPUS];
    char why[256] = "x";
    if (uform__nvml_nvlinks(addresses, GPUS, counts, why, sizeof why) != UFORM_STATUS_OK) return 1;
    int32_t expected[GPUS * GPUS];
    for (int k = 0; k < GPUS * GPUS; k++) expected[k] = k / GPUS == k % GPUS ? 0 : -1;
    return compare(counts, expected);
}

/* Two switched groups of two on separate switches: no link across them. */
static int two_fabrics(void) {
    int32_t counts[GPUS * GPUS];
    char why[256] = "x";
    if (uform__nvml_nvlinks(addresses, GPUS, counts, why, sizeof why) != UFORM_STATUS_OK) return 1;
    static const int32_t expected[GPUS * GPUS] = {
        0,  18, 18, 18, 0,  0,  /* */
        18, 0,  18, 18, 0,  0,  /* */
        18, 18, 0,  18, 0,  0,  /* */
        18, 18, 18, 0,  0,  0,  /* */
        0,  0,  0,  0,  0,  18, /* */
        0,  0,  0,  0,  18, 0,
    };
    return compare(counts, expected);
}

static int refused(void) {
    nvml_double_api_t api;
    (void)nvml_double_open(&api);
    return api.nvmlInit_v2() != 999; /* NVML_ERROR_UNKNOWN: the configuration was refused */
}

int main(void) {
    setenv("UFORM_CUDA_DOUBLE_CONFIG",
           "device pci=0000:1b:00.0 nvlink=0; device pci=0000:43:00.0 nvlink=0; device pci=0000:52:00.0 nvlink=0;"
           "device pci=0000:61:00.0 nvlink=0; device pci=0000:9d:00.0 nvlink=1; device pci=0000:c3:00.0 nvlink=1;"
           "device pci=0000:d0:00.0",
           1);
    setenv("UFORM_NVML_LIBRARY", UFORM_TEST_NVML_DOUBLE, 1);
    in_child("nvswitch group=0 switches=4", switched_semantics, "the double's switched links");
    in_child("nvswitch group=0 switches=4", switched_counts, "uform's counts through switches");
    in_child("nvswitch group=0 switches=4; nvswitch group=1 switches=2", two_fabrics, "two switched groups");
    in_child("nvswitch group=0 switches=4; fault remote_type=NVML_ERROR_UNKNOWN", unknown_counts,
             "a failing type query");
    static const char *const refusals[] = {"nvswitch group=0 switches=0",         "nvswitch group=0 switches=19",
                                           "nvswitch group=x switches=4",         "nvswitch switches=4",
                                           "nvswitch group=0 switches=4 ports=2", "fault remote_type=NOPE"};
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) in_child(refusals[i], refused, refusals[i]);
    /* A GPU at a switch's address (domain 0xFFFF, bus 18 x line + switch): no real machine has one. */
    setenv("UFORM_CUDA_DOUBLE_CONFIG", "device pci=0000:1b:00.0 nvlink=0; device pci=ffff:02:00.0 nvlink=0", 1);
    in_child("nvswitch group=0 switches=4", refused, "a GPU at switch 2's address");
    printf("NVML double, NVSwitches: %d checks passed\n", uform_test_checks_);
    return 0;
}
