/* Status names and messages, generated from the one UFORM_STATUS_MAP list so they can't drift. */
#include "uform/status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

/* The count is the list's length; with every number below it and no two alike (the switches
 * below refuse a repeated case), the numbers are exactly 0 .. count - 1. */
enum { STATUS_COUNT = UFORM_STATUS_COUNT_ }; /* a constant: the list cannot expand inside itself */
#define UFORM_STATUS_BELOW_COUNT_(name, number, message)                                          \
    _Static_assert(number >= 0 && number < STATUS_COUNT, "status " #name " is past UFORM_STATUS_COUNT_");
UFORM_STATUS_MAP(UFORM_STATUS_BELOW_COUNT_)
#undef UFORM_STATUS_BELOW_COUNT_

const char *uform_status_message(uform_status_t status) {
    switch (status) {
#define UFORM_STATUS_CASE_(name, number, message)                                                  \
    case UFORM_STATUS_##name: return message;
        UFORM_STATUS_MAP(UFORM_STATUS_CASE_)
#undef UFORM_STATUS_CASE_
    }
    return "unknown status";
}

const char *uform_status_name(uform_status_t status) {
    switch (status) {
#define UFORM_STATUS_CASE_(name, number, message)                                                  \
    case UFORM_STATUS_##name: return #name;
        UFORM_STATUS_MAP(UFORM_STATUS_CASE_)
#undef UFORM_STATUS_CASE_
    }
    return "UNKNOWN";
}

/* 512 bytes holds a path, a driver's error name and an errno text together. */
static _Thread_local char last_error[512];
/* Bumped with every message, so a caller can tell whether one was set since it looked. */
_Thread_local unsigned uform__last_error_serial;

const char *uform_last_error(void) { return last_error; }


uform_status_t uform__fail(uform_status_t status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    uform__last_error_serial++;
    return status;
}

uform_status_t uform__fail_errno(uform_status_t status, int errnum, const char *format, ...) {
    char detail[384];
    va_list args;
    va_start(args, format);
    vsnprintf(detail, sizeof detail, format, args);
    va_end(args);
    char reason[96];
    /* The XSI strerror_r fills `reason`; the GNU one may return a static string instead. */
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    const char *text = strerror_r(errnum, reason, sizeof reason);
#else
    const char *text = strerror_r(errnum, reason, sizeof reason) == 0 ? reason : "unknown error";
#endif
    snprintf(last_error, sizeof last_error, "%s: %s", detail, text);
    uform__last_error_serial++;
    return status;
}
