/* The HIP backend of the VRAM executor (src/gpu/gpu_backend.h): one non-blocking stream and two
 * timing-free events per device, device memory from hipMalloc, pinned portable host memory from
 * hipHostMalloc, copies with hipMemcpyAsync. HIP has no primary-context handle to retain:
 * hipSetDevice makes a device current on the calling thread and native_context stays NULL.
 *
 * The execution entry points (hip_abi.h's UFORM_HIP_EXECUTION_ENTRY_POINTS) are bound with dlsym
 * from the library discovery loaded, once, on the first call to uform__hip_backend; a runtime
 * lacking one still lists its GPUs and answers UNSUPPORTED here, naming it.
 *
 * The current device is the calling thread's, and most operations run on the caller's own thread
 * (drain, arenas, copies, free), where a HIP runtime user (PyTorch on ROCm) keeps its device. So
 * every operation but make_current makes the device current only for its own duration
 * (enter/leave below) and gives the thread back the device it had; make_current alone leaves it
 * current, for the device functions that need it. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "gpu/gpu_backend.h"
#include "gpu/hip/hip_loader.h"
#include "platform/platform.h"

typedef struct execution_api_t {
#define FIELD_(field, symbol, type) type field;
    UFORM_HIP_EXECUTION_ENTRY_POINTS(FIELD_)
#undef FIELD_
} execution_api_t;

static pthread_once_t bind_once = PTHREAD_ONCE_INIT;
static uform_status_t bind_status;
static char bind_message[512];
static const uform__hip_t *hip;
static execution_api_t run;

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

/* gpu_backend.h's statuses for a HIP error, with the runtime's name for it in the message:
 * "HIP device 0: hipMalloc(1048576 bytes) answered hipErrorOutOfMemory". */
UFORM_PRINTF_(3, 4)
static uform_status_t fail(uform__gpu_device_t *device, uform_hipError error, const char *format, ...) {
    char call[160], buffer[32];
    va_list args;
    va_start(args, format);
    vsnprintf(call, sizeof call, format, args);
    va_end(args);
    uform_status_t status = UFORM_STATUS_DEVICE_FAULT;
    if (error == UFORM_HIP_ERROR_OUT_OF_MEMORY) status = UFORM_STATUS_OUT_OF_MEMORY;
    else if (error == UFORM_HIP_ERROR_INVALID_VALUE || error == UFORM_HIP_ERROR_INVALID_DEVICE ||
             error == UFORM_HIP_ERROR_INVALID_HANDLE || error == UFORM_HIP_ERROR_INVALID_DEVICE_POINTER ||
             error == UFORM_HIP_ERROR_INVALID_MEMCPY_DIRECTION)
        status = UFORM_STATUS_INVALID_ARGUMENT;
    else if (is_sticky(error))
        atomic_store(&device->faulted, true);
    return uform__fail(status, "HIP device %d: %s answered %s", (int)device->vendor_ordinal, call,
                       uform__hip_error_name(&hip->api, error, buffer, sizeof buffer));
}

/* Evaluates a runtime call; on failure returns fail(...) with the call's description. */
#define CALL_(device, call, ...)                                                                   \
    do {                                                                                           \
        uform_hipError error_ = (call);                                                            \
        if (error_ != UFORM_HIP_SUCCESS) return fail(device, error_, __VA_ARGS__);                 \
    } while (0)

/* Makes the device current and leaves it so: only for device functions, which are documented
 * (vram.h) to run with it current. */
static uform_status_t make_current(uform__gpu_device_t *device) {
    CALL_(device, run.hipSetDevice(device->native_device), "hipSetDevice(%d)", (int)device->native_device);
    return UFORM_STATUS_OK;
}

/* What enter found current on the calling thread, for leave to put back. */
typedef struct scope_t {
    int previous;
    bool switched; /* enter made the device current: leave restores `previous` */
} scope_t;

static uform_status_t save_current(uform__gpu_device_t *device, uintptr_t *saved) {
    int current = 0;
    *saved = 0;
    CALL_(device, run.hipGetDevice(&current), "hipGetDevice");
    *saved = (uintptr_t)current;
    return UFORM_STATUS_OK;
}

static void restore_current(uform__gpu_device_t *device, uintptr_t saved) {
    (void)device;
    (void)run.hipSetDevice((int)saved);
}

/* Makes the device current on the calling thread for one operation, remembering the thread's own
 * (a HIP runtime user keeps its device there); nothing to do when it already is. */
