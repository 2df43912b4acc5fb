/* Tests of the CUDA driver test double itself, calling it directly: it is dlopen'ed and every
 * execution entry point (cuda_abi.h's UFORM_CUDA_EXECUTION_ENTRY_POINTS) resolved through its
 * cuGetProcAddress at the version of that ABI, as a loader would. */
#ifndef UFORM_TEST_CUDA_DOUBLE_DRIVER_H
#define UFORM_TEST_CUDA_DOUBLE_DRIVER_H

#include <dlfcn.h>
#include <pthread.h>

#include "gpu/cuda/cuda_abi.h"
#include "gpu/host_function_gate.h"
#include "test.h"

typedef struct cuda_double_t {
    uform_cuInit_t cuInit;
    uform_cuGetErrorName_t cuGetErrorName;
#define CUDA_DOUBLE_FIELD_(field, base, version, symbol, type) type field;
    UFORM_CUDA_EXECUTION_ENTRY_POINTS(CUDA_DOUBLE_FIELD_)
#undef CUDA_DOUBLE_FIELD_
} cuda_double_t;

#define CHECK_CU(call, expected) CHECK_EQ_INT((call), (expected))

/** Loads the double with `config`, runs cuInit and binds every execution entry point. */
static inline cuda_double_t cuda_double_open(const char *config) {
    setenv("UFORM_CUDA_DOUBLE_CONFIG", config, 1);
    void *library = dlopen(UFORM_TEST_CUDA_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    CHECK(library != NULL);
    cuda_double_t cu;
    cu.cuInit = (uform_cuInit_t)dlsym(library, "cuInit");
    cu.cuGetErrorName = (uform_cuGetErrorName_t)dlsym(library, "cuGetErrorName");
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)dlsym(library, "cuGetProcAddress_v2");
    CHECK(cu.cuInit && cu.cuGetErrorName && get_proc);
    CHECK_CU(cu.cuInit(0), UFORM_CUDA_SUCCESS);
#define CUDA_DOUBLE_BIND_(field, base, version, symbol, type)                                      \
    do {                                                                                           \
        void *pointer_ = NULL;                                                                     \
        uform_cuProcAddressQueryResult found_ = 99;                                                \
        CHECK_CU(get_proc(base, &pointer_, version, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found_),   \
                 UFORM_CUDA_SUCCESS);                                                              \
        CHECK_EQ_INT(found_, UFORM_CU_GET_PROC_ADDRESS_SUCCESS);                                   \
        CHECK(pointer_ == dlsym(library, symbol)); /* the versioned symbol cuda.h binds */         \
        cu.field = (type)pointer_;                                                                 \
    } while (0);
    UFORM_CUDA_EXECUTION_ENTRY_POINTS(CUDA_DOUBLE_BIND_)
#undef CUDA_DOUBLE_BIND_
    return cu;
}

#endif
