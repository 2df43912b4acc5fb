/* The CUDA driver test double's primary contexts (README.md, "Execution"): retain and release,
 * the calling thread's current context, and synchronising every stream of it. */
#include <pthread.h>
#include <stdatomic.h>

#include "emulated_entry_points.h"
#include "emulated_state.h"

/* cuCtxSetCurrent calls to `fault current=`'s device, counted for that fault. */
static atomic_ulong set_current_calls;

static emulated_context_t *context_of_handle(uform_cuContext handle) {
    emulated_context_t *context = (emulated_context_t *)handle;
    if (context < contexts || context >= contexts + config.device_count) return NULL;
    return context;
}

EXPORT uform_cuResult cuDevicePrimaryCtxRetain(uform_cuContext *handle, uform_cuDevice device) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!handle) return UFORM_CUDA_ERROR_INVALID_VALUE;
    if (!device_of(device)) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    emulated_context_t *context = &contexts[device];
    pthread_mutex_lock(&memory_lock);
    context->retained++;
    pthread_mutex_unlock(&memory_lock);
    *handle = (uform_cuContext)context;
    return UFORM_CUDA_SUCCESS;
}

/* The last release destroys the primary context's state: its work is finished first, then
 * its device memory freed, as the driver does. The handle stays valid for a later retain. */
EXPORT uform_cuResult cuDevicePrimaryCtxRelease_v2(uform_cuDevice device) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!device_of(device)) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    emulated_context_t *context = &contexts[device];
    pthread_mutex_lock(&memory_lock);
    int was_retained = context->retained > 0;
    int last = was_retained && --context->retained == 0;
    pthread_mutex_unlock(&memory_lock);
    if (!was_retained) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    if (!last) return UFORM_CUDA_SUCCESS;
    drain_context(context); /* calls in the context already answer INVALID_CONTEXT */
    end_streams(context);   /* its streams go with it */
    end_events(context);    /* and so do its events */
    pthread_mutex_lock(&memory_lock);
    if (context->retained == 0) /* not retained again meanwhile */
        free_device_allocations(device);
    /* cuMemCreate's physical memory is no context's: it stays until cuMemRelease. */
    pthread_mutex_unlock(&memory_lock);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuCtxSetCurrent(uform_cuContext handle) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!handle) {
        current = NULL;
        return UFORM_CUDA_SUCCESS;
    }
    emulated_context_t *context = context_of_handle(handle);
    if (!context) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    if (config.current_fault && CONTEXT_DEVICE(context) == config.current_fault_ordinal &&
        atomic_fetch_add(&set_current_calls, 1) + 1 == config.current_fault)
        return config.current_result; /* `fault current=` */
    pthread_mutex_lock(&memory_lock);
    int live = context->retained > 0;
    pthread_mutex_unlock(&memory_lock);
    if (!live) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    current = context;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuCtxGetCurrent(uform_cuContext *handle) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!handle) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *handle = (uform_cuContext)current;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuCtxSynchronize(void) {
    ENTER_CONTEXT();
    drain_context(context);
    return atomic_load(&context->sticky);
}
