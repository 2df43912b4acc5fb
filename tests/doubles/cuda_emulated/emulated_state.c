/* The CUDA driver test double's shared state (emulated_state.h): the configuration, loaded once,
 * the driver's ordinals, the primary contexts and the checks entry points start with. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/double_config.h"
#include "emulated_state.h"

emulated_config_t config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
atomic_int initialized;
size_t order[EMULATED_MAX_DEVICES];

emulated_context_t contexts[EMULATED_MAX_DEVICES];
__thread emulated_context_t *current;

pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t device_used[EMULATED_MAX_DEVICES];

static int pci_before(const emulated_device_t *a, const emulated_device_t *b) {
    unsigned ka[4] = {a->pci_domain, a->pci_bus, a->pci_device, a->pci_function};
    unsigned kb[4] = {b->pci_domain, b->pci_bus, b->pci_device, b->pci_function};
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i]) return ka[i] < kb[i];
    return 0;
}

static void load_config(void) {
    char *owned = NULL;
    const char *unreadable = NULL;
    const char *text = double_config_text("UFORM_CUDA_DOUBLE_CONFIG", 1 << 20, &owned, &unreadable);
    if (text || unreadable) emulated_config_parse(text, &config);
    if (unreadable) snprintf(config.error, sizeof config.error, "cannot read %s", unreadable);
    free(owned);
    if (config.error[0]) fprintf(stderr, "CUDA driver test double: configuration refused: %s\n", config.error);
    for (size_t i = 0; i < config.device_count; i++) order[i] = i;
    const char *device_order = getenv("CUDA_DEVICE_ORDER");
    if (device_order && strcmp(device_order, "PCI_BUS_ID") == 0)
        for (size_t i = 1; i < config.device_count; i++)
            for (size_t j = i; j > 0 && pci_before(&config.devices[order[j]], &config.devices[order[j - 1]]); j--) {
                size_t swap = order[j];
                order[j] = order[j - 1];
                order[j - 1] = swap;
            }
}

const emulated_config_t *configuration(void) {
    pthread_once(&config_once, load_config);
    return &config;
}

/* The device behind a handle, or NULL (INVALID_DEVICE). */
const emulated_device_t *device_of(uform_cuDevice handle) {
    if (handle < 0 || (size_t)handle >= config.device_count) return NULL;
    return &config.devices[order[handle]];
}

/* A query of one device checks in the driver's order: initialised, somewhere to write the
 * answer, then the device. */
uform_cuResult open_query(uform_cuDevice handle, int has_output, const emulated_device_t **device) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!has_output) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *device = device_of(handle);
    return *device ? UFORM_CUDA_SUCCESS : UFORM_CUDA_ERROR_INVALID_DEVICE;
}

/* Calls that work in the current context start here: initialised, a current context that is
 * still retained, and no sticky error in it. */
uform_cuResult enter_context(emulated_context_t **out) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    emulated_context_t *context = current;
    if (!context) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&memory_lock);
    int live = context->retained > 0;
    pthread_mutex_unlock(&memory_lock);
    if (!live) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    unsigned sticky = atomic_load(&context->sticky);
    if (sticky) return sticky;
    *out = context;
    return UFORM_CUDA_SUCCESS;
}

