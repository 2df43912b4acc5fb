/* The HIP backend of the VRAM executor (src/gpu/gpu_backend.h): one non-blocking stream and two
 * timing-free events per device, device memory from hipMalloc, pinned portable host memory from
 * hipHostMalloc, copies with hipMemcpyAsync. HIP has no primary-context handle to retain:
 * hipSetDevice makes a device current on the calling thread and native_context stays NULL.
 *
 * The execution entry points (hip_abi.h's UFORM_HIP_EXECUTION_ENTRY_POINTS) are bound by the
 * loader (uform__hip_execution) on the first call to uform__hip_backend; a runtime lacking one
 * still lists its GPUs and answers UNSUPPORTED here, naming it.
 *
 * The current device is the calling thread's, and most operations run on the caller's own thread
 * (drain, arenas, copies, free), where a HIP runtime user (PyTorch on ROCm) keeps its device. So
 * every operation but make_current makes the device current only for its own duration
 * (gpu_call.h's scope) and gives the thread back the device it had; make_current alone leaves it
 * current, for the device functions that need it. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_call.h"
#include "gpu/hip/hip_loader.h"
#include "platform/platform.h"

/* Set by uform__hip_backend (the same values by every thread: the loader binds once), read by
 * every operation. */
static const uform__hip_t *_Atomic bound_hip;
static const uform__hip_execution_api_t *_Atomic bound_api;
static inline const uform__hip_t *runtime(void) { return atomic_load_explicit(&bound_hip, memory_order_acquire); }
static inline const uform__hip_execution_api_t *hip(void) {
    return atomic_load_explicit(&bound_api, memory_order_acquire);
}

/* Errors HIP keeps answering for the device once seen (the device's queues are gone): the
 * executor makes them sticky for the whole executor. */
static bool is_sticky(uform_hipError error) {
    switch (error) {
    case UFORM_HIP_ERROR_ECC_NOT_CORRECTABLE:
    case UFORM_HIP_ERROR_ILLEGAL_ADDRESS:
    case UFORM_HIP_ERROR_LAUNCH_TIMEOUT:
    case UFORM_HIP_ERROR_ASSERT:
    case UFORM_HIP_ERROR_LAUNCH_FAILURE: return true;
    default: return false;
    }
}

/* gpu_backend.h's statuses for a runtime answer, with `what` and the runtime's error name. */
static uform_status_t check(uform__gpu_device_t *device, unsigned error, const char *what) {
    if (error == UFORM_HIP_SUCCESS) return UFORM_STATUS_OK;
    char buffer[32];
    const char *name = uform__hip_error_name(&runtime()->api, error, buffer, sizeof buffer);
    uform__gpu_error_t kind = UFORM__GPU_ERROR_OTHER;
    if (error == UFORM_HIP_ERROR_OUT_OF_MEMORY) kind = UFORM__GPU_ERROR_OUT_OF_MEMORY;
    else if (error == UFORM_HIP_ERROR_INVALID_VALUE || error == UFORM_HIP_ERROR_INVALID_DEVICE ||
             error == UFORM_HIP_ERROR_INVALID_HANDLE || error == UFORM_HIP_ERROR_INVALID_DEVICE_POINTER ||
             error == UFORM_HIP_ERROR_INVALID_MEMCPY_DIRECTION)
        kind = UFORM__GPU_ERROR_INVALID;
    else if (is_sticky(error))
        kind = UFORM__GPU_ERROR_STICKY;
    return uform__gpu_fail(device, kind, name, "%s", what);
}

/* The thread's current device, as gpu_call.h's scope reads and sets it. */
static unsigned get_current(intptr_t *current) {
    int device = 0;
    uform_hipError error = hip()->hipGetDevice(&device);
    *current = device;
    return error;
}
static unsigned set_current(intptr_t current) { return hip()->hipSetDevice((int)current); }
static intptr_t device_of(const uform__gpu_device_t *device) { return device->native_device; }
static const uform__gpu_current_t current = {
    .get_name = "hipGetDevice",
    .set_name = "hipSetDevice",
    .get = get_current,
    .set = set_current,
    .of = device_of,
    .check = check,
};

