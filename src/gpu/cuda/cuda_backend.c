/* The CUDA side of the backend seam (gpu_backend.h): every operation through the execution
 * entry points the loader binds, on the device's primary context. Errors keep the driver's own
 * name; the driver's sticky errors mark the device faulted.
 *
 * The current context is the calling thread's, and most operations run on the caller's own
 * thread (drain, arenas, copies, free), where a CUDA runtime (PyTorch, CuPy) keeps its device
 * in that same slot. So every operation but make_current makes the device's context current only
 * for its own duration (enter/leave below) and gives the thread back the context it had, NULL
 * included; make_current alone leaves it current, for the device functions that need it. */
#include <stdio.h>

#include "core/error.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/gpu_backend.h"

/* Set by uform__cuda_backend (the same values by every thread: the loader binds once), read by
 * every operation; atomic so that threads racing to set them are no data race. */
static const uform__cuda_execution_api_t *_Atomic bound_api;
static const uform__cuda_t *_Atomic bound_driver;
static inline const uform__cuda_execution_api_t *cu(void) {
    return atomic_load_explicit(&bound_api, memory_order_acquire);
}
static inline const uform__cuda_t *driver(void) { return atomic_load_explicit(&bound_driver, memory_order_acquire); }

/* The errors after which the driver answers the same for every call in the context until the
 * process ends (cuda.h: "the process must be terminated and relaunched"). */
static bool is_sticky(uform_cuResult result) {
    switch (result) {
    case UFORM_CUDA_ERROR_ECC_UNCORRECTABLE:
    case UFORM_CUDA_ERROR_ILLEGAL_ADDRESS:
    case UFORM_CUDA_ERROR_LAUNCH_TIMEOUT:
    case UFORM_CUDA_ERROR_ASSERT:
    case UFORM_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case UFORM_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case UFORM_CUDA_ERROR_MISALIGNED_ADDRESS:
    case UFORM_CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case UFORM_CUDA_ERROR_INVALID_PC:
    case UFORM_CUDA_ERROR_LAUNCH_FAILED:
    case UFORM_CUDA_ERROR_EXTERNAL_DEVICE:
    case UFORM_CUDA_ERROR_CONTAINED:
    case UFORM_CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case UFORM_CUDA_ERROR_MPS_CLIENT_TERMINATED: return true;
    default: return false;
    }
}

/* A driver answer as a status, with `what` and the driver's error name in the message. */
static uform_status_t check(uform__gpu_device_t *device, uform_cuResult result, const char *what) {
    if (result == UFORM_CUDA_SUCCESS) return UFORM_STATUS_OK;
    char buffer[32];
    const char *name = uform__cuda_error_name(&driver()->api, result, buffer, sizeof buffer);
    uform_status_t status = UFORM_STATUS_DEVICE_FAULT;
    if (result == UFORM_CUDA_ERROR_OUT_OF_MEMORY) status = UFORM_STATUS_OUT_OF_MEMORY;
    else if (result == UFORM_CUDA_ERROR_INVALID_VALUE || result == UFORM_CUDA_ERROR_INVALID_HANDLE)
        status = UFORM_STATUS_INVALID_ARGUMENT;
    else if (is_sticky(result))
        atomic_store(&device->faulted, true);
    return uform__fail(status, "%s on GPU %d (CUDA device %d) answered %s", what, (int)device->ordinal,
                       (int)device->native_device, name);
}

/* Makes the device's context current and leaves it so: only for device functions, which are
 * documented (vram.h) to run with it current. */
static uform_status_t make_current(uform__gpu_device_t *device) {
    return check(device, cu()->cuCtxSetCurrent((uform_cuContext)device->native_context), "cuCtxSetCurrent");
}

