/* What the GPU loaders share (gpu_loader.h): the once-per-process, fork-aware load and the PCI
 * bus order. */
#include "gpu/gpu_loader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

uform_status_t uform__gpu_load_once(uform__gpu_load_t *once, uform_status_t (*load)(void), void *clear,
                                    size_t clear_size) {
    pthread_once(&once->fork_handlers_once, once->install_fork_handlers);
    pthread_mutex_lock(&once->lock);
    if (!once->loaded) {
        once->status = load();
        if (once->status != UFORM_STATUS_OK) memset(clear, 0, clear_size);
        once->loaded = true;
    }
    uform_status_t status = once->status;
    pthread_mutex_unlock(&once->lock);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", once->message);
    return UFORM_STATUS_OK;
}

uform_status_t uform__gpu_load_fail(uform__gpu_load_t *once, uform_status_t status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(once->message, sizeof once->message, format, args);
    va_end(args);
    snprintf(once->note, sizeof once->note, "%s", once->message);
    return status;
}

int uform__gpu_pci_order(const uint32_t x[4], const uint32_t y[4], int x_handle, int y_handle) {
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return x_handle < y_handle ? -1 : x_handle > y_handle;
}

bool uform__gpu_parse_pci_bus_id(const char *bus_id, uint32_t *domain, uint32_t *bus, uint32_t *device,
                                 uint32_t *function) {
    unsigned parsed[4];
    if (sscanf(bus_id, "%x:%x:%x.%x", &parsed[0], &parsed[1], &parsed[2], &parsed[3]) != 4) return false;
    *domain = parsed[0];
    *bus = parsed[1];
    *device = parsed[2];
    *function = parsed[3];
    return true;
}
