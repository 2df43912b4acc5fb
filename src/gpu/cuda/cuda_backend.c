/* The CUDA side of the backend seam (gpu_backend.h): every operation through the execution
 * entry points the loader binds, on the device's primary context. Errors keep the driver's own
 * name; the driver's sticky errors mark the device faulted.
 *
 * The current context is the calling thread's, and most operations run on the caller's own
 * thread (drain, arenas, copies, free), where a CUDA runtime (PyTorch, CuPy) keeps its device
 * in that same slot. So every operation but make_current makes the device's context current only
 * for its own duration (gpu_call.h's scope) and gives the thread back the context it had, NULL
 * included; make_current alone leaves it current, for the device functions that need it. */
#include <stdint.h>

#include "core/error.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/cuda/cuda_multicast.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_call.h"
#include "platform/platform.h"

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

/* gpu_backend.h's statuses for a driver answer, with `what` and the driver's error name. */
static uform_status_t check(uform__gpu_device_t *device, unsigned result, const char *what) {
    if (result == UFORM_CUDA_SUCCESS) return UFORM_STATUS_OK;
    char buffer[32];
    const char *name = uform__cuda_error_name(&driver()->api, result, buffer, sizeof buffer);
    uform__gpu_error_t kind = UFORM__GPU_ERROR_OTHER;
    if (result == UFORM_CUDA_ERROR_OUT_OF_MEMORY) kind = UFORM__GPU_ERROR_OUT_OF_MEMORY;
    else if (result == UFORM_CUDA_ERROR_INVALID_VALUE || result == UFORM_CUDA_ERROR_INVALID_HANDLE)
        kind = UFORM__GPU_ERROR_INVALID;
    else if (is_sticky(result))
        kind = UFORM__GPU_ERROR_STICKY;
    return uform__gpu_fail(device, kind, name, "%s", what);
}

/* The thread's current context, as gpu_call.h's scope reads and sets it. */
static unsigned get_current(intptr_t *current) {
    uform_cuContext context = NULL;
    uform_cuResult result = cu()->cuCtxGetCurrent(&context);
    *current = (intptr_t)context;
    return result;
}
static unsigned set_current(intptr_t current) { return cu()->cuCtxSetCurrent((uform_cuContext)current); }
static intptr_t context_of(const uform__gpu_device_t *device) { return (intptr_t)device->native_context; }
static const uform__gpu_current_t current = {
    .get_name = "cuCtxGetCurrent",
    .set_name = "cuCtxSetCurrent",
    .get = get_current,
    .set = set_current,
    .of = context_of,
    .check = check,
};

/* One driver call with the device's context current, its status into `status` (gpu_call.h). */
#define CU_CALL_(status, device, call, what) UFORM__GPU_SCOPED_CALL(status, &current, device, call, what)
/* One driver call on a path that goes on whatever it answers (free, close). */
#define CU_CALL_QUIETLY_(device, call) UFORM__GPU_QUIET_CALL(&current, device, call)

/* Makes the device's context current and leaves it so: only for device functions, which are
 * documented (vram.h) to run with it current. */
static uform_status_t make_current(uform__gpu_device_t *device) {
    return check(device, cu()->cuCtxSetCurrent((uform_cuContext)device->native_context), "cuCtxSetCurrent");
}

/* Host threads wait on every event uform makes: blocking-sync (gpu_backend.h), no timing. */
#define EVENT_FLAGS (UFORM_CU_EVENT_DISABLE_TIMING | UFORM_CU_EVENT_BLOCKING_SYNC)

static uform_status_t save_current(uform__gpu_device_t *device, uintptr_t *saved) {
    uform_cuContext now = NULL;
    uform_status_t status = check(device, cu()->cuCtxGetCurrent(&now), "cuCtxGetCurrent");
    *saved = (uintptr_t)now;
    return status;
}

