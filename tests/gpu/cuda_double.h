/* Helpers for tests that run uform against the CUDA driver test double
 * (tests/doubles/cuda_emulated): a host emulation of the driver's ABI, never a real GPU. */
#ifndef UFORM_TEST_CUDA_DOUBLE_H
#define UFORM_TEST_CUDA_DOUBLE_H

#include <stdlib.h>

#include "gpu_test_util.h" /* CHECK_INFO_HOLDS, CHECK_DRIVER_FAILURE_ */
#include "hardware/fixture.h" /* has_token, use_fixture */

/** Points uform at the CUDA driver test double configured by `config` (README.md there).
 *  Call first in main: uform reads both variables once, at its first GPU query. */
static inline void use_cuda_double(const char *config) {
    setenv("UFORM_CUDA_LIBRARY", UFORM_TEST_CUDA_DOUBLE, 1);
    setenv("UFORM_CUDA_DOUBLE_CONFIG", config, 1);
}

/** A driver failure is the process's answer: every listing answers `status`, its message
 *  naming each of the NULL-terminated `names`, and cuda is not available. */
#define CHECK_GPU_FAILURE(status, ...) CHECK_DRIVER_FAILURE_("cuda", status, __VA_ARGS__)

#endif
