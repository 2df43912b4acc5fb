/* The VRAM verbs: device functions and staged copies. Both are BODY jobs: their steps run on
 * thread 0 (the caller, or the leader for a deferred call) and fork-join the host threads for
 * the parallel parts, so one-call-at-a-time, deferral, progress, drain and free work as for
 * every other verb. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "gpu/vram_internal.h"

enum { COPY_TO_DEVICE = 0, COPY_TO_HOST = 1 };

/** A staged copy's arguments (the BODY job's `arguments`). */
typedef struct copy_arguments_t {
    int direction;
    size_t device;
    char *device_pointer;
    char *host;
    size_t bytes;
} copy_arguments_t;

/* Below this a chunk is copied by thread 0 alone: waking the host threads costs more. */
#define PARALLEL_MEMCPY_MIN (1u << 20)

void (*_Atomic uform__test_before_host_copy)(const uform__gpu_device_t *device, size_t chunk, size_t chunks,
                                             bool to_device);

static void before_host_copy(const uform__gpu_device_t *device, size_t chunk, size_t chunks, bool to_device) {
    void (*hook)(const uform__gpu_device_t *, size_t, size_t, bool) =
        atomic_load_explicit(&uform__test_before_host_copy, memory_order_relaxed);
    if (hook) hook(device, chunk, chunks, to_device);
}

/* The device function running on this thread, for the scratch and staging accessors. */
static _Thread_local const uform_executor_t *current_executor;
static _Thread_local const uform__gpu_device_t *current_device;

const uform__gpu_device_t *uform__vram_current_device(const uform_executor_t *executor) {
    return current_executor == executor ? current_device : NULL;
}

/* One report at a time from thread 0, non-decreasing, the last at done == total. */
/* True in a child of a fork() that a callback made: the driver's threads do not exist there,
 * so the verb stops at once and calls nothing of the driver's (vram.h's promise). */
static bool forked_here(const uform_executor_t *executor) {
    return uform__forked_since(executor->fork_generation);
}

/* Reports progress; false when the progress callback fork()ed and this is the child. */
static bool report(const uform_executor_t *executor, const uform__job_t *job, size_t done) {
    if (job->done) atomic_store_explicit(job->done, done, memory_order_release);
    if (job->progress) job->progress(job->progress_context, done, job->total);
    return !forked_here(executor);
}

/* ---- what the running call still queues (uform__gpu_device_t.settled) ---- */

/* Every device but `except` (SIZE_MAX: none) settled: the call queues nothing on them. */
static void settle_all_but(uform_executor_t *executor, size_t except) {
    uform__vram_t *vram = uform__vram_of(executor);
    for (size_t i = 0; i < vram->device_count; i++)
        if (i != except) atomic_store(&vram->devices[i].settled, true);
}

/* Before a VRAM call's body returns (so before the call is counted finished). */
static void unsettle(uform_executor_t *executor) {
    uform__vram_t *vram = uform__vram_of(executor);
    for (size_t i = 0; i < vram->device_count; i++) atomic_store(&vram->devices[i].settled, false);
}

/* ---- device functions ---- */

typedef struct devices_call_t {
    uform_executor_t *executor;
    uform_device_function_t function;
    void *context;
    /* The first device's failure, in words: it happened on whichever thread ran that device,
     * whose uform_last_error() the caller cannot see. 0 free, 1 being written, 2 written. */
    _Atomic uint32_t failed;
    char cause[256];
} devices_call_t;

