/* Helpers for the tests of the HIP backend (src/gpu/hip/hip_backend.c) run against the HIP
 * runtime test double, through uform__hip_backend directly. */
#ifndef UFORM_TEST_HIP_BACKEND_H
#define UFORM_TEST_HIP_BACKEND_H

#include <string.h>

#include "gpu/gpu_backend.h"
#include "hip_double.h"

/** The backend, which must load. */
static inline const uform__gpu_backend_t *hip_backend(void) {
    uform_status_t status = UFORM_STATUS_IO_ERROR;
    const uform__gpu_backend_t *backend = uform__hip_backend(&status);
    CHECK_OK(status);
    CHECK(backend != NULL);
    CHECK_EQ_STR(backend->name, "HIP");
    return backend;
}

/** A device record for AMD GPU `vendor_ordinal`, as the executor fills it before open. */
static inline void hip_device_init(uform__gpu_device_t *device, const uform__gpu_backend_t *backend,
                                   int32_t vendor_ordinal) {
    memset(device, 0, sizeof *device);
    device->backend = backend;
    device->vendor = UFORM_GPU_VENDOR_AMD;
    device->vendor_ordinal = vendor_ordinal;
    device->ordinal = vendor_ordinal;
}

/** The same record, opened. */
static inline void hip_device_open(uform__gpu_device_t *device, const uform__gpu_backend_t *backend,
                                   int32_t vendor_ordinal) {
    hip_device_init(device, backend, vendor_ordinal);
    CHECK_OK(backend->open(device));
}

#endif
