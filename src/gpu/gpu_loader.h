/* Internal: what the GPU loaders (cuda/cuda_loader.c, hip/hip_loader.c) share. Each loads its
 * vendor's library once per process under a mutex that the fork handlers hold across fork(), so
 * a child sees either a finished load or none, never half of one; and each lists its devices in
 * PCI bus order. The vendor's own load, entry-point binding and device reading stay with it. */
#ifndef UFORM_GPU_GPU_LOADER_H
#define UFORM_GPU_GPU_LOADER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "uform/status.h"

/** A once-per-process load: its lock, whether it ran, and its answer. Define one per loader with
 *  UFORM__GPU_LOAD_DEFINE. Discovery is no hot path, so every call takes the lock rather than
 *  racing on a flag. */
typedef struct uform__gpu_load_t {
    pthread_mutex_t lock;                 /**< held by the load, by the fork handlers, and by later binding */
    pthread_once_t fork_handlers_once;
    void (*install_fork_handlers)(void);  /**< pthread_atfork of handlers that hold `lock` */
    bool loaded;
    uform_status_t status;                /**< the load's answer, the process's from then on */
    char message[512];                    /**< a failed load's message */
    char note[512];                       /**< why there are no devices, in words; "" when there are */
} uform__gpu_load_t;

/** Defines `static uform__gpu_load_t name` with fork handlers of its own (pthread_atfork takes
 *  no argument, so each load needs its own pair). */
#define UFORM__GPU_LOAD_DEFINE(name)                                                               \
    static void name##_install_fork_handlers_(void);                                               \
    static uform__gpu_load_t name = {.lock = PTHREAD_MUTEX_INITIALIZER,                            \
                                     .fork_handlers_once = PTHREAD_ONCE_INIT,                      \
                                     .install_fork_handlers = name##_install_fork_handlers_};      \
    static void name##_before_fork_(void) { pthread_mutex_lock(&name.lock); }                      \
    static void name##_after_fork_(void) { pthread_mutex_unlock(&name.lock); }                     \
    static void name##_install_fork_handlers_(void) {                                              \
        pthread_atfork(name##_before_fork_, name##_after_fork_, name##_after_fork_);               \
    }

/**
 * Runs `load` on the first call, under the lock (fork handlers installed first); when it fails,
 * zeroes the `clear_size` bytes at `clear` (the bound entry points), so nothing calls a half-bound
 * library. From then on answers the load's status: OK, or the failure with its message (through
 * uform__fail). What `load` wrote is safe to read after an OK answer.
 */
uform_status_t uform__gpu_load_once(uform__gpu_load_t *once, uform_status_t (*load)(void), void *clear,
                                    size_t clear_size);

/** Records a failure as the process's answer: the message, also as the note. Answers `status`. */
UFORM_PRINTF_(3, 4) uform_status_t uform__gpu_load_fail(uform__gpu_load_t *once, uform_status_t status,
                                                        const char *format, ...);

/** A device's PCI address as uform__gpu_pci_order takes it; `device` has pci_domain, pci_bus,
 *  pci_device and pci_function fields. */
#define UFORM__GPU_PCI_ADDRESS(device)                                                             \
    ((const uint32_t[4]){(device)->pci_domain, (device)->pci_bus, (device)->pci_device, (device)->pci_function})

/** qsort order of two devices by PCI address (domain, bus, device, function). Equal addresses
 *  cannot happen on real hardware; the vendor's order (its handles) is kept then. */
int uform__gpu_pci_order(const uint32_t x[4], const uint32_t y[4], int x_handle, int y_handle);

/** Parses a PCI bus id ("0000:19:00.0", hexadecimal) into the four fields; false, writing
 *  nothing, when it does not parse. */
bool uform__gpu_parse_pci_bus_id(const char *bus_id, uint32_t *domain, uint32_t *bus, uint32_t *device,
                                 uint32_t *function);

#endif
