/**
 * @file uform/status.h
 * @brief The one status enum of uform, its names and messages from one list, and the
 *        thread-local last-error detail.
 */
#ifndef UFORM_STATUS_H
#define UFORM_STATUS_H

#include "uform/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * X(name, number, message). Numbers are pinned forever: a retired status keeps its number
 * and is never reused. Bindings map each one to an exception class or a Rust `Status`.
 */
#define UFORM_STATUS_MAP(X)                                                                        \
    X(OK, 0, "success")                                                                            \
    X(UNSUPPORTED, 1, "not supported by this build, this machine or this design")                  \
    X(CONTENDED, 2, "another call holds the executor, or its deferred table is full")              \
    X(INVALID_ARGUMENT, 3, "invalid argument")                                                     \
    X(OUT_OF_MEMORY, 4, "out of memory")                                                           \
    X(NOT_FOUND, 5, "no such device, domain or entry")                                             \
    X(DEVICE_FAULT, 6, "the device or its driver failed")                                          \
    X(TIMEOUT, 7, "the wait timed out")                                                            \
    X(MISMATCH, 8, "peers or inputs disagree")                                                     \
    X(IO_ERROR, 9, "input/output error")                                                           \
    X(INTERRUPTED, 10, "interrupted")                                                              \
    X(FORKED, 11, "the object was inherited across fork() and cannot be used in the child")        \
    X(CALLBACK_FAILED, 12, "a callback reported a failure")                                        \
    X(MALFORMED, 13, "malformed hardware description or input text")

/** Every call of the library that can fail answers one of these. */
typedef enum uform_status_t {
#define UFORM_STATUS_ENUM_(name, number, message) UFORM_STATUS_##name = number,
    UFORM_STATUS_MAP(UFORM_STATUS_ENUM_)
#undef UFORM_STATUS_ENUM_
} uform_status_t;

/** One past the highest status number (the numbers run 0, 1, ... without a gap); bindings
 *  size their tables with it. Counted from the list, so a new status moves it. */
#define UFORM_STATUS_ONE_(name, number, message) +1
#define UFORM_STATUS_COUNT_ (0 UFORM_STATUS_MAP(UFORM_STATUS_ONE_))

/**
 * The static, human-readable message of a status ("success", "the wait timed out", ...).
 * Never NULL: an unknown number answers "unknown status". The string is owned by the library.
 */
UFORM_API const char *uform_status_message(uform_status_t status);

/**
 * The status's name without prefix ("OK", "TIMEOUT", ...), or "UNKNOWN". Owned by the library.
 */
UFORM_API const char *uform_status_name(uform_status_t status);

/**
 * The detail of the last failure on the calling thread: which argument, the errno text, the
 * dlerror, the missing CPU feature. Set by every call that answers a status other than OK;
 * left unchanged by calls that succeed. Never NULL (empty when nothing failed yet). The buffer
 * is thread-local and owned by the library; it stays valid until the thread's next failing call,
 * and when the thread ends, through the first pass of its thread-specific data destructors
 * (another library's destructor may still read it there).
 */
UFORM_API const char *uform_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* UFORM_STATUS_H */