static uform_status_t run_device(void *context, size_t task, size_t thread) {
    devices_call_t *call = context;
    uform__gpu_device_t *device = &uform__vram_of(call->executor)->devices[task];
    /* The device is current for the function only: the thread (the caller's, for thread 0) gets
     * back what it had once the function returned and the stream drained. */
    uform__gpu_scope_t scope;
    uform_status_t status = device->backend->enter(device, &scope);
    unsigned serial = 0; /* the thread's error serial before the function: moved if it said why */
    bool function_said = false;
    char said[160];                         /* its words, before the drain below can write others */
    bool driver_failed = status != UFORM_STATUS_OK; /* then uform_last_error() has the driver's words */
    bool entered = status == UFORM_STATUS_OK;
    if (status == UFORM_STATUS_OK) {
        uform_device_slot_t slot = {
            .device = device->index,
            .ordinal = device->ordinal,
            .vendor = device->vendor,
            .native_device = device->native_device,
            .native_context = device->native_context,
            .stream = device->stream,
            .thread = thread,
        };
        const uform_executor_t *outer_executor = current_executor;
        const uform__gpu_device_t *outer_device = current_device;
        current_executor = call->executor;
        current_device = device;
        serial = uform__error_serial();
        status = call->function(call->context, &slot);
        function_said = status != UFORM_STATUS_OK && uform__error_serial() != serial;
        if (function_said) snprintf(said, sizeof said, "%s", uform_last_error());
        current_executor = outer_executor;
        current_device = outer_device;
        if (forked_here(call->executor)) return UFORM_STATUS_FORKED; /* the function fork()ed: the child */
    }
    /* Whatever the function returned, the call ends only once its stream has drained; this
     * call queues nothing more on it (uform_executor_order_stream may go ahead). */
    atomic_store(&device->settled, true);
    uform_status_t drained = device->backend->stream_wait(device);
    if (entered) device->backend->leave(device, &scope);
    uform__vram_note_fault(call->executor, device);
    if (drained != UFORM_STATUS_OK && (status == UFORM_STATUS_OK || atomic_load(&device->faulted))) {
        status = drained;
        driver_failed = true;
    }
    uint32_t expected = 0;
    if (status != UFORM_STATUS_OK && atomic_compare_exchange_strong(&call->failed, &expected, 1)) {
        if (driver_failed)
            snprintf(call->cause, sizeof call->cause, "device %zu (GPU %d): %s", device->index, (int)device->ordinal,
                     uform_last_error());
        else if (function_said) /* a refused re-entry, say: keep its reason */
            snprintf(call->cause, sizeof call->cause, "device %zu's function returned %s: %s", device->index,
                     uform_status_name(status), said);
        else
            snprintf(call->cause, sizeof call->cause, "device %zu's function returned %s", device->index,
                     uform_status_name(status));
        atomic_store(&call->failed, 2);
    }
    return status;
}

static uform_status_t body_for_devices(uform_executor_t *executor, const uform__job_t *job) {
    static const char caller[] = "uform_executor_for_devices";
    devices_call_t call = {.executor = executor, .function = (uform_device_function_t)job->function,
                           .context = job->context};
    size_t count = uform__vram_of(executor)->device_count;
    uform__job_t inner = {
        .kind = UFORM_JOB_FOR_N,
        .n = count,
        .function = (void *)run_device,
        .context = &call,
        .progress = job->progress,
        .progress_context = job->progress_context,
        .done = job->done,
        .total = count,
        .progress_step = 1,
        /* A cancel stops handing out devices; the functions already running finish. */
        .cancel = job->cancel,
        .cancel_handle = job->cancel_handle,
    };
    uform_status_t status = uform__fork_join(executor, &inner);
    unsettle(executor);
    if (status == UFORM_STATUS_OK || status == UFORM_STATUS_FORKED) return status;
    if (status == UFORM_STATUS_INTERRUPTED && uform__job_cancelled(job))
        return uform__fail(status, "%s: cancelled; devices not yet started did not run", caller);
    if (uform__vram_fault(executor, caller) != UFORM_STATUS_OK) return UFORM_STATUS_DEVICE_FAULT;
    return uform__fail(status, "%s: %s", caller,
                       atomic_load(&call.failed) == 2 ? call.cause : "a device function or its stream failed");
}

/* Validation shared by the verbs: a VRAM executor, and a device of it. */
static uform_status_t check_vram(const uform_executor_t *executor, const char *caller) {
    if (!executor) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the NULL executor has no devices", caller);
    if (!uform__vram_of(executor))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a RAM executor has no devices (use for_vram)", caller);
    return UFORM_STATUS_OK;
}

uform_status_t uform_executor_for_devices(uform_executor_t *executor, const uform_call_t *call,
                                          uform_device_function_t function, void *context) {
    static const char caller[] = "uform_executor_for_devices";
    uform__call_clear_deferred(call);
    uform_status_t status = check_vram(executor, caller);
    if (status != UFORM_STATUS_OK) return status;
    if (!function) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the device function is NULL", caller);
    size_t devices = uform_executor_devices(executor); /* counted in: free may be under way */
    uform__job_t job = {.kind = UFORM_JOB_BODY,
                        .body = body_for_devices,
                        .function = (void *)function,
                        .context = context,
                        .n = devices,
                        .total = devices};
    return uform__run_call(executor, call, &job, caller);
}

/* ---- staged copies ---- */

typedef struct memcpy_call_t {
    char *destination;
    const char *source;
} memcpy_call_t;

static uform_status_t memcpy_slice(void *context, size_t first, size_t count, size_t thread) {
    (void)thread;
    memcpy_call_t *call = context;
    memcpy(call->destination + first, call->source + first, count);
    return UFORM_STATUS_OK;
}

/* The host side of a chunk, spread over the host threads: one core's memcpy is slower than a
 * PCIe 5 or NVLink-C2C link. */