static void restore_current(uform__gpu_device_t *device, uintptr_t saved) {
    (void)device;
    cu()->cuCtxSetCurrent((uform_cuContext)saved);
}

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
    /* Errors are ignored: free releases everything, a faulted context included. */
    uform__gpu_scope_t scope;
    uform__gpu_enter_quietly(&current, device, &scope);
    if (device->stream) cu()->cuStreamSynchronize((uform_cuStream)device->stream);
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++)
        if (device->events[i]) cu()->cuEventDestroy((uform_cuEvent)device->events[i]);
    if (device->wait_event) cu()->cuEventDestroy((uform_cuEvent)device->wait_event);
    if (device->order_event) cu()->cuEventDestroy((uform_cuEvent)device->order_event);
    if (device->stream) cu()->cuStreamDestroy((uform_cuStream)device->stream);
    /* The thread's own context back before the release: the caller's, not NULL. */
    uform__gpu_leave(&current, &scope);
    cu()->cuDevicePrimaryCtxRelease(device->native_device);
    device->stream = NULL;
    device->native_context = NULL;
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS; i++) device->events[i] = NULL;
    device->wait_event = NULL;
    device->order_event = NULL;
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
    uform__gpu_scope_t scope;
    status = uform__gpu_enter(&current, device, &scope);
    if (status == UFORM_STATUS_OK)
        status = check(device, cu()->cuStreamCreate(&stream, UFORM_CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    device->stream = stream;
    /* The staging halves' events, then wait_event, then order_event. */
    for (size_t i = 0; i < UFORM_STAGING_BUFFERS + 2 && status == UFORM_STATUS_OK; i++) {
        uform_cuEvent event = NULL;
        status = check(device, cu()->cuEventCreate(&event, EVENT_FLAGS), "cuEventCreate");
        if (i < UFORM_STAGING_BUFFERS) device->events[i] = event;
        else if (i == UFORM_STAGING_BUFFERS) device->wait_event = event;
        else device->order_event = event;
    }
    uform__gpu_leave(&current, &scope);
    if (status != UFORM_STATUS_OK) close_device(device);
    return status;
}

static uform_status_t device_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    *pointer = NULL;
    uform_status_t status = uform__gpu_refuse_empty(device, bytes, "device");
    if (status != UFORM_STATUS_OK) return status;
    uform_cuDevicePtr address = 0;
    CU_CALL_(status, device, cu()->cuMemAlloc(&address, bytes), "cuMemAlloc_v2");
    if (status == UFORM_STATUS_OK) *pointer = (void *)(uintptr_t)address;
    return status;
}

static void device_free(uform__gpu_device_t *device, void *pointer) {
    if (pointer) CU_CALL_QUIETLY_(device, cu()->cuMemFree((uform_cuDevicePtr)(uintptr_t)pointer));
}

