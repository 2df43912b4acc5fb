/* The CUDA driver test double's shared state (internal to the double): the configuration and
 * the driver's ordinals, whether cuInit succeeded, the primary contexts and each thread's
 * current one, device memory accounting, the checks every entry point starts with, and what
 * one concern's file offers another. Nothing here is exported: the build hides every symbol
 * but the entry points (emulated_entry_points.h).
 *
 * The double is a test double of the CUDA driver's ABI (libcuda.so.1), emulated on the host:
 * the entry points uform binds, with the driver's documented semantics (NOT_INITIALIZED before
 * cuInit, INVALID_DEVICE for a bad ordinal, INVALID_VALUE for NULL outputs, cuGetProcAddress by
 * version and flags), over the devices and faults UFORM_CUDA_DOUBLE_CONFIG describes. Tests
 * load it through UFORM_CUDA_LIBRARY. It never stands in for a real GPU check.
 *
 * Built twice: as is, a CUDA 12+ driver; with EMULATED_LEGACY_DRIVER, a driver older than 12.0
 * that exports no cuGetProcAddress_v2 (so loaders must fall back to dlsym). */
#ifndef UFORM_CUDA_EMULATED_STATE_H
#define UFORM_CUDA_EMULATED_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "emulated_config.h"
#include "gpu/cuda/cuda_abi.h"

/* ---- The configured machine (emulated_state.c) ---- */

extern emulated_config_t config; /* loaded once, by configuration() */
extern atomic_int initialized;   /* cuInit succeeded */
/* The driver's ordinals: the configuration's order (FASTEST_FIRST), or PCI order when
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, as the real driver reads that variable at cuInit. */
extern size_t order[EMULATED_MAX_DEVICES];

/* The configuration, loaded from UFORM_CUDA_DOUBLE_CONFIG on first use. */
const emulated_config_t *configuration(void);

/* The device behind a handle, or NULL (INVALID_DEVICE). */
const emulated_device_t *device_of(uform_cuDevice handle);

/* Every device query starts here: NOT_INITIALIZED before a successful cuInit. */
#define REQUIRE_INITIALIZED()                                                                      \
    do {                                                                                           \
        if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;                  \
    } while (0)

/* A query of one device checks in the driver's order: initialised, somewhere to write the
 * answer, then the device. */
uform_cuResult open_query(uform_cuDevice handle, int has_output, const emulated_device_t **device);

/* Declares `device` for the query's body, or returns what open_query answered. */
#define OPEN_QUERY(handle, has_output)                                                             \
    const emulated_device_t *device = NULL;                                                        \
    do {                                                                                           \
        uform_cuResult result_ = open_query(handle, has_output, &device);                          \
        if (result_ != UFORM_CUDA_SUCCESS) return result_;                                         \
    } while (0)

/* ---- Primary contexts (README.md, "Execution") ---- */

/* One primary context per device. Its handle is the address of its slot; the handle stays the
 * same across release and retain, as the driver's primary context does. */
typedef struct emulated_context_t {
    int retained;            /* cuDevicePrimaryCtxRetain count, under memory_lock */
    atomic_uint sticky;      /* a sticky error (ILLEGAL_ADDRESS): every later call answers it */
} emulated_context_t;

extern emulated_context_t contexts[EMULATED_MAX_DEVICES];
extern __thread emulated_context_t *current; /* the calling thread's current context */
/* A primary context's device: its slot is the device's ordinal. */
#define CONTEXT_DEVICE(context) ((int)((context) - contexts))

/* Guards each context's `retained` and the memory bookkeeping (device_used, the allocations
 * of emulated_memory.c). */
extern pthread_mutex_t memory_lock;
/* What each device's memory has charged against it: cuMemAlloc's granules and cuMemCreate's
 * physical memory. Under memory_lock. */
extern uint64_t device_used[EMULATED_MAX_DEVICES];

/* Calls that work in the current context start here: initialised, a current context that is
 * still retained, and no sticky error in it. */
uform_cuResult enter_context(emulated_context_t **out);

#define ENTER_CONTEXT()                                                                            \
    emulated_context_t *context = NULL;                                                            \
    do {                                                                                           \
        uform_cuResult result_ = enter_context(&context);                                          \
        if (result_ != UFORM_CUDA_SUCCESS) return result_;                                         \
    } while (0)

/* ---- What one concern offers another ---- */

/* emulated_memory.c: whether [pointer, + bytes) lies inside one device allocation (the driver
 * checks an async copy's device range up front). */
int device_range_valid(uform_cuDevicePtr pointer, size_t bytes);
/* emulated_memory.c: frees every cuMemAlloc allocation of `device` (a primary context's last
 * release). Under memory_lock. */
void free_device_allocations(int device);

/* emulated_streams.c: every live stream of `context`, and its NULL stream, drained. */
void drain_context(emulated_context_t *context);
/* emulated_streams.c: the last release of a context ends its streams: their handles are
 * INVALID_HANDLE from now on (the NULL stream, idle, stays for a later retain). */
void end_streams(emulated_context_t *context);

/* emulated_events.c: the last release of a context ends its events: their handles are
 * INVALID_HANDLE after. */
void end_events(emulated_context_t *context);

#endif
