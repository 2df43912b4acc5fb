/* The test harness: a handful of CHECK macros that print both sides and the place, and exit
 * non-zero on the first failure. Each test file is its own process (see CMakeLists.txt). */
#ifndef UFORM_TEST_H
#define UFORM_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uform.h"

static _Atomic int uform_test_checks_ = 0; /* atomic: tests check from many threads */

#define TEST_FAIL_(...)                                                                            \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__);                                    \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n  last error: %s\n", uform_last_error());                              \
        exit(1);                                                                                   \
    } while (0)

#define CHECK(condition)                                                                           \
    do {                                                                                           \
        uform_test_checks_++;                                                                      \
        if (!(condition)) TEST_FAIL_("%s", #condition);                                            \
    } while (0)

#define CHECK_EQ_INT(actual, expected)                                                             \
    do {                                                                                           \
        long long a_ = (long long)(actual), e_ = (long long)(expected);                            \
        uform_test_checks_++;                                                                      \
        if (a_ != e_) TEST_FAIL_("%s == %s: got %lld, expected %lld", #actual, #expected, a_, e_); \
    } while (0)

#define CHECK_EQ_STR(actual, expected)                                                             \
    do {                                                                                           \
        const char *a_ = (actual), *e_ = (expected);                                               \
        uform_test_checks_++;                                                                      \
        if (!a_ || !e_ || strcmp(a_, e_) != 0)                                                     \
            TEST_FAIL_("%s == %s: got \"%s\", expected \"%s\"", #actual, #expected, a_ ? a_ : "(null)", \
                       e_ ? e_ : "(null)");                                                        \
    } while (0)

/** Checks a call's status, printing both status names and the last error. */
#define CHECK_STATUS(call, expected)                                                               \
    do {                                                                                           \
        uform_status_t s_ = (call), e_ = (expected);                                               \
        uform_test_checks_++;                                                                      \
        if (s_ != e_)                                                                              \
            TEST_FAIL_("%s: got %s, expected %s", #call, uform_status_name(s_), uform_status_name(e_)); \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, UFORM_STATUS_OK)

/** The message of the last failure must name `text`. */
#define CHECK_ERROR_NAMES(text)                                                                    \
    do {                                                                                           \
        if (!strstr(uform_last_error(), text))                                                     \
            TEST_FAIL_("last error \"%s\" does not name \"%s\"", uform_last_error(), text);       \
    } while (0)

/** Ends main: prints how many checks passed. */
#define TEST_DONE()                                                                                \
    do {                                                                                           \
        printf("%s: %d checks passed\n", __FILE__, (int)uform_test_checks_);                            \
        return 0;                                                                                  \
    } while (0)

#endif
