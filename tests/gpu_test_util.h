/* Checks shared by the tests that run uform against a GPU driver's test double (gpu/cuda_double.h,
 * hip/hip_double.h): what uform reports, and a driver failure seen through every listing. */
#ifndef UFORM_TEST_GPU_TEST_UTIL_H
#define UFORM_TEST_GPU_TEST_UTIL_H

#include <stddef.h>
#include <string.h>

#include "hardware/fixture.h" /* has_token */
#include "test.h"

/** uform_info_write's report in `format` holds `text`. */
#define CHECK_INFO_HOLDS(format, text)                                                             \
    do {                                                                                           \
        static char report_[16384];                                                                \
        size_t length_ = 0;                                                                        \
        CHECK_OK(uform_info_write(format, report_, sizeof report_, &length_));                     \
        if (!strstr(report_, text)) TEST_FAIL_("the report lacks \"%s\":\n%s", text, report_);  \
    } while (0)

/** A driver failure is the process's answer: every listing answers `status`, its message naming
 *  each of the NULL-terminated `names`, and the `capability` ("cuda", "hip") is not available. */
#define CHECK_DRIVER_FAILURE_(capability, status, ...)                                             \
    do {                                                                                           \
        static const char *const names_[] = {__VA_ARGS__, NULL};                                  \
        for (int attempt_ = 0; attempt_ < 2; attempt_++) {                                        \
            size_t count_ = 7;                                                                     \
            CHECK_STATUS(uform_gpu_devices(NULL, 0, &count_), status);                             \
            for (const char *const *name_ = names_; *name_; name_++) CHECK_ERROR_NAMES(*name_);    \
        }                                                                                          \
        CHECK(!has_token(uform_capabilities_available(), capability));                             \
    } while (0)

#endif
