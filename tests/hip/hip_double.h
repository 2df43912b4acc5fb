/* Helpers for tests that run uform against the HIP runtime test double
 * (tests/doubles/hip_emulated): a host emulation of libamdhip64.so's ABI, never a real GPU. */
#ifndef UFORM_TEST_HIP_DOUBLE_H
#define UFORM_TEST_HIP_DOUBLE_H

#include <stdlib.h>
#include <string.h>

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
    setenv("UFORM_CUDA_LIBRARY", UFORM_TEST_CUDA_DOUBLE, 1);
    setenv("UFORM_CUDA_DOUBLE_CONFIG", cuda_config, 1);
}

/** The message of the last failure must name `text`. */
#define CHECK_ERROR_NAMES(text)                                                                    \
    do {                                                                                           \
        if (!strstr(uform_last_error(), text))                                                     \
            TEST_FAIL_("last error \"%s\" does not name \"%s\"", uform_last_error(), text);       \
    } while (0)

/** uform_info_write's report in `format` holds `text`. */
#define CHECK_INFO_HOLDS(format, text)                                                             \
    do {                                                                                           \
        static char report_[16384];                                                                \
        size_t length_ = 0;                                                                        \
        CHECK_OK(uform_info_write(format, report_, sizeof report_, &length_));                     \
        if (!strstr(report_, text)) TEST_FAIL_("the report lacks \"%s\":\n%s", text, report_);  \
    } while (0)

/** A runtime failure is the process's answer: every listing answers `status`, its message naming
 *  each of the NULL-terminated `names`, and hip is not available. */
#define CHECK_HIP_FAILURE(status, ...)                                                             \
    do {                                                                                           \
        static const char *const names_[] = {__VA_ARGS__, NULL};                                  \
        for (int attempt_ = 0; attempt_ < 2; attempt_++) {                                        \
            size_t count_ = 7;                                                                     \
            CHECK_STATUS(uform_gpu_devices(NULL, 0, &count_), status);                             \
            for (const char *const *name_ = names_; *name_; name_++) CHECK_ERROR_NAMES(*name_);    \
        }                                                                                          \
        CHECK(!has_token(uform_capabilities_available(), "hip"));                                  \
    } while (0)

#endif