static uform_status_t save_current(uform__gpu_device_t *device, uintptr_t *saved) {
    uform_cuContext current = NULL;
    uform_status_t status = check(device, cu()->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    *saved = (uintptr_t)current;
    return status;
}

static void restore_current(uform__gpu_device_t *device, uintptr_t saved) {
    (void)device;
    cu()->cuCtxSetCurrent((uform_cuContext)saved);
}

/* What enter found current on the calling thread, for leave to put back. */
typedef struct scope_t {
    uform_cuContext previous;
    bool switched; /* enter made the device's context current: leave restores `previous` */
} scope_t;

/* Makes the device's context current on the calling thread for one operation, remembering the
 * thread's own (a caller's CUDA runtime keeps its device there); nothing to do when it already is
 * (a device function, or a thread still inside an operation). */
static uform_status_t enter(uform__gpu_device_t *device, scope_t *scope) {
    scope->previous = NULL;
    scope->switched = false;
    uform_cuContext previous = NULL;
    uform_status_t status = check(device, cu()->cuCtxGetCurrent(&previous), "cuCtxGetCurrent");
    if (status != UFORM_STATUS_OK) return status;
    scope->previous = previous;
    if (previous == (uform_cuContext)device->native_context) return UFORM_STATUS_OK;
    status = check(device, cu()->cuCtxSetCurrent((uform_cuContext)device->native_context), "cuCtxSetCurrent");
    if (status == UFORM_STATUS_OK) scope->switched = true;
    return status;
}

/* Gives the thread back the context enter found (NULL included). Its error, if any, is not the
 * operation's: the context restored is the caller's, and may be one uform never saw. */
static void leave(const scope_t *scope) {
    if (scope->switched) cu()->cuCtxSetCurrent(scope->previous);
}

/* As enter, for the paths that must go on whatever the driver answers (free, close): no message,
 * the device's context made current if the driver lets it. */
static void enter_quietly(uform__gpu_device_t *device, scope_t *scope) {
    scope->previous = NULL;
    scope->switched = false;
    uform_cuContext previous = NULL;
    if (cu()->cuCtxGetCurrent(&previous) != UFORM_CUDA_SUCCESS) {
        /* Nothing known to restore: set it anyway, as the free must still be tried. */
        cu()->cuCtxSetCurrent((uform_cuContext)device->native_context);
        return;
    }
    scope->previous = previous;
    if (previous == (uform_cuContext)device->native_context) return;
    scope->switched = cu()->cuCtxSetCurrent((uform_cuContext)device->native_context) == UFORM_CUDA_SUCCESS;
}

static void close_device(uform__gpu_device_t *device) {
    if (!device->opened) return;
    /* Errors are ignored: free releases everything, a faulted context included. */
    scope_t scope;
    enter_quietly(device, &scope);
    if (device->stream) cu()->cuStreamSynchronize((uform_cuStream)device->stream);
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++)
        if (device->events[i]) cu()->cuEventDestroy((uform_cuEvent)device->events[i]);
    if (device->stream) cu()->cuStreamDestroy((uform_cuStream)device->stream);
    /* The thread's own context back before the release: the caller's, not NULL. */
    leave(&scope);
    cu()->cuDevicePrimaryCtxRelease(device->native_device);
    device->stream = NULL;
    device->native_context = NULL;
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++) device->events[i] = NULL;
    device->opened = false;
}