static uform_status_t enter(uform__gpu_device_t *device, scope_t *scope) {
    scope->previous = 0;
    scope->switched = false;
    int previous = 0;
    CALL_(device, run.hipGetDevice(&previous), "hipGetDevice");
    scope->previous = previous;
    if (previous == device->native_device) return UFORM_STATUS_OK;
    CALL_(device, run.hipSetDevice(device->native_device), "hipSetDevice(%d)", (int)device->native_device);
    scope->switched = true;
    return UFORM_STATUS_OK;
}

/* Gives the thread back the device enter found. Its error, if any, is not the operation's. */
static void leave(const scope_t *scope) {
    if (scope->switched) (void)run.hipSetDevice(scope->previous);
}

/* As enter, for close, which goes on whatever the runtime answers: no message; true when the
 * device is current. */
static bool enter_quietly(uform__gpu_device_t *device, scope_t *scope) {
    scope->previous = 0;
    scope->switched = false;
    int previous = 0;
    /* Nothing known to restore: set it anyway, so that the stream can still be waited for. */
    if (run.hipGetDevice(&previous) != UFORM_HIP_SUCCESS)
        return run.hipSetDevice(device->native_device) == UFORM_HIP_SUCCESS;
    scope->previous = previous;
    if (previous == device->native_device) return true;
    scope->switched = run.hipSetDevice(device->native_device) == UFORM_HIP_SUCCESS;
    return scope->switched;
}

static void destroy_handles(uform__gpu_device_t *device) {
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++)
        if (device->events[i]) {
            (void)run.hipEventDestroy((uform_hipEvent)device->events[i]);
            device->events[i] = NULL;
        }
    if (device->stream) {
        (void)run.hipStreamDestroy((uform_hipStream)device->stream);
        device->stream = NULL;
    }
}

static uform_status_t open_device(uform__gpu_device_t *device) {
    if (device->vendor_ordinal < 0 || (size_t)device->vendor_ordinal >= hip->device_count)
        return uform__fail(UFORM_STATUS_NOT_FOUND, "HIP device %d does not exist (%zu AMD GPUs)",
                           (int)device->vendor_ordinal, hip->device_count);
    device->native_device = hip->devices[device->vendor_ordinal].handle;
    device->native_context = NULL;
    device->stream = NULL;
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++) device->events[i] = NULL;
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    uform_hipStream stream = NULL;
    uform_hipError error = run.hipStreamCreateWithFlags(&stream, UFORM_HIP_STREAM_NON_BLOCKING);
    if (error != UFORM_HIP_SUCCESS) {
        leave(&scope);
        return fail(device, error, "hipStreamCreateWithFlags(hipStreamNonBlocking)");
    }
    device->stream = stream;
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++) {
        uform_hipEvent event = NULL;
        error = run.hipEventCreateWithFlags(&event, UFORM_HIP_EVENT_DISABLE_TIMING);
        if (error != UFORM_HIP_SUCCESS) {
            status = fail(device, error, "hipEventCreateWithFlags(hipEventDisableTiming)");
            destroy_handles(device);
            leave(&scope);
            return status;
        }
        device->events[i] = event;
    }
    leave(&scope);
    device->opened = true;
    return UFORM_STATUS_OK;
}

/* Never fails visibly: a faulted device is closed too. Scratch and staging still held go with it. */
static void close_device(uform__gpu_device_t *device) {
    if (!device->opened) return;
    scope_t scope;
    bool current = enter_quietly(device, &scope);
    if (current && device->stream) (void)run.hipStreamSynchronize((uform_hipStream)device->stream);
    if (device->scratch) (void)run.hipFree(device->scratch);
    if (device->staging) (void)run.hipHostFree(device->staging);
    device->scratch = NULL;
    device->scratch_bytes = 0;
    device->staging = NULL;
    device->staging_bytes = 0;
    destroy_handles(device);
    leave(&scope);
    device->opened = false;
}

static uform_status_t device_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    *pointer = NULL;
    /* hipMalloc of 0 bytes answers hipSuccess and NULL: not an allocation to hand out. */
    if (!bytes) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "HIP device %d: device allocation of 0 bytes",
                                   (int)device->vendor_ordinal);
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    uform_hipError error = run.hipMalloc(pointer, bytes);
    leave(&scope);
    if (error != UFORM_HIP_SUCCESS) return fail(device, error, "hipMalloc(%zu bytes)", bytes);
    return UFORM_STATUS_OK;
}

/* hipFree synchronises the device before it frees, as hip_runtime_api.h documents. */
static void device_free(uform__gpu_device_t *device, void *pointer) {
    scope_t scope;
    if (!pointer || enter(device, &scope) != UFORM_STATUS_OK) return;
    (void)run.hipFree(pointer);
    leave(&scope);
}

