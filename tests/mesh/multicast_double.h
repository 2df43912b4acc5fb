/* The multicast entry points of the CUDA driver test double (tests/doubles/cuda_emulated),
 * bound directly for tests: cuda_abi.h's UFORM_CUDA_MULTICAST_ENTRY_POINTS, each resolved
 * through the double's cuGetProcAddress at the version of its ABI, as uform's loader does.
 * Used by tests/gpu/test_cuda_double_multicast*.c and tests/mesh/. */
#ifndef UFORM_TEST_MULTICAST_DOUBLE_H
#define UFORM_TEST_MULTICAST_DOUBLE_H

#include <dlfcn.h>

#include "gpu/cuda/cuda_abi.h"
#include "test.h"

typedef struct multicast_double_t {
    uform_cuDeviceGetAttribute_t cuDeviceGetAttribute;
#define MULTICAST_DOUBLE_FIELD_(field, base, version, symbol, type) type field;
    UFORM_CUDA_MULTICAST_ENTRY_POINTS(MULTICAST_DOUBLE_FIELD_)
#undef MULTICAST_DOUBLE_FIELD_
} multicast_double_t;

/** Binds the multicast entry points of the double already configured and initialised in this
 *  process (cuda_double_open or uform itself loaded it: dlopen finds the same library). */
static inline multicast_double_t multicast_double_bind(void) {
    void *library = dlopen(UFORM_TEST_CUDA_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    if (!library) TEST_FAIL_("dlopen %s: %s", UFORM_TEST_CUDA_DOUBLE, dlerror());
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)dlsym(library, "cuGetProcAddress_v2");
    CHECK(get_proc != NULL);
    multicast_double_t mc;
    mc.cuDeviceGetAttribute = (uform_cuDeviceGetAttribute_t)dlsym(library, "cuDeviceGetAttribute");
    CHECK(mc.cuDeviceGetAttribute != NULL);
#define MULTICAST_DOUBLE_BIND_(field, base, version, symbol, type)                                 \
    do {                                                                                           \
        void *pointer_ = NULL;                                                                     \
        uform_cuProcAddressQueryResult found_ = 99;                                                \
        CHECK_EQ_INT(get_proc(base, &pointer_, version, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found_), \
                     UFORM_CUDA_SUCCESS);                                                          \
        CHECK_EQ_INT(found_, UFORM_CU_GET_PROC_ADDRESS_SUCCESS);                                   \
        CHECK(pointer_ == dlsym(library, symbol));                                                 \
        mc.field = (type)pointer_;                                                                 \
    } while (0);
    UFORM_CUDA_MULTICAST_ENTRY_POINTS(MULTICAST_DOUBLE_BIND_)
#undef MULTICAST_DOUBLE_BIND_
    return mc;
}

#define MIB(n) ((size_t)(n) << 20)

/** A multicast object's properties: `devices` in the team, `bytes` per device. */
static inline uform_cuMulticastObjectProp multicast_prop(unsigned devices, size_t bytes) {
    uform_cuMulticastObjectProp prop = {.numDevices = devices, .size = bytes};
    return prop;
}

/** cuMemCreate's properties for pinned memory on device `ordinal`. */
static inline uform_cuMemAllocationProp device_memory_prop(int ordinal) {
    uform_cuMemAllocationProp prop = {.type = UFORM_CU_MEM_ALLOCATION_TYPE_PINNED,
                                      .location = {.type = UFORM_CU_MEM_LOCATION_TYPE_DEVICE, .id = ordinal}};
    return prop;
}

#endif
