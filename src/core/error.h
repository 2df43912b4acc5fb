/* Internal: setting the thread-local last error. Every failing path goes through here so the
 * status and its detail never disagree. */
#ifndef UFORM_CORE_ERROR_H
#define UFORM_CORE_ERROR_H

#include "core/thread_local.h"
#include "uform/status.h"

#if defined(__GNUC__) || defined(__clang__)
#define UFORM_PRINTF_(a, b) __attribute__((format(printf, a, b)))
#else
#define UFORM_PRINTF_(a, b)
#endif

/** Records "<detail>" as the calling thread's last error and answers `status`. */
uform_status_t uform__fail(uform_status_t status, const char *format, ...) UFORM_PRINTF_(2, 3);

/** As uform__fail, appending ": <strerror(errnum)>". */
uform_status_t uform__fail_errno(uform_status_t status, int errnum, const char *format, ...) UFORM_PRINTF_(3, 4);

/** How many messages the calling thread has recorded so far (wraps): unchanged across a
 *  callback means the callback set none. Read once per share of every call: inline. */
extern UFORM_HOT_THREAD_LOCAL_ unsigned uform__last_error_serial;
static inline unsigned uform__error_serial(void) { return uform__last_error_serial; }

#endif