static uform_status_t host_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    *pointer = NULL;
    if (!bytes) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "HIP device %d: pinned allocation of 0 bytes",
                                   (int)device->vendor_ordinal);
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    uform_hipError error = run.hipHostMalloc(pointer, bytes, UFORM_HIP_HOST_MALLOC_PORTABLE);
    leave(&scope);
    if (error != UFORM_HIP_SUCCESS) return fail(device, error, "hipHostMalloc(%zu bytes, hipHostMallocPortable)", bytes);
    return UFORM_STATUS_OK;
}

static void host_free(uform__gpu_device_t *device, void *pointer) {
    if (!pointer) return;
    (void)run.hipHostFree(pointer);
}

static bool pinned_at(const void *address) {
    uform_hipPointerAttribute attributes;
    memset(&attributes, 0, sizeof attributes);
    /* Ordinary host memory answers hipErrorInvalidValue (HIP follows CUDA before 11.0 here). */
    return run.hipPointerGetAttributes(&attributes, address) == UFORM_HIP_SUCCESS &&
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
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    uform_hipError error = run.hipMemcpyAsync(destination, source, bytes, kind, (uform_hipStream)device->stream);
    leave(&scope);
    if (error != UFORM_HIP_SUCCESS) return fail(device, error, "hipMemcpyAsync(%zu bytes, %s)", bytes, kind_name);
    return UFORM_STATUS_OK;
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
    if (which >= UFORM_STAGING_BUFFERS)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "HIP device %d: no event %zu", (int)device->vendor_ordinal,
                           which);
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    uform_hipError error = run.hipEventRecord((uform_hipEvent)device->events[which], (uform_hipStream)device->stream);
    leave(&scope);
    if (error != UFORM_HIP_SUCCESS) return fail(device, error, "hipEventRecord(event %zu)", which);
    return UFORM_STATUS_OK;
}

static uform_status_t event_wait(uform__gpu_device_t *device, size_t which) {
    if (which >= UFORM_STAGING_BUFFERS)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "HIP device %d: no event %zu", (int)device->vendor_ordinal,
                           which);
    CALL_(device, run.hipEventSynchronize((uform_hipEvent)device->events[which]), "hipEventSynchronize(event %zu)",
          which);
    return UFORM_STATUS_OK;
}

static uform_status_t stream_wait(uform__gpu_device_t *device) {
    CALL_(device, run.hipStreamSynchronize((uform_hipStream)device->stream), "hipStreamSynchronize");
    return UFORM_STATUS_OK;
}

static const uform__gpu_backend_t backend = {
    .name = "HIP",
    .open = open_device,
    .close = close_device,
    .make_current = make_current,
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
};

static void bind_execution(void) {
    uform_status_t status = uform__hip_get(&hip);
    if (status != UFORM_STATUS_OK) {
        bind_status = status;
        snprintf(bind_message, sizeof bind_message, "%s", uform_last_error());
        return;
    }
    if (!hip) {
        bind_status = UFORM_STATUS_NOT_FOUND;
        snprintf(bind_message, sizeof bind_message, "no HIP device: %s", uform__hip_note());
        return;
    }
#define BIND_(field, symbol, type)                                                                 \
    {                                                                                              \
        void *pointer = uform__library_symbol(hip->library, symbol);                               \
        if (!pointer) {                                                                            \
            bind_status = UFORM_STATUS_UNSUPPORTED;                                                \
            snprintf(bind_message, sizeof bind_message, "the HIP runtime %s lacks %s: %s", hip->path, symbol, \
                     uform__library_error());                                                      \
            memset(&run, 0, sizeof run);                                                           \
            return;                                                                                \
        }                                                                                          \
        run.field = (type)pointer;                                                                 \
    }
    UFORM_HIP_EXECUTION_ENTRY_POINTS(BIND_)
#undef BIND_
    bind_status = UFORM_STATUS_OK;
}

const uform__gpu_backend_t *uform__hip_backend(uform_status_t *status) {
    uform_status_t ignored;
    if (!status) status = &ignored;
    pthread_once(&bind_once, bind_execution);
    if (bind_status != UFORM_STATUS_OK) {
        *status = uform__fail(bind_status, "%s", bind_message);
        return NULL;
    }
    /* A child forked after the runtime loaded inherits none of its device state. */
    if (uform__forked_since(hip->fork_generation)) {
        *status = uform__fail(UFORM_STATUS_UNSUPPORTED,
                              "the HIP runtime was loaded before fork(): this child process cannot use it");
        return NULL;
    }
    *status = UFORM_STATUS_OK;
    return &backend;
}
