/* A test double of the CUDA driver's ABI (libcuda.so.1), emulated on the host: the entry
 * points uform binds, with the driver's documented semantics (NOT_INITIALIZED before cuInit,
 * INVALID_DEVICE for a bad ordinal, INVALID_VALUE for NULL outputs, cuGetProcAddress by
 * version and flags), over the devices and faults UFORM_CUDA_DOUBLE_CONFIG describes. Tests
 * load it through UFORM_CUDA_LIBRARY. It never stands in for a real GPU check.
 *
 * Built twice: as is, a CUDA 12+ driver; with EMULATED_LEGACY_DRIVER, a driver older than 12.0
 * that exports no cuGetProcAddress_v2 (so loaders must fall back to dlsym). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulated_config.h"
#include "emulated_errors.h"
#include "gpu/cuda_abi.h"

#define EXPORT __attribute__((visibility("default")))

static emulated_config_t config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static atomic_int initialized; /* cuInit succeeded */
/* The driver's ordinals: the configuration's order (FASTEST_FIRST), or PCI order when
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, as the real driver reads that variable at cuInit. */
static size_t order[EMULATED_MAX_DEVICES];

static char *read_file(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) return NULL;
    char *text = calloc(1, 1 << 20);
    if (text) text[fread(text, 1, (1 << 20) - 1, file)] = '\0';
    fclose(file);
    return text;
}

static int pci_before(const emulated_device_t *a, const emulated_device_t *b) {
    unsigned ka[4] = {a->pci_domain, a->pci_bus, a->pci_device, a->pci_function};
    unsigned kb[4] = {b->pci_domain, b->pci_bus, b->pci_device, b->pci_function};
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i]) return ka[i] < kb[i];
    return 0;
}

static void load_config(void) {
    const char *text = getenv("UFORM_CUDA_DOUBLE_CONFIG");
    char *owned = NULL;
    if (text && text[0] == '@') {
        owned = read_file(text + 1);
        if (!owned) {
            emulated_config_parse(NULL, &config);
            snprintf(config.error, sizeof config.error, "cannot read %s", text + 1);
        }
        text = owned;
    }
    if (text) emulated_config_parse(text, &config);
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

static const emulated_config_t *configuration(void) {
    pthread_once(&config_once, load_config);
    return &config;
}

/* The device behind a handle, or NULL (INVALID_DEVICE). */
static const emulated_device_t *device_of(uform_cuDevice handle) {
    if (handle < 0 || (size_t)handle >= config.device_count) return NULL;
    return &config.devices[order[handle]];
}

/* Every device query starts here: NOT_INITIALIZED before a successful cuInit. */
#define REQUIRE_INITIALIZED()                                                                      \
    do {                                                                                           \
        if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;                  \
    } while (0)

/* A query of one device checks in the driver's order: initialised, somewhere to write the
 * answer, then the device. */
static uform_cuResult open_query(uform_cuDevice handle, int has_output, const emulated_device_t **device) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!has_output) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *device = device_of(handle);
    return *device ? UFORM_CUDA_SUCCESS : UFORM_CUDA_ERROR_INVALID_DEVICE;
}

/* Declares `device` for the query's body, or returns what open_query answered. */
#define OPEN_QUERY(handle, has_output)                                                             \
    const emulated_device_t *device = NULL;                                                        \
    do {                                                                                           \
        uform_cuResult result_ = open_query(handle, has_output, &device);                          \
        if (result_ != UFORM_CUDA_SUCCESS) return result_;                                         \
    } while (0)

