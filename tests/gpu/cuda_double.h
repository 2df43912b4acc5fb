/* Helpers for tests that run uform against the CUDA driver test double
 * (tests/doubles/cuda_emulated): a host emulation of the driver's ABI, never a real GPU. */
#ifndef UFORM_TEST_CUDA_DOUBLE_H
#define UFORM_TEST_CUDA_DOUBLE_H

#include <stdlib.h>

#include "hardware/fixture.h" /* has_token, use_fixture */

/** Points uform at the CUDA driver test double configured by `config` (README.md there).
 *  Call first in main: uform reads both variables once, at its first GPU query. */
static inline void use_cuda_double(const char *config) {
    setenv("UFORM_CUDA_LIBRARY", UFORM_TEST_CUDA_DOUBLE, 1);
    setenv("UFORM_CUDA_DOUBLE_CONFIG", config, 1);
}

/** The message of the last failure must name `text`. */
#define CHECK_ERROR_NAMES(text)                                                                    \
    do {                                                                                           \
        if (!strstr(uform_last_error(), text))                                                     \
            TEST_FAIL_("last error \"%s\" does not name \"%s\"", uform_last_error(), text);       \
    } while (0)

#endif
