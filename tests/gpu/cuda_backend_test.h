/* Helpers for the tests of the CUDA backend (src/gpu/cuda/cuda_backend.c) through
 * uform__cuda_backend directly, as tests/hip/hip_backend_test.h does for HIP. */
#ifndef UFORM_TEST_CUDA_BACKEND_H
#define UFORM_TEST_CUDA_BACKEND_H

#include <string.h>

#include "gpu/gpu_backend.h"
#include "test.h"

/** The backend, which must load. */
static inline const uform__gpu_backend_t *cuda_backend(void) {
    uform_status_t status = UFORM_STATUS_IO_ERROR;
    const uform__gpu_backend_t *backend = uform__cuda_backend(&status);
    CHECK_OK(status);
    CHECK(backend != NULL);
    return backend;
}

/** A device record for NVIDIA GPU `vendor_ordinal`, as the executor fills it, opened. */
static inline void cuda_device_open(uform__gpu_device_t *device, const uform__gpu_backend_t *backend,
                                    int32_t vendor_ordinal) {
    memset(device, 0, sizeof *device);
    device->backend = backend;
    device->vendor = UFORM_GPU_VENDOR_NVIDIA;
    device->vendor_ordinal = vendor_ordinal;
    device->ordinal = vendor_ordinal;
    CHECK_OK(backend->open(device));
}

#endif
