/* Helpers for tests that run uform against the HIP runtime test double
 * (tests/doubles/hip_emulated): a host emulation of libamdhip64.so's ABI, never a real GPU. */
#ifndef UFORM_TEST_HIP_DOUBLE_H
#define UFORM_TEST_HIP_DOUBLE_H

#include <stdlib.h>
#include <string.h>

#include "gpu/cuda_double.h" /* use_cuda_double */
#include "gpu_test_util.h" /* CHECK_INFO_HOLDS, CHECK_DRIVER_FAILURE_ */
#include "hardware/fixture.h" /* has_token */

/** Points uform at the HIP runtime test double configured by `config` (README.md there), and at
 *  no CUDA driver, so the machine's own drivers never leak in. Call first in main: uform reads
 *  the variables once, at its first GPU query. */
static inline void use_hip_double(const char *config) {
    setenv("UFORM_HIP_LIBRARY", UFORM_TEST_HIP_DOUBLE, 1);
    setenv("UFORM_HIP_DOUBLE_CONFIG", config, 1);
    setenv("UFORM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
}

/** Both doubles: NVIDIA devices from the CUDA driver test double, AMD from the HIP one. */
static inline void use_cuda_and_hip_doubles(const char *cuda_config, const char *hip_config) {
    use_hip_double(hip_config);
    use_cuda_double(cuda_config);
}

/** A runtime failure is the process's answer: every listing answers `status`, its message naming
 *  each of the NULL-terminated `names`, and hip is not available. */
#define CHECK_HIP_FAILURE(status, ...) CHECK_DRIVER_FAILURE_("hip", status, __VA_ARGS__)

#endif
