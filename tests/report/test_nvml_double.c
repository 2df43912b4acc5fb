/* The NVML double by nvml.h's documented semantics, and uform__nvml_nvlinks over it. The
 * double's GPUs are the CUDA double's configuration: here three in one `nvlink=` group (each
 * pair joined by min(4, 18 / 2) = 4 links, dealt in configuration order, the other 10 links of
 * each disabled) and one on no NVLink. Before nvmlInit_v2 every call is UNINITIALIZED; a bad
 * link index or handle is INVALID_ARGUMENT; an unknown bus id NOT_FOUND; a GPU without NVLink
 * NOT_SUPPORTED. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/nvml/nvml_loader.h"
#include "nvml_double_api.h"

/* In a child (the double reads its configuration once per process): `config` as
 * UFORM_NVML_DOUBLE_CONFIG makes nvmlInit_v2 answer `expected`. */
static void init_answers(const char *config, uform_nvmlReturn expected) {
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        setenv("UFORM_NVML_DOUBLE_CONFIG", config, 1);
        nvml_double_api_t api;
        (void)nvml_double_open(&api);
        _exit(api.nvmlInit_v2() == expected ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) TEST_FAIL_("'%s': nvmlInit_v2 did not answer %u", config, expected);
}

int main(void) {
    setenv("UFORM_CUDA_DOUBLE_CONFIG",
           "device pci=0000:1b:00.0 nvlink=0; device pci=0000:43:00.0 nvlink=0; device pci=0000:52:00.0 nvlink=0;"
           "device pci=0000:61:00.0",
           1);
    setenv("UFORM_NVML_LIBRARY", UFORM_TEST_NVML_DOUBLE, 1);
    /* Its own faults: an init error by name or number; anything else refuses the configuration. */
    init_answers("fault init=NVML_ERROR_DRIVER_NOT_LOADED", UFORM_NVML_ERROR_DRIVER_NOT_LOADED);
    init_answers("fault init=12", 12);
    init_answers("fault init=NVML_ERROR_NOPE", 999);
    init_answers("fault shutdown=1", 999);
    init_answers("links per_peer=2", 999);
    unsetenv("UFORM_NVML_DOUBLE_CONFIG");
    nvml_double_api_t api;
    void *library = nvml_double_open(&api);
    /* Only the entry points are exported: the parser the double shares with the CUDA one is not. */
    CHECK(dlsym(library, "emulated_config_parse") == NULL);

    /* Before nvmlInit_v2. */
    uform_nvmlDevice gpu = NULL;
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1b:00.0", &gpu), UFORM_NVML_ERROR_UNINITIALIZED);
    CHECK_EQ_INT(api.nvmlShutdown(), UFORM_NVML_ERROR_UNINITIALIZED);
    CHECK_EQ_STR(api.nvmlErrorString(UFORM_NVML_ERROR_NOT_FOUND), "Not Found"); /* works uninitialised */

    CHECK_EQ_INT(api.nvmlInit_v2(), UFORM_NVML_SUCCESS);
    /* nvml.h's three spellings of a bus id, all hexadecimal, either case. */
    uform_nvmlDevice gpus[4] = {NULL};
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1b:00.0", &gpus[0]), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("00000000:43:00.0", &gpus[1]), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0:52:0", &gpus[2]), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("61:00.0", &gpus[3]), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1B:00.0", &gpu), UFORM_NVML_SUCCESS);
    CHECK(gpu == gpus[0]);
    CHECK(gpus[0] != gpus[1] && gpus[1] != gpus[2] && gpus[2] != gpus[3] && gpus[3] != NULL);
    gpu = NULL;
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:99:00.0", &gpu), UFORM_NVML_ERROR_NOT_FOUND);
    CHECK(gpu == NULL);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2(NULL, &gpu), UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1b:00.0", NULL), UFORM_NVML_ERROR_INVALID_ARGUMENT);

    /* GPU 0's links: 0-3 reach GPU 1, 4-7 GPU 2, 8-17 are disabled. */
    static const char *const far_ends[] = {"00000000:43:00.0", "00000000:52:00.0"};
    for (unsigned link = 0; link < UFORM_NVML_NVLINK_MAX_LINKS; link++) {
        uform_nvmlEnableState state = 77;
        CHECK_EQ_INT(api.nvmlDeviceGetNvLinkState(gpus[0], link, &state), UFORM_NVML_SUCCESS);
        uform_nvmlPciInfo pci;
        memset(&pci, 0, sizeof pci);
        if (link < 8) {
            CHECK_EQ_INT(state, UFORM_NVML_FEATURE_ENABLED);
            CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(gpus[0], link, &pci), UFORM_NVML_SUCCESS);
            CHECK_EQ_STR(pci.busId, far_ends[link / 4]);
            CHECK_EQ_INT(pci.bus, link < 4 ? 0x43 : 0x52);
            CHECK_EQ_INT(pci.domain, 0);
        } else {
            CHECK_EQ_INT(state, UFORM_NVML_FEATURE_DISABLED);
            CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(gpus[0], link, &pci), UFORM_NVML_ERROR_NOT_SUPPORTED);
        }
    }
    /* GPU 1's first links reach GPU 0 (the configuration's first other member). */
    uform_nvmlPciInfo pci;
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(gpus[1], 0, &pci), UFORM_NVML_SUCCESS);
    CHECK_EQ_STR(pci.busId, "00000000:1B:00.0");
    uform_nvmlEnableState state = 77;
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkState(gpus[0], UFORM_NVML_NVLINK_MAX_LINKS, &state),
                 UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(gpus[0], UFORM_NVML_NVLINK_MAX_LINKS, &pci),
                 UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkState(gpus[0], 0, NULL), UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkState((uform_nvmlDevice)&state, 0, &state), UFORM_NVML_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(state, 77);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkState(gpus[3], 0, &state), UFORM_NVML_ERROR_NOT_SUPPORTED); /* on no NVLink */

    /* Initialisation counts: one shutdown per init, then uninitialised again. */
    CHECK_EQ_INT(api.nvmlInit_v2(), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlShutdown(), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1b:00.0", &gpu), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlShutdown(), UFORM_NVML_SUCCESS);
    CHECK_EQ_INT(api.nvmlDeviceGetHandleByPciBusId_v2("0000:1b:00.0", &gpu), UFORM_NVML_ERROR_UNINITIALIZED);
    CHECK_EQ_INT(api.nvmlDeviceGetNvLinkState(gpus[0], 0, &state), UFORM_NVML_ERROR_UNINITIALIZED);

    /* uform's count over it: 4 links each way within the group, none to the GPU without NVLink
     * (whose own row is 0s: NVML knows it), and a GPU NVML does not know (0000:99) unknown in
     * its row; NVML is left uninitialised. */
    const char *addresses[] = {"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0", "0000:99:00.0"};
    int32_t counts[25];
    char why[256] = "x";
    CHECK_EQ_INT(uform__nvml_nvlinks(addresses, 5, counts, why, sizeof why), UFORM_STATUS_OK);
    CHECK_EQ_STR(why, "");
    static const int32_t expected[25] = {0, 4, 4, 0, 0, 4, 0, 4,  0,  0,  4,  4, 0,
                                         0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, -1};
    for (int k = 0; k < 25; k++)
        if (counts[k] != expected[k])
            TEST_FAIL_("nvlinks[%d][%d] = %d, expected %d", k / 5, k % 5, counts[k], expected[k]);
    CHECK_EQ_INT(api.nvmlShutdown(), UFORM_NVML_ERROR_UNINITIALIZED);
    dlclose(library);
    printf("NVML double: %d checks passed\n", uform_test_checks_);
    return 0;
}
