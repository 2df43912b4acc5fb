/* Helpers for the multicast probe's tests against the CUDA driver test double
 * (tests/doubles/cuda_emulated): a host emulation of the driver's ABI, never a real GPU. */
#ifndef UFORM_TEST_MESH_MULTICAST_DOUBLE_H
#define UFORM_TEST_MESH_MULTICAST_DOUBLE_H

#include "mesh/mesh_internal.h"
#include "mesh/multicast_double.h"
#include "vram/vram_double.h"

/** The probe's reason must name `text`. */
#define CHECK_WHY_NAMES(why, text)                                                                 \
    do {                                                                                           \
        if (!strstr((why), (text))) TEST_FAIL_("the probe's reason \"%s\" does not name \"%s\"", (why), (text)); \
    } while (0)

/** Device memory in use on each of the double's first `count` devices, summed. */
static inline size_t used_on_devices(const cuda_double_t *cu, int count) {
    size_t sum = 0;
    for (int device = 0; device < count; device++) sum += vram_device_used(cu, device);
    return sum;
}

/** Runs the probe over `executor` and checks its answer, that it leaves nothing allocated on
 *  the double's first `devices` devices, and that it keeps the caller's last error and current
 *  context. `why` receives the reason. */
static inline bool probe_leaves_nothing(const cuda_double_t *cu, int devices, uform_executor_t *executor, char *why,
                                        size_t capacity) {
    size_t before = used_on_devices(cu, devices);
    uform_cuContext context_before = (uform_cuContext)0, context_after = (uform_cuContext)1;
    CHECK_CU(cu->cuCtxGetCurrent(&context_before), UFORM_CUDA_SUCCESS);
    char error_before[512];
    snprintf(error_before, sizeof error_before, "%s", uform_last_error());
    memset(why, 'x', capacity);
    bool answer = uform__mesh_multicast_probe(executor, why, capacity);
    CHECK(memchr(why, '\0', capacity) != NULL);
    CHECK_EQ_STR(uform_last_error(), error_before);
    CHECK_CU(cu->cuCtxGetCurrent(&context_after), UFORM_CUDA_SUCCESS);
    CHECK(context_after == context_before);
    CHECK_EQ_INT(used_on_devices(cu, devices), before);
    CHECK_EQ_INT(before, 0);
    if (answer) CHECK_EQ_STR(why, "");
    else CHECK(why[0] != '\0');
    return answer;
}

#endif