static uform_status_t host_copy(uform_executor_t *executor, void *destination, const void *source, size_t bytes) {
    if (bytes < PARALLEL_MEMCPY_MIN || executor->threads == 1) {
        memcpy(destination, source, bytes);
        return UFORM_STATUS_OK;
    }
    memcpy_call_t call = {destination, source};
    uform__job_t inner = {.kind = UFORM_JOB_FOR_SLICES,
                          .n = bytes,
                          .function = (void *)memcpy_slice,
                          .context = &call,
                          .total = bytes,
                          .progress_step = bytes};
    return uform__fork_join(executor, &inner);
}

/* Both directions stop between chunks once the call is cancelled, leaving in `*copied` the
 * bytes whose DMA was issued (the stream is drained before the call ends). */
static uform_status_t stage_to_device(uform_executor_t *executor, uform__gpu_device_t *device, const uform__job_t *job,
                                      char *target, const char *host, size_t bytes, size_t chunk, size_t *copied) {
    const uform__gpu_backend_t *backend = device->backend;
    char *halves[UFORM_STAGING_BUFFERS] = {device->staging, (char *)device->staging + chunk};
    size_t chunks = (bytes + chunk - 1) / chunk;
    for (size_t k = 0; k < chunks; k++) {
        size_t which = k % UFORM_STAGING_BUFFERS, offset = k * chunk;
        size_t length = bytes - offset < chunk ? bytes - offset : chunk;
        if (uform__job_cancelled(job)) {
            *copied = offset;
            return UFORM_STATUS_INTERRUPTED;
        }
        if (k >= UFORM_STAGING_BUFFERS) {
            /* This half's last DMA (chunk k - 2) must have left it before it is refilled. */
            uform_status_t status = backend->event_wait(device, which);
            if (status != UFORM_STATUS_OK) return status;
            if (!report(executor, job, (k - 1) * chunk)) return UFORM_STATUS_FORKED;
        }
        before_host_copy(device, k, chunks, true);
        uform_status_t status = host_copy(executor, halves[which], host + offset, length);
        if (status != UFORM_STATUS_OK) return status;
        status = backend->copy_to_device_async(device, target + offset, halves[which], length);
        if (status == UFORM_STATUS_OK) status = backend->event_record(device, which);
        if (status != UFORM_STATUS_OK) return status;
    }
    return UFORM_STATUS_OK;
}

static uform_status_t stage_to_host(uform_executor_t *executor, uform__gpu_device_t *device, const uform__job_t *job,
                                    char *host, const char *source, size_t bytes, size_t chunk, size_t *copied) {
    const uform__gpu_backend_t *backend = device->backend;
    char *halves[UFORM_STAGING_BUFFERS] = {device->staging, (char *)device->staging + chunk};
    size_t chunks = (bytes + chunk - 1) / chunk;
    /* The DMA of chunk k + 1 runs while the host copies chunk k out of the other half. */
    for (size_t k = 0; k <= chunks; k++) {
        /* Cancelled: no new DMA; the chunk already in flight is still copied out. */
        bool cancelled = k < chunks && uform__job_cancelled(job);
        if (cancelled && k == 0) return UFORM_STATUS_INTERRUPTED;
        if (k < chunks && !cancelled) {
            size_t which = k % UFORM_STAGING_BUFFERS, offset = k * chunk;
            size_t length = bytes - offset < chunk ? bytes - offset : chunk;
            uform_status_t status = backend->copy_to_host_async(device, halves[which], source + offset, length);
            if (status == UFORM_STATUS_OK) status = backend->event_record(device, which);
            if (status != UFORM_STATUS_OK) return status;
        }
        if (k == 0) continue;
        size_t previous = k - 1, which = previous % UFORM_STAGING_BUFFERS, offset = previous * chunk;
        size_t length = bytes - offset < chunk ? bytes - offset : chunk;
        uform_status_t status = backend->event_wait(device, which);
        if (status != UFORM_STATUS_OK) return status;
        before_host_copy(device, previous, chunks, false);
        status = host_copy(executor, host + offset, halves[which], length);
        if (status != UFORM_STATUS_OK) return status;
        if (!report(executor, job, offset + length)) return UFORM_STATUS_FORKED;
        if (cancelled) {
            *copied = offset + length;
            return UFORM_STATUS_INTERRUPTED;
        }
    }
    return UFORM_STATUS_OK;
}

