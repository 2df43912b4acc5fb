/* Status names and messages, generated from the one UFORM_STATUS_MAP list so they can't drift. */
#include "uform/status.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* 512 bytes holds a path, a driver's error name and an errno text together. The text lives on
 * the heap, one buffer for each thread that ever failed, freed when that thread ends: as a
 * thread-local array it was 512 of the library's 584 bytes of TLS, which a libuform loaded by
 * dlopen takes from glibc's small reserve (core/thread_local.h). */
enum { LAST_ERROR_BYTES = 512 };
static _Thread_local char *last_error_buffer;      /* NULL until this thread's first message */
static _Thread_local const char *last_error_shown; /* what uform_last_error answers; NULL: "" */
static pthread_key_t last_error_key;               /* only for its destructor */
static bool last_error_key_made;
static pthread_once_t last_error_once = PTHREAD_ONCE_INIT;
/* Bumped with every message, so a caller can tell whether one was set since it looked. */
UFORM_HOT_THREAD_LOCAL_ unsigned uform__last_error_serial;

static _Thread_local bool last_error_release_deferred;

/* At the thread's end. POSIX leaves the order of keys' destructors open, and another library's
 * may read a message this thread got before (uform_last_error's text stays valid until the
 * thread's next failing call, and ending is not one). So the first pass only sets the key again,
 * which makes POSIX run every destructor once more, and the buffer is freed in the second pass,
 * after every other key's first. The price: POSIX runs at most PTHREAD_DESTRUCTOR_ITERATIONS
 * passes (4 in glibc and musl), so a thread whose first failure comes from another library's
 * destructor in its third pass or later leaks its 512 bytes (freed when it came in the second,
 * which test_thread_local_block checks). */
static void last_error_release(void *buffer) {
    if (!last_error_release_deferred && pthread_setspecific(last_error_key, buffer) == 0) {
        last_error_release_deferred = true;
        return;
    }
    free(buffer);
    /* A destructor of a later pass may still fail into ours: that allocates again, and the key's
     * next pass frees it at once (the flag stays set). */
    last_error_buffer = NULL;
    last_error_shown = NULL;
}
static void last_error_key_create(void) {
    last_error_key_made = pthread_key_create(&last_error_key, last_error_release) == 0;
}

/** This thread's buffer for a message; NULL when there is no memory for one (the message is then
 *  lost, and uform_last_error says so). */
static char *message_buffer(void) {
    if (!last_error_buffer) {
        last_error_buffer = malloc(LAST_ERROR_BYTES);
        if (!last_error_buffer) {
            last_error_shown = "a message was lost: no memory to record it";
            return NULL;
        }
        last_error_buffer[0] = 0;
        pthread_once(&last_error_once, last_error_key_create);
        /* Without the key the buffer outlives its thread: a leak of 512 bytes, not an error. */
        if (last_error_key_made) pthread_setspecific(last_error_key, last_error_buffer);
    }
    last_error_shown = last_error_buffer;
    return last_error_buffer;
}

const char *uform_last_error(void) { return last_error_shown ? last_error_shown : ""; }

uform_status_t uform__fail(uform_status_t status, const char *format, ...) {
    char *buffer = message_buffer();
    if (buffer) {
        va_list args;
        va_start(args, format);
        vsnprintf(buffer, LAST_ERROR_BYTES, format, args);
        va_end(args);
    }
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
    char *buffer = message_buffer();
    if (buffer) snprintf(buffer, LAST_ERROR_BYTES, "%s: %s", detail, text);
    uform__last_error_serial++;
    return status;
}
