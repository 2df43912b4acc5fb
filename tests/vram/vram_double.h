/* Helpers for the VRAM executor's tests against the CUDA driver test double
 * (tests/doubles/cuda_emulated): a host emulation of the driver's ABI, never a real GPU. The
 * test binds the double's entry points too (gpu/cuda_double_driver.h), to enqueue its own work
 * on the executor's streams and to look at device memory from outside uform. */
#ifndef UFORM_TEST_VRAM_DOUBLE_H
#define UFORM_TEST_VRAM_DOUBLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda_double.h"
#include "gpu/cuda_double_driver.h"
#include "test.h"

/** Points uform at the double configured by `config` and binds the double for the test. */
static inline cuda_double_t vram_double_open(const char *config) {
    use_cuda_double(config);
    return cuda_double_open(config);
}

/** A VRAM executor over every device (or the `count` listed), no pins, unbounded scratch. */
static inline uform_executor_t *vram_executor(const int32_t *devices, size_t count, size_t scratch_limit) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(devices, count, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0,
                                     scratch_limit, 0, &executor));
    CHECK(executor != NULL);
    return executor;
}

/** Bytes the double's device `device` has in use, read through its primary context. */
static inline size_t vram_device_used(const cuda_double_t *cu, int device) {
    uform_cuContext context = NULL;
    CHECK_CU(cu->cuDevicePrimaryCtxRetain(&context, device), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu->cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    size_t free_bytes = 0, total = 0;
    CHECK_CU(cu->cuMemGetInfo(&free_bytes, &total), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu->cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu->cuDevicePrimaryCtxRelease(device), UFORM_CUDA_SUCCESS);
    return total - free_bytes;
}

/** A pattern byte for offset `i` of buffer `seed`: a copy that drops or shifts a byte fails. */
/** The calling thread's current context, as the double answers it. */
static inline uform_cuContext vram_current_context(const cuda_double_t *cu) {
    uform_cuContext context = (uform_cuContext)(uintptr_t)1; /* a value the double never answers */
    CHECK_CU(cu->cuCtxGetCurrent(&context), UFORM_CUDA_SUCCESS);
    return context;
}

/* The calling thread's current context must still be `expected` after `what` (the caller's
 * context is the caller's: uform gives it back as it found it). */
#define CHECK_CURRENT_CONTEXT(cu, expected, what)                                                  \
    do {                                                                                           \
        uform_cuContext current_ = vram_current_context(cu), expected_ = (expected);               \
        uform_test_checks_++;                                                                      \
        if (current_ != expected_)                                                                 \
            TEST_FAIL_("after %s the calling thread's current context is %p, expected %p (%s)", what, \
                       (void *)current_, (void *)expected_, expected_ ? "the caller's" : "none");  \
    } while (0)

static inline unsigned char pattern(size_t i, unsigned seed) { return (unsigned char)((i * 2654435761u) >> 13 ^ seed); }

static inline void fill(unsigned char *buffer, size_t bytes, unsigned seed) {
    for (size_t i = 0; i < bytes; i++) buffer[i] = pattern(i, seed);
}

/** The first offset where `buffer` differs from the pattern, or `bytes`. */
static inline size_t first_mismatch(const unsigned char *buffer, size_t bytes, unsigned seed) {
    for (size_t i = 0; i < bytes; i++)
        if (buffer[i] != pattern(i, seed)) return i;
    return bytes;
}

#endif