static uform_status_t copy_steps(uform_executor_t *executor, const uform__job_t *job) {
    const copy_arguments_t *arguments = job->arguments;
    const char *caller =
        arguments->direction == COPY_TO_DEVICE ? "uform_executor_copy_to_device" : "uform_executor_copy_to_host";
    uform__vram_t *vram = uform__vram_of(executor);
    uform__gpu_device_t *device = &vram->devices[arguments->device];
    const uform__gpu_backend_t *backend = device->backend;
    char *device_pointer = arguments->device_pointer;
    char *host = arguments->host;
    size_t bytes = arguments->bytes;
    if (!bytes) return report(executor, job, 0) ? UFORM_STATUS_OK : UFORM_STATUS_FORKED;
    /* No make_current: this runs on the caller's thread (or the leader's), and each backend
     * operation makes the device's context current only for itself (gpu_backend.h). */
    uform_status_t status = UFORM_STATUS_OK;
    size_t copied = 0; /* of a cancelled copy */
    if (backend->host_is_pinned(device, host, bytes)) {
        /* Pinned or registered already: the DMA reads or writes it directly. */
        status = arguments->direction == COPY_TO_DEVICE
                     ? backend->copy_to_device_async(device, device_pointer, host, bytes)
                     : backend->copy_to_host_async(device, host, device_pointer, bytes);
    } else {
        size_t chunk = vram->chunk_bytes < bytes ? vram->chunk_bytes : bytes;
        status = uform__vram_grow_staging(executor, device, UFORM_STAGING_BUFFERS * chunk, caller);
        if (status == UFORM_STATUS_OK)
            status = arguments->direction == COPY_TO_DEVICE
                         ? stage_to_device(executor, device, job, device_pointer, host, bytes, chunk, &copied)
                         : stage_to_host(executor, device, job, host, device_pointer, bytes, chunk, &copied);
    }
    /* A callback fork()ed and this is the child: no driver call may follow. */
    if (forked_here(executor)) return UFORM_STATUS_FORKED;
    /* Even after a failure nothing may still be reading the staging or the caller's memory.
     * Nothing more is queued: uform_executor_order_stream may go ahead. */
    atomic_store(&device->settled, true);
    uform_status_t drained = backend->stream_wait(device);
    if (status == UFORM_STATUS_OK) status = drained;
    uform__vram_note_fault(executor, device);
    if (status == UFORM_STATUS_OK) return report(executor, job, bytes) ? UFORM_STATUS_OK : UFORM_STATUS_FORKED;
    if (status == UFORM_STATUS_INTERRUPTED && drained == UFORM_STATUS_OK) {
        if (!report(executor, job, copied)) return UFORM_STATUS_FORKED;
        return uform__fail(status, "%s: cancelled between chunks, after %zu of %zu bytes", caller, copied, bytes);
    }
    if (uform__vram_fault(executor, caller) != UFORM_STATUS_OK) return UFORM_STATUS_DEVICE_FAULT;
    char cause[256];
    snprintf(cause, sizeof cause, "%s", uform_last_error());
    return uform__fail(status, "%s: %zu bytes with GPU %d: %s", caller, bytes, (int)device->ordinal, cause);
}

/* A staged copy queues work on its own device only. */
static uform_status_t body_copy(uform_executor_t *executor, const uform__job_t *job) {
    const copy_arguments_t *arguments = job->arguments;
    settle_all_but(executor, arguments->device);
    uform_status_t status = copy_steps(executor, job);
    unsettle(executor);
    return status;
}

static uform_status_t copy(uform_executor_t *executor, const uform_call_t *call, int direction, size_t device,
                           void *device_pointer, void *host, size_t bytes, const char *caller) {
    uform__call_clear_deferred(call);
    uform_status_t status = check_vram(executor, caller);
    if (status != UFORM_STATUS_OK) return status;
    size_t devices = uform_executor_devices(executor); /* counted in: free may be under way */
    if (device >= devices)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: device %zu of %zu", caller, device, devices);
    if (bytes && (!device_pointer || !host))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a NULL %s pointer with %zu bytes", caller,
                           device_pointer ? "host" : "device", bytes);
    copy_arguments_t arguments = {direction, device, device_pointer, host, bytes};
    uform__job_t job = {.kind = UFORM_JOB_BODY,
                        .body = body_copy,
                        .arguments = &arguments,
                        .arguments_bytes = sizeof arguments,
                        .total = bytes};
    return uform__run_call(executor, call, &job, caller);
}

uform_status_t uform_executor_copy_to_device(uform_executor_t *executor, const uform_call_t *call, size_t device,
                                             void *device_pointer, const void *host, size_t bytes) {
    return copy(executor, call, COPY_TO_DEVICE, device, device_pointer, (void *)host, bytes,
                "uform_executor_copy_to_device");
}

uform_status_t uform_executor_copy_to_host(uform_executor_t *executor, const uform_call_t *call, void *host,
                                           size_t device, const void *device_pointer, size_t bytes) {
    return copy(executor, call, COPY_TO_HOST, device, (void *)device_pointer, host, bytes,
                "uform_executor_copy_to_host");
}
