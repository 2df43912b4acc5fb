/* What both backends share (gpu_call.h). */
#include "gpu/gpu_call.h"

#include <stdarg.h>
#include <stdio.h>

uform_status_t uform__gpu_fail(uform__gpu_device_t *device, uform__gpu_error_t kind, const char *error_name,
                               const char *what, ...) {
    char call[200];
    va_list args;
    va_start(args, what);
    vsnprintf(call, sizeof call, what, args);
    va_end(args);
    uform_status_t status = UFORM_STATUS_DEVICE_FAULT;
    if (kind == UFORM__GPU_ERROR_OUT_OF_MEMORY)
        status = UFORM_STATUS_OUT_OF_MEMORY;
    else if (kind == UFORM__GPU_ERROR_INVALID)
        status = UFORM_STATUS_INVALID_ARGUMENT;
    else if (kind == UFORM__GPU_ERROR_STICKY)
        atomic_store(&device->faulted, true);
    return uform__fail(status, "%s on GPU %d (%s device %d) answered %s", call, (int)device->ordinal,
                       device->backend ? device->backend->name : "GPU", (int)device->native_device, error_name);
}

void uform__gpu_explain(char *why, size_t capacity, const char *format, ...) {
    if (!why || !capacity) return;
    va_list args;
    va_start(args, format);
    vsnprintf(why, capacity, format, args);
    va_end(args);
}

uform_status_t uform__gpu_refuse_empty(const uform__gpu_device_t *device, size_t bytes, const char *kind) {
    if (bytes) return UFORM_STATUS_OK;
    return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s allocation of 0 bytes on GPU %d (%s device %d)", kind,
                       (int)device->ordinal, device->backend ? device->backend->name : "GPU",
                       (int)device->native_device);
}

uform_status_t uform__gpu_check_event(const uform__gpu_device_t *device, size_t which) {
    if (which < UFORM_STAGING_BUFFERS) return UFORM_STATUS_OK;
    return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "GPU %d has no event %zu (%d per device)", (int)device->ordinal,
                       which, UFORM_STAGING_BUFFERS);
}

bool uform__gpu_range_pinned(const void *host, size_t bytes, bool (*pinned_at)(const void *address)) {
    if (!host) return false;
    if (!bytes) return pinned_at(host);
    return pinned_at(host) && pinned_at((const char *)host + (bytes - 1));
}

uform_status_t uform__gpu_enter(const uform__gpu_current_t *current, uform__gpu_device_t *device,
                                uform__gpu_scope_t *scope) {
    scope->previous = 0;
    scope->switched = false;
    intptr_t previous = 0;
    uform_status_t status = current->check(device, current->get(&previous), current->get_name);
    if (status != UFORM_STATUS_OK) return status;
    scope->previous = previous;
    intptr_t own = current->of(device);
    if (previous == own) return UFORM_STATUS_OK;
    status = current->check(device, current->set(own), current->set_name);
    if (status == UFORM_STATUS_OK) scope->switched = true;
    return status;
}

bool uform__gpu_enter_quietly(const uform__gpu_current_t *current, uform__gpu_device_t *device,
                              uform__gpu_scope_t *scope) {
    scope->previous = 0;
    scope->switched = false;
    intptr_t previous = 0;
    intptr_t own = current->of(device);
    if (current->get(&previous) != 0) return current->set(own) == 0;
    scope->previous = previous;
    if (previous == own) return true;
    scope->switched = current->set(own) == 0;
    return scope->switched;
}

void uform__gpu_leave(const uform__gpu_current_t *current, const uform__gpu_scope_t *scope) {
    if (scope->switched) (void)current->set(scope->previous);
}