static uform_status_t host_alloc(uform__gpu_device_t *device, size_t bytes, void **pointer) {
    *pointer = NULL;
    uform_status_t status = uform__gpu_refuse_empty(device, bytes, "pinned");
    if (status != UFORM_STATUS_OK) return status;
    CU_CALL_(status, device, cu()->cuMemHostAlloc(pointer, bytes, UFORM_CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
    return status;
}

static void host_free(uform__gpu_device_t *device, void *pointer) {
    if (pointer) CU_CALL_QUIETLY_(device, cu()->cuMemFreeHost(pointer));
}

/* True when the driver says `address` is host memory it pinned (cuMemHostAlloc'd or registered):
 * CU_POINTER_ATTRIBUTE_MEMORY_TYPE, which cuda.h documents for host memory; ordinary memory is
 * refused (INVALID_VALUE), which is no error here. */
static bool pinned_at(const void *address) {
    unsigned int type = 0;
    return cu()->cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       (uform_cuDevicePtr)(uintptr_t)address) == UFORM_CUDA_SUCCESS &&
           type == UFORM_CU_MEMORYTYPE_HOST;
}

/* The range attributes (RANGE_START_ADDR, RANGE_SIZE) are documented for device allocations
 * only, so both ends of the host range are asked instead: two pinned ranges side by side read
 * as one, which only costs the driver staging a DMA that uform would have staged itself. */
static bool pinned_range(const void *host, size_t bytes) {
    if (!host) return false;
    if (!bytes) return pinned_at(host);
    return pinned_at(host) && pinned_at((const char *)host + (bytes - 1));
}

static bool host_is_pinned(uform__gpu_device_t *device, const void *host, size_t bytes) {
    uform__gpu_scope_t scope;
    if (uform__gpu_enter(&current, device, &scope) != UFORM_STATUS_OK) return false;
    bool pinned = pinned_range(host, bytes);
    uform__gpu_leave(&current, &scope);
    return pinned;
}

static uform_status_t copy_to_device_async(uform__gpu_device_t *device, void *destination, const void *source,
                                           size_t bytes) {
    uform_status_t status;
    CU_CALL_(status, device,
             cu()->cuMemcpyHtoDAsync((uform_cuDevicePtr)(uintptr_t)destination, source, bytes,
                                     (uform_cuStream)device->stream),
             "cuMemcpyHtoDAsync_v2");
    return status;
}

static uform_status_t copy_to_host_async(uform__gpu_device_t *device, void *destination, const void *source,
                                         size_t bytes) {
    uform_status_t status;
    CU_CALL_(status, device,
             cu()->cuMemcpyDtoHAsync(destination, (uform_cuDevicePtr)(uintptr_t)source, bytes,
                                     (uform_cuStream)device->stream),
             "cuMemcpyDtoHAsync_v2");
    return status;
}

static uform_status_t event_record(uform__gpu_device_t *device, size_t which) {
    uform_status_t status = uform__gpu_check_event(device, which);
    if (status != UFORM_STATUS_OK) return status;
    CU_CALL_(status, device, cu()->cuEventRecord((uform_cuEvent)device->events[which], (uform_cuStream)device->stream),
             "cuEventRecord");
    return status;
}

static uform_status_t event_wait(uform__gpu_device_t *device, size_t which) {
    uform_status_t status = uform__gpu_check_event(device, which);
    if (status != UFORM_STATUS_OK) return status;
    CU_CALL_(status, device, cu()->cuEventSynchronize((uform_cuEvent)device->events[which]), "cuEventSynchronize");
    return status;
}

/* cuStreamSynchronize would wait as the primary context's scheduling says (CU_CTX_SCHED_AUTO:
 * spinning, on a machine with fewer contexts than CPUs), and the context is shared with the
 * caller's runtime, whose flags are not uform's to change: so a blocking event instead. */
static uform_status_t stream_wait(uform__gpu_device_t *device) {
    uform_status_t status;
    CU_CALL_(status, device, cu()->cuEventRecord((uform_cuEvent)device->wait_event, (uform_cuStream)device->stream),
             "cuEventRecord (waiting for the stream)");
    if (status != UFORM_STATUS_OK) return status;
    CU_CALL_(status, device, cu()->cuEventSynchronize((uform_cuEvent)device->wait_event),
             "cuEventSynchronize (waiting for the stream)");
    return status;
}

/* The foreign stream is the caller's (PyTorch's, CuPy's) on this device's primary context: the
 * call runs with that context current, so NULL is its legacy default stream (the entry points
 * bound are the legacy-stream ones), as are CU_STREAM_LEGACY and CU_STREAM_PER_THREAD handles. */
static uform_status_t order_stream(uform__gpu_device_t *device, void *foreign) {
    uform_status_t status;
    CU_CALL_(status, device, cu()->cuEventRecord((uform_cuEvent)device->order_event, (uform_cuStream)device->stream),
             "cuEventRecord (ordering another stream)");
    if (status != UFORM_STATUS_OK) return status;
    CU_CALL_(status, device, cu()->cuStreamWaitEvent((uform_cuStream)foreign, (uform_cuEvent)device->order_event, 0),
             "cuStreamWaitEvent");
    return status;
}

static const uform__gpu_backend_t backend = {
    .name = "CUDA",
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
    .multimem_extent = uform__cuda_multimem_extent,
    .multicast_probe = uform__cuda_multicast_probe,
};

const uform__gpu_backend_t *uform__cuda_backend(uform_status_t *status) {
    uform_status_t ignored;
    if (!status) status = &ignored;
    const uform__cuda_execution_api_t *execution = NULL;
    const uform__cuda_t *loaded = NULL;
    *status = uform__cuda_execution(&execution);
    if (*status == UFORM_STATUS_OK) *status = uform__cuda_get(&loaded);
    if (*status != UFORM_STATUS_OK) return NULL;
    /* A child forked after the driver loaded inherits none of its device state. */
    if (uform__forked_since(loaded->fork_generation)) {
        *status = uform__fail(UFORM_STATUS_UNSUPPORTED,
                              "the CUDA driver was loaded before fork(): this child process cannot use it");
        return NULL;
    }
    atomic_store_explicit(&bound_driver, loaded, memory_order_release);
    atomic_store_explicit(&bound_api, execution, memory_order_release);
    return &backend;
}