/* One runtime call with the device current, its status into `status` (gpu_call.h). */
#define HIP_CALL_(status, device, call, what) UFORM__GPU_SCOPED_CALL(status, &current, device, call, what)
/* One runtime call on a path that goes on whatever it answers (free, close). */
#define HIP_CALL_QUIETLY_(device, call) UFORM__GPU_QUIET_CALL(&current, device, call)

/* Makes the device current and leaves it so: only for device functions, which are documented
 * (vram.h) to run with it current. */
static uform_status_t make_current(uform__gpu_device_t *device) {
    return check(device, hip()->hipSetDevice(device->native_device), "hipSetDevice");
}

static uform_status_t save_current(uform__gpu_device_t *device, uintptr_t *saved) {
    int now = 0;
    *saved = 0;
    uform_status_t status = check(device, hip()->hipGetDevice(&now), "hipGetDevice");
    if (status == UFORM_STATUS_OK) *saved = (uintptr_t)now;
    return status;
}

static void restore_current(uform__gpu_device_t *device, uintptr_t saved) {
    (void)device;
    (void)hip()->hipSetDevice((int)saved);
}

static void destroy_handles(uform__gpu_device_t *device) {
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++)
        if (device->events[i]) {
            (void)hip()->hipEventDestroy((uform_hipEvent)device->events[i]);
            device->events[i] = NULL;
        }
    if (device->wait_event) {
        (void)hip()->hipEventDestroy((uform_hipEvent)device->wait_event);
        device->wait_event = NULL;
    }
    if (device->order_event) {
        (void)hip()->hipEventDestroy((uform_hipEvent)device->order_event);
        device->order_event = NULL;
    }
    if (device->stream) {
        (void)hip()->hipStreamDestroy((uform_hipStream)device->stream);
        device->stream = NULL;
    }
}

static uform_status_t open_device(uform__gpu_device_t *device) {
    if (device->vendor_ordinal < 0 || (size_t)device->vendor_ordinal >= runtime()->device_count)
        return uform__fail(UFORM_STATUS_NOT_FOUND, "HIP device %d does not exist (%zu AMD GPUs)",
                           (int)device->vendor_ordinal, runtime()->device_count);
    device->native_device = runtime()->devices[device->vendor_ordinal].handle;
    device->native_context = NULL;
    device->stream = NULL;
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++) device->events[i] = NULL;
    device->wait_event = NULL;
    device->order_event = NULL;
    uform__gpu_scope_t scope;
    uform_status_t status = uform__gpu_enter(&current, device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    uform_hipStream stream = NULL;
    status = check(device, hip()->hipStreamCreateWithFlags(&stream, UFORM_HIP_STREAM_NON_BLOCKING),
                   "hipStreamCreateWithFlags(hipStreamNonBlocking)");
    device->stream = stream;
    /* The staging halves' events, then wait_event, then order_event. */
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS + 2 && status == UFORM_STATUS_OK; i++) {
        uform_hipEvent event = NULL;
        /* Host threads wait on every event uform makes: blocking-sync (gpu_backend.h), no timing. */
        status = check(device,
                       hip()->hipEventCreateWithFlags(&event, UFORM_HIP_EVENT_DISABLE_TIMING | UFORM_HIP_EVENT_BLOCKING_SYNC),
                       "hipEventCreateWithFlags(hipEventDisableTiming | hipEventBlockingSync)");
        if (i < UFORM_STAGING_BUFFERS) device->events[i] = event;
        else if (i == UFORM_STAGING_BUFFERS) device->wait_event = event;
        else device->order_event = event;
    }
    if (status != UFORM_STATUS_OK) destroy_handles(device);
    uform__gpu_leave(&current, &scope);
    if (status == UFORM_STATUS_OK) device->opened = true;
    return status;
}

/* Never fails visibly: a faulted device is closed too. The executor has released the scratch and
 * staging before (the VRAM executor's close, vram_executor.c): they are not close's. */