EXPORT uform_cuResult cuDriverGetVersion(int *version) {
    if (!version) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *version = configuration()->driver_version;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuInit(unsigned int flags) {
    const emulated_config_t *c = configuration();
    if (flags != 0) return UFORM_CUDA_ERROR_INVALID_VALUE;
    if (c->error[0]) return UFORM_CUDA_ERROR_UNKNOWN; /* a refused configuration is no machine */
    if (c->init_result) return c->init_result;
    if (!c->device_count) return UFORM_CUDA_ERROR_NO_DEVICE;
    atomic_store(&initialized, 1);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuDeviceGetCount(int *count) {
    REQUIRE_INITIALIZED();
    if (!count) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *count = (int)config.device_count;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuDeviceGet(uform_cuDevice *device, int ordinal) {
    const emulated_device_t *found = NULL;
    uform_cuResult result = open_query(ordinal, device != NULL, &found);
    if (result != UFORM_CUDA_SUCCESS) return result;
    *device = ordinal;
    return UFORM_CUDA_SUCCESS;
}

/* As the driver does: the name's bytes up to length - 1, terminated, even mid-character. */
EXPORT uform_cuResult cuDeviceGetName(char *name, int length, uform_cuDevice handle) {
    OPEN_QUERY(handle, name && length > 0);
    snprintf(name, (size_t)length, "%s", device->name);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuDeviceTotalMem_v2(size_t *bytes, uform_cuDevice handle) {
    OPEN_QUERY(handle, bytes != NULL);
    *bytes = (size_t)device->memory_bytes;
    return UFORM_CUDA_SUCCESS;
}

/* The CUDA 2.0 ABI, 32-bit: what cuGetProcAddress answers for versions below 3.2. */
EXPORT uform_cuResult cuDeviceTotalMem(unsigned int *bytes, uform_cuDevice handle) {
    size_t wide = 0;
    uform_cuResult result = cuDeviceTotalMem_v2(bytes ? &wide : NULL, handle);
    if (result == UFORM_CUDA_SUCCESS) *bytes = wide > 0xFFFFFFFFu ? 0xFFFFFFFFu : (unsigned int)wide;
    return result;
}

EXPORT uform_cuResult cuDeviceGetAttribute(int *value, uform_cuDeviceAttribute attribute, uform_cuDevice handle) {
    OPEN_QUERY(handle, value != NULL);
    switch (attribute) {
    case UFORM_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = device->multiprocessors; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *value = (int)device->pci_bus; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *value = (int)device->pci_device; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *value = (int)device->pci_domain; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = device->compute_major; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = device->compute_minor; break;
    default: return UFORM_CUDA_ERROR_INVALID_VALUE; /* an attribute this double does not emulate */
    }
    return UFORM_CUDA_SUCCESS;
}

/* "0000:3B:00.0": the driver's spelling, upper-case hex, cut to `length` as it does. */
EXPORT uform_cuResult cuDeviceGetPCIBusId(char *bus_id, int length, uform_cuDevice handle) {
    OPEN_QUERY(handle, bus_id && length > 0);
    snprintf(bus_id, (size_t)length, "%04X:%02X:%02X.%X", device->pci_domain, device->pci_bus, device->pci_device,
             device->pci_function);
    return UFORM_CUDA_SUCCESS;
}

/* Works before cuInit, as the driver's does. */
EXPORT uform_cuResult cuGetErrorName(uform_cuResult error, const char **name) {
    if (!name) return UFORM_CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define CASE_(text, number)                                                                        \
    case number: *name = #text; return UFORM_CUDA_SUCCESS;
        EMULATED_CUDA_ERRORS(CASE_)
#undef CASE_
    }
    *name = NULL;
    return UFORM_CUDA_ERROR_INVALID_VALUE;
}

#if !EMULATED_LEGACY_DRIVER
/* What cuGetProcAddress resolves: a base name, the CUDA version whose ABI a function has, and
 * the function. For one name, rows go oldest first. */
typedef struct entry_t {
    const char *base;
    int version;
    void *function;
} entry_t;

static const entry_t entries[] = {
    {"cuDriverGetVersion", 2020, (void *)cuDriverGetVersion},
    {"cuInit", 2000, (void *)cuInit},
    {"cuDeviceGetCount", 2000, (void *)cuDeviceGetCount},
    {"cuDeviceGet", 2000, (void *)cuDeviceGet},
    {"cuDeviceGetName", 2000, (void *)cuDeviceGetName},
    {"cuDeviceTotalMem", 2000, (void *)cuDeviceTotalMem},
    {"cuDeviceTotalMem", 3020, (void *)cuDeviceTotalMem_v2},
    {"cuDeviceGetAttribute", 2000, (void *)cuDeviceGetAttribute},
    {"cuDeviceGetPCIBusId", 4010, (void *)cuDeviceGetPCIBusId},
    {"cuGetErrorName", 6000, (void *)cuGetErrorName},
};

static uform_cuResult get_proc_address(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
                                       uform_cuProcAddressQueryResult *status) {
    const emulated_config_t *c = configuration();
    if (!symbol || !pfn) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (flags > (UFORM_CU_GET_PROC_ADDRESS_LEGACY_STREAM | UFORM_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    if (cuda_version <= 0 || cuda_version > c->driver_version) return UFORM_CUDA_ERROR_INVALID_VALUE;
    int hidden = 0;
    for (size_t i = 0; i < c->missing_count; i++) hidden |= strcmp(c->missing[i], symbol) == 0;
    int known = 0;
    const entry_t *best = NULL;
    for (size_t i = 0; !hidden && i < sizeof entries / sizeof entries[0]; i++)
        if (strcmp(entries[i].base, symbol) == 0) {
            known = 1;
            if (entries[i].version <= cuda_version) best = &entries[i];
        }
    if (!best) {
        /* cuda.h (CUDA 12+): "The API will return CUDA_SUCCESS and set the returned pfn to NULL
         * if the requested driver function is not supported on the platform, no ABI compatible
         * driver function exists for the specified cudaVersion or if the driver symbol is
         * invalid", with the reason in symbolStatus. */
        if (status)
            *status = known ? UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return UFORM_CUDA_SUCCESS;
    }
    *pfn = best->function;
    if (status) *status = UFORM_CU_GET_PROC_ADDRESS_SUCCESS;
    return UFORM_CUDA_SUCCESS;
}

/* CUDA 12.0's signature; cuda.h maps cuGetProcAddress to this symbol. */
EXPORT uform_cuResult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
                                          uform_cuProcAddressQueryResult *status) {
    return get_proc_address(symbol, pfn, cuda_version, flags, status);
}

/* CUDA 11.3's signature, still exported under the plain name. */
EXPORT uform_cuResult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version, uint64_t flags) {
    return get_proc_address(symbol, pfn, cuda_version, flags, NULL);
}
#endif
