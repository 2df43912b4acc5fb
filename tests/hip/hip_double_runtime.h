/* Tests of the HIP runtime test double itself, calling it directly: it is dlopen'ed and every
 * entry point uform binds (hip_abi.h's UFORM_HIP_ENTRY_POINTS and
 * UFORM_HIP_EXECUTION_ENTRY_POINTS) resolved by name, as the loader does, with the two more that
 * only the tests call. */
#ifndef UFORM_TEST_HIP_DOUBLE_RUNTIME_H
#define UFORM_TEST_HIP_DOUBLE_RUNTIME_H

#include <dlfcn.h>

#include "gpu/hip/hip_abi.h"
#include "gpu/host_function_gate.h"
#include "hip_double.h"

typedef uform_hipError (*launch_host_func_t)(uform_hipStream, uform_hipHostFn, void *);
typedef uform_hipError (*mem_get_info_t)(size_t *, size_t *);

typedef struct hip_double_t {
    void *library; /* the dlopen handle, for a test's own dlsym */
#define HIP_DOUBLE_FIELD_(field, symbol, type) type field;
    UFORM_HIP_ENTRY_POINTS(HIP_DOUBLE_FIELD_)
    UFORM_HIP_EXECUTION_ENTRY_POINTS(HIP_DOUBLE_FIELD_)
#undef HIP_DOUBLE_FIELD_
    launch_host_func_t hipLaunchHostFunc;
    mem_get_info_t hipMemGetInfo;
} hip_double_t;

#define CHECK_HIP(call, expected) CHECK_EQ_INT((call), (expected))

/** Points uform at the double with `config` (use_hip_double), loads it and binds every entry
 *  point, each of which must be there. */
static inline hip_double_t hip_double_open(const char *config) {
    use_hip_double(config);
    hip_double_t hip;
    hip.library = dlopen(UFORM_TEST_HIP_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    CHECK(hip.library != NULL);
#define HIP_DOUBLE_BIND_(field, symbol, type) CHECK((hip.field = (type)dlsym(hip.library, symbol)) != NULL);
    UFORM_HIP_ENTRY_POINTS(HIP_DOUBLE_BIND_)
    UFORM_HIP_EXECUTION_ENTRY_POINTS(HIP_DOUBLE_BIND_)
    HIP_DOUBLE_BIND_(hipLaunchHostFunc, "hipLaunchHostFunc", launch_host_func_t)
    HIP_DOUBLE_BIND_(hipMemGetInfo, "hipMemGetInfo", mem_get_info_t)
#undef HIP_DOUBLE_BIND_
    return hip;
}

#endif