/* A device function's bracket (gpu_backend.h): gpu_call.h's scope, held across the function. */
static uform_status_t enter_for_function(uform__gpu_device_t *device, uform__gpu_scope_t *scope) {
    return uform__gpu_enter(&current, device, scope);
}
static void leave_after_function(uform__gpu_device_t *device, const uform__gpu_scope_t *scope) {
    (void)device;
    uform__gpu_leave(&current, scope);
}

static void close_device(uform__gpu_device_t *device) {
    if (!device->opened) return;
    uform__gpu_scope_t scope;
    bool current_here = uform__gpu_enter_quietly(&current, device, &scope);
    if (current_here && device->stream) (void)hip()->hipStreamSynchronize((uform_hipStream)device->stream);
    destroy_handles(device);
    uform__gpu_leave(&current, &scope);
    device->opened = false;
}

static uform_status_t device_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    *pointer = NULL;
    uform_status_t status = uform__gpu_refuse_empty(device, bytes, "device");
    if (status != UFORM_STATUS_OK) return status;
    char what[64];
    snprintf(what, sizeof what, "hipMalloc(%zu bytes)", bytes);
    HIP_CALL_(status, device, hip()->hipMalloc(pointer, bytes), what);
    return status;
}

/* hipFree synchronises the device before it frees, as hip_runtime_api.h documents. */
static void device_free(uform__gpu_device_t *device, void *pointer) {
    if (pointer) HIP_CALL_QUIETLY_(device, hip()->hipFree(pointer));
}

static uform_status_t host_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    *pointer = NULL;
    uform_status_t status = uform__gpu_refuse_empty(device, bytes, "pinned");
    if (status != UFORM_STATUS_OK) return status;
    char what[80];
    snprintf(what, sizeof what, "hipHostMalloc(%zu bytes, hipHostMallocPortable)", bytes);
    HIP_CALL_(status, device, hip()->hipHostMalloc(pointer, bytes, UFORM_HIP_HOST_MALLOC_PORTABLE), what);
    return status;
}

static void host_free(uform__gpu_device_t *device, void *pointer) {
    if (pointer) HIP_CALL_QUIETLY_(device, hip()->hipHostFree(pointer));
}

static bool pinned_at(const void *address) {
    uform_hipPointerAttribute attributes;
    memset(&attributes, 0, sizeof attributes);
    /* Ordinary host memory answers hipSuccess with hipMemoryTypeUnregistered (ROCm's clr, as
     * CUDA 11 and later do); older runtimes answered hipErrorInvalidValue. Either is "not pinned". */
    return hip()->hipPointerGetAttributes(&attributes, address) == UFORM_HIP_SUCCESS &&
           attributes.type == UFORM_HIP_MEMORY_TYPE_HOST;
}

/* hipPointerGetAttributes tells no range, so both ends are asked: two pinned ranges side by side
 * read as one, which only costs a direct DMA where a staged copy would also have worked. */
static bool host_is_pinned(uform__gpu_device_t *device, const void *host, size_t bytes) {
    (void)device;
    if (!host) return false;
    if (!bytes) return pinned_at(host);
    return pinned_at(host) && pinned_at((const char *)host + (bytes - 1));
}

static uform_status_t copy_async(uform__gpu_device_t *device, void *destination, const void *source, size_t bytes,
                                 uform_hipMemcpyKind kind, const char *kind_name) {
    if (!bytes) return UFORM_STATUS_OK;
    char what[96];
    snprintf(what, sizeof what, "hipMemcpyAsync(%zu bytes, %s)", bytes, kind_name);
    uform_status_t status;
    HIP_CALL_(status, device,
              hip()->hipMemcpyAsync(destination, source, bytes, kind, (uform_hipStream)device->stream), what);
    return status;
}

static uform_status_t copy_to_device_async(uform__gpu_device_t *device, void *destination, const void *source,
                                           size_t bytes) {
    return copy_async(device, destination, source, bytes, UFORM_HIP_MEMCPY_HOST_TO_DEVICE, "hipMemcpyHostToDevice");
}