static uform_status_t open_device(uform__gpu_device_t *device) {
    if ((size_t)device->vendor_ordinal >= driver()->device_count)
        return uform__fail(UFORM_STATUS_NOT_FOUND, "CUDA device %d is gone", (int)device->vendor_ordinal);
    device->native_device = driver()->devices[device->vendor_ordinal].handle;
    uform_cuContext context = NULL;
    uform_status_t status = check(device, cu()->cuDevicePrimaryCtxRetain(&context, device->native_device),
                                  "cuDevicePrimaryCtxRetain");
    if (status != UFORM_STATUS_OK) return status;
    device->native_context = context;
    device->opened = true;
    uform_cuStream stream = NULL;
    scope_t scope;
    status = enter(device, &scope);
    if (status == UFORM_STATUS_OK)
        status = check(device, cu()->cuStreamCreate(&stream, UFORM_CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    device->stream = stream;
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS && status == UFORM_STATUS_OK; i++) {
        uform_cuEvent event = NULL;
        status = check(device, cu()->cuEventCreate(&event, UFORM_CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        device->events[i] = event;
    }
    leave(&scope);
    if (status != UFORM_STATUS_OK) close_device(device);
    return status;
}

static uform_status_t device_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    uform_cuDevicePtr address = 0;
    status = check(device, cu()->cuMemAlloc(&address, bytes), "cuMemAlloc_v2");
    leave(&scope);
    if (status == UFORM_STATUS_OK) *pointer = (void *)(uintptr_t)address;
    return status;
}

static void device_free(uform__gpu_device_t *device, void *pointer) {
    if (!pointer) return;
    scope_t scope;
    enter_quietly(device, &scope);
    cu()->cuMemFree((uform_cuDevicePtr)(uintptr_t)pointer);
    leave(&scope);
}

static uform_status_t host_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    status = check(device, cu()->cuMemHostAlloc(pointer, bytes, UFORM_CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    leave(&scope);
    return status;
}

static void host_free(uform__gpu_device_t *device, void *pointer) {
    if (!pointer) return;
    scope_t scope;
    enter_quietly(device, &scope);
    cu()->cuMemFreeHost(pointer);
    leave(&scope);
}

/* Pinned when the driver knows a host range holding all of [host, host + bytes): pageable
 * memory is refused by cuPointerGetAttribute, which is no error here. */
static bool pinned_range(const void *host, size_t bytes) {
    uform_cuDevicePtr address = (uform_cuDevicePtr)(uintptr_t)host;
    unsigned int type = 0;
    uform_cuDevicePtr start = 0;
    size_t size = 0;
    if (cu()->cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) != UFORM_CUDA_SUCCESS ||
        type != UFORM_CU_MEMORYTYPE_HOST)
        return false;
    if (cu()->cuPointerGetAttribute(&start, UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address) != UFORM_CUDA_SUCCESS ||
        cu()->cuPointerGetAttribute(&size, UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE, address) != UFORM_CUDA_SUCCESS)
        return false;
    return start <= address && address - start <= size && bytes <= size - (address - start);
}

static bool host_is_pinned(uform__gpu_device_t *device, const void *host, size_t bytes) {
    scope_t scope;
    if (enter(device, &scope) != UFORM_STATUS_OK) return false;
    bool pinned = pinned_range(host, bytes);
    leave(&scope);
    return pinned;
}

static uform_status_t copy_to_device_async(uform__gpu_device_t *device, void *destination, const void *source,
                                           size_t bytes) {
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    status = check(device,
                   cu()->cuMemcpyHtoDAsync((uform_cuDevicePtr)(uintptr_t)destination, source, bytes,
                                          (uform_cuStream)device->stream),
                   "cuMemcpyHtoDAsync_v2");
    leave(&scope);
    return status;
}

static uform_status_t copy_to_host_async(uform__gpu_device_t *device, void *destination, const void *source,
                                         size_t bytes) {
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    status = check(device,
                   cu()->cuMemcpyDtoHAsync(destination, (uform_cuDevicePtr)(uintptr_t)source, bytes,
                                          (uform_cuStream)device->stream),
                   "cuMemcpyDtoHAsync_v2");
    leave(&scope);
    return status;
}

static uform_status_t event_record(uform__gpu_device_t *device, size_t which) {
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    status = check(device, cu()->cuEventRecord((uform_cuEvent)device->events[which], (uform_cuStream)device->stream),
                   "cuEventRecord");
    leave(&scope);
    return status;
}

static uform_status_t event_wait(uform__gpu_device_t *device, size_t which) {
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    status = check(device, cu()->cuEventSynchronize((uform_cuEvent)device->events[which]), "cuEventSynchronize");
    leave(&scope);
    return status;
}

static uform_status_t stream_wait(uform__gpu_device_t *device) {
    scope_t scope;
    uform_status_t status = enter(device, &scope);
    if (status != UFORM_STATUS_OK) return status;
    status = check(device, cu()->cuStreamSynchronize((uform_cuStream)device->stream), "cuStreamSynchronize");
    leave(&scope);
    return status;
}

static const uform__gpu_backend_t backend = {
    .name = "CUDA",
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

const uform__gpu_backend_t *uform__cuda_backend(uform_status_t *status) {
    const uform__cuda_execution_api_t *execution = NULL;
    const uform__cuda_t *loaded = NULL;
    *status = uform__cuda_execution(&execution);
    if (*status == UFORM_STATUS_OK) *status = uform__cuda_get(&loaded);
    if (*status != UFORM_STATUS_OK) return NULL;
    atomic_store_explicit(&bound_driver, loaded, memory_order_release);
    atomic_store_explicit(&bound_api, execution, memory_order_release);
    return &backend;
}
