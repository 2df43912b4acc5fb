/* Internal: what both backends (cuda/cuda_backend.c, hip/hip_backend.c) share to meet
 * gpu_backend.h the same way: the statuses a runtime error maps to (with the sticky-fault mark),
 * and the scope that makes a device current on the calling thread for one operation and gives
 * the thread back what it had. Each backend adds one call-and-check macro over these
 * (CU_CALL_, HIP_CALL_), as IREE's cuda_status_util.h does for its driver. */
#ifndef UFORM_GPU_GPU_CALL_H
#define UFORM_GPU_GPU_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "gpu/gpu_backend.h"

/** A runtime error as gpu_backend.h sorts it. */
typedef enum uform__gpu_error_t {
    UFORM__GPU_ERROR_OTHER,         /**< DEVICE_FAULT */
    UFORM__GPU_ERROR_OUT_OF_MEMORY, /**< OUT_OF_MEMORY */
    UFORM__GPU_ERROR_INVALID,       /**< INVALID_ARGUMENT: the runtime refused an argument */
    UFORM__GPU_ERROR_STICKY,        /**< DEVICE_FAULT, and the device is marked faulted */
} uform__gpu_error_t;

/**
 * The status for a failed runtime call, with "<what> on GPU <ordinal> (<backend> device
 * <native>) answered <error_name>" as the last error; a STICKY error also sets
 * `device->faulted`, which the executor makes sticky for the whole executor.
 */
UFORM_PRINTF_(4, 5)
uform_status_t uform__gpu_fail(uform__gpu_device_t *device, uform__gpu_error_t kind, const char *error_name,
                               const char *what, ...);

/** Writes a reason into `why` (`capacity` bytes; nothing when `why` is NULL or `capacity` 0): the
 *  answers that are no status (the multicast probe's "no, because ..."). */
UFORM_PRINTF_(3, 4) void uform__gpu_explain(char *why, size_t capacity, const char *format, ...);

/** INVALID_ARGUMENT for an allocation of 0 bytes, which neither runtime hands out as memory
 *  (CUDA answers CUDA_ERROR_INVALID_VALUE, HIP hipSuccess with NULL); OK otherwise. */
uform_status_t uform__gpu_refuse_empty(const uform__gpu_device_t *device, size_t bytes, const char *kind);

/** INVALID_ARGUMENT unless `which` names one of the device's events (below UFORM_STAGING_BUFFERS). */
uform_status_t uform__gpu_check_event(const uform__gpu_device_t *device, size_t which);

/** True when [host, host + bytes) is pinned as far as `pinned_at` (the runtime's answer for one
 *  address) tells: neither runtime answers for a host range, so both ends are asked. Two pinned
 *  ranges side by side read as one, which only costs a direct DMA where a staged copy would also
 *  have worked. False for NULL; one address for 0 bytes. */
bool uform__gpu_range_pinned(const void *host, size_t bytes, bool (*pinned_at)(const void *address));

/** The calling thread's current slot as a backend reads and sets it: the CUDA context (a
 *  CUcontext as an integer) or the HIP device id. `get` and `set` answer the runtime's error code,
 *  0 for success; `check` turns a non-zero one into the backend's status. */
typedef struct uform__gpu_current_t {
    const char *get_name, *set_name; /**< "cuCtxGetCurrent", "cuCtxSetCurrent": for messages */
    unsigned (*get)(intptr_t *current);
    unsigned (*set)(intptr_t current);
    intptr_t (*of)(const uform__gpu_device_t *device); /**< the value that makes `device` current */
    uform_status_t (*check)(uform__gpu_device_t *device, unsigned result, const char *what);
} uform__gpu_current_t;

/** Makes the device current on the calling thread for one operation, remembering the thread's own
 *  (a caller's CUDA or HIP runtime keeps its device there); nothing to do when it already is. */
uform_status_t uform__gpu_enter(const uform__gpu_current_t *current, uform__gpu_device_t *device,
                                uform__gpu_scope_t *scope);

/** As uform__gpu_enter, for the paths that go on whatever the runtime answers (free, close): no
 *  message; where the thread's own cannot be read, the device is made current anyway (nothing
 *  known to restore). True when the device is current. */
bool uform__gpu_enter_quietly(const uform__gpu_current_t *current, uform__gpu_device_t *device,
                              uform__gpu_scope_t *scope);

/** Gives the thread back what enter found. Its error, if any, is not the operation's: what is
 *  restored is the caller's, and may be something uform never saw. */
void uform__gpu_leave(const uform__gpu_current_t *current, const uform__gpu_scope_t *scope);

/** One runtime call with the device current: enter, `call`, check (as `what`), leave; the status
 *  goes to `status` (an uform_status_t lvalue). `call` runs only when enter succeeded. */
#define UFORM__GPU_SCOPED_CALL(status, current, device, call, what)          \
    do {                                                                     \
        uform__gpu_scope_t scope_;                                           \
        (status) = uform__gpu_enter((current), (device), &scope_);           \
        if ((status) == UFORM_STATUS_OK) {                                   \
            (status) = (current)->check((device), (unsigned)(call), (what)); \
            uform__gpu_leave((current), &scope_);                            \
        }                                                                    \
    } while (0)

/** The same for the paths that go on whatever the runtime answers (free, close): quiet enter,
 *  `call`'s answer ignored. */
#define UFORM__GPU_QUIET_CALL(current, device, call)            \
    do {                                                        \
        uform__gpu_scope_t scope_;                              \
        uform__gpu_enter_quietly((current), (device), &scope_); \
        (void)(call);                                           \
        uform__gpu_leave((current), &scope_);                   \
    } while (0)

#endif