static uform_status_t copy_to_host_async(uform__gpu_device_t *device, void *destination, const void *source,
                                         size_t bytes) {
    return copy_async(device, destination, source, bytes, UFORM_HIP_MEMCPY_DEVICE_TO_HOST, "hipMemcpyDeviceToHost");
}

static uform_status_t event_record(uform__gpu_device_t *device, size_t which) {
    uform_status_t status = uform__gpu_check_event(device, which);
    if (status != UFORM_STATUS_OK) return status;
    HIP_CALL_(status, device, hip()->hipEventRecord((uform_hipEvent)device->events[which], (uform_hipStream)device->stream),
              "hipEventRecord");
    return status;
}

static uform_status_t event_wait(uform__gpu_device_t *device, size_t which) {
    uform_status_t status = uform__gpu_check_event(device, which);
    if (status != UFORM_STATUS_OK) return status;
    HIP_CALL_(status, device, hip()->hipEventSynchronize((uform_hipEvent)device->events[which]), "hipEventSynchronize");
    return status;
}

/* hipStreamSynchronize spins the waiting thread (HIP's default wait); a blocking event does not. */
static uform_status_t stream_wait(uform__gpu_device_t *device) {
    uform_status_t status;
    HIP_CALL_(status, device,
              hip()->hipEventRecord((uform_hipEvent)device->wait_event, (uform_hipStream)device->stream),
              "hipEventRecord (waiting for the stream)");
    if (status != UFORM_STATUS_OK) return status;
    HIP_CALL_(status, device, hip()->hipEventSynchronize((uform_hipEvent)device->wait_event),
              "hipEventSynchronize (waiting for the stream)");
    return status;
}

/* The foreign stream is the caller's on this device (NULL: the device's default stream, made
 * current for the call). */
static uform_status_t order_stream(uform__gpu_device_t *device, void *foreign) {
    uform_status_t status;
    HIP_CALL_(status, device,
              hip()->hipEventRecord((uform_hipEvent)device->order_event, (uform_hipStream)device->stream),
              "hipEventRecord (ordering another stream)");
    if (status != UFORM_STATUS_OK) return status;
    HIP_CALL_(status, device,
              hip()->hipStreamWaitEvent((uform_hipStream)foreign, (uform_hipEvent)device->order_event, 0),
              "hipStreamWaitEvent");
    return status;
}

static const uform__gpu_backend_t backend = {
    .name = "HIP",
    .open = open_device,
    .close = close_device,
    .make_current = make_current,
    .enter = enter_for_function,
    .leave = leave_after_function,
    .save_current = save_current,
    .restore_current = restore_current,
    .device_alloc = device_alloc,
    .device_free = device_free,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .host_is_pinned = host_is_pinned,
    .copy_to_device_async = copy_to_device_async,
    .copy_to_host_async = copy_to_host_async,
    .event_record = event_record,
    .event_wait = event_wait,
    .stream_wait = stream_wait,
    .order_stream = order_stream,
};

const uform__gpu_backend_t *uform__hip_backend(uform_status_t *status) {
    uform_status_t ignored;
    if (!status) status = &ignored;
    const uform__hip_execution_api_t *execution = NULL;
    const uform__hip_t *loaded = NULL;
    *status = uform__hip_execution(&execution);
    if (*status == UFORM_STATUS_OK) *status = uform__hip_get(&loaded);
    if (*status != UFORM_STATUS_OK) return NULL;
    /* A child forked after the runtime loaded inherits none of its device state. */
    if (uform__forked_since(loaded->fork_generation)) {
        *status = uform__fail(UFORM_STATUS_UNSUPPORTED,
                              "the HIP runtime was loaded before fork(): this child process cannot use it");
        return NULL;
    }
    atomic_store_explicit(&bound_hip, loaded, memory_order_release);
    atomic_store_explicit(&bound_api, execution, memory_order_release);
    return &backend;
}
