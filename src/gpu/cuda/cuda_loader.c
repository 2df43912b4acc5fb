/* Loading the CUDA driver at run time, once per process (core/dynamic_library.h). Nothing here
 * links against CUDA: the library is dlopen'ed, its tables bound through cuGetProcAddress_v2 at
 * the ABI versions of cuda_abi.h (plain dlsym of the versioned names on drivers older than 12.0,
 * which lack it), and the devices read once into a snapshot that later calls only read. */
#include <stdbool.h>
#include <stdio.h>

#include "core/dynamic_library.h"
#include "core/error.h"
#include "core/utf8.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/gpu_loader.h"
#include "platform/platform.h"

#define DEFAULT_LIBRARY "libcuda.so.1"

/* The once-per-process, fork-aware load (core/dynamic_library.h); its lock also guards the later
 * binding of the execution and multicast tables through the driver's resolver. */
UFORM__LIBRARY_DEFINE(loader)
static uform__cuda_t cuda;
static bool cuda_has_devices;

/* The driver's own lookup, kept for binding later tables; NULL on drivers older than 12.0. */
static uform_cuGetProcAddress_t driver_get_proc;
/* The resolver met CUDA_ERROR_STUB_LIBRARY: the toolkit's stub, whose every entry answers it. */
static bool driver_is_stub;

/* Records a failure as the process's answer. */
#define fail_load(...) uform__library_fail(&loader, __VA_ARGS__)

const char *uform__cuda_error_name(const uform__cuda_api_t *api, uform_cuResult result, char *buffer,
                                   size_t capacity) {
    const char *name = NULL;
    if (api && api->cuGetErrorName && api->cuGetErrorName(result, &name) == UFORM_CUDA_SUCCESS && name) return name;
    snprintf(buffer, capacity, "CUresult %u", result);
    return buffer;
}

/* uform__library_resolver_t over cuGetProcAddress_v2: the entry's base name at the ABI version of
 * cuda_abi.h, default flags (per-thread default stream semantics are not asked for). */
static void *resolve(void *context, const uform__library_entry_t *entry, char *why, size_t capacity) {
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)context;
    char buffer[32];
    void *pointer = NULL;
    uform_cuProcAddressQueryResult found = UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    uform_cuResult result = get_proc(entry->name, &pointer, entry->version, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (result == UFORM_CUDA_ERROR_STUB_LIBRARY) driver_is_stub = true;
    /* Drivers answer a missing symbol either with an error or with SUCCESS and NULL. */
    if (result != UFORM_CUDA_SUCCESS || !pointer || found != UFORM_CU_GET_PROC_ADDRESS_SUCCESS) {
        snprintf(why, capacity, " (ABI of CUDA %d.%d): cuGetProcAddress answered %s, %s", entry->version / 1000,
                 entry->version % 1000 / 10, uform__cuda_error_name(&cuda.api, result, buffer, sizeof buffer),
                 found == UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "version not sufficient"
                                                                           : "symbol not found");
        return NULL;
    }
    return pointer;
}

/* cuda_abi.h's lists as binding tables. */
#define DISCOVERY_ENTRY_(field, base, version, symbol, type)                                           UFORM__LIBRARY_ENTRY(uform__cuda_api_t, field, base, version, symbol, false)
#define EXECUTION_ENTRY_(field, base, version, symbol, type)                                           UFORM__LIBRARY_ENTRY(uform__cuda_execution_api_t, field, base, version, symbol, false)
static const uform__library_entry_t discovery_entries[] = {UFORM_CUDA_ENTRY_POINTS(DISCOVERY_ENTRY_)};
static const uform__library_entry_t execution_entries[] = {UFORM_CUDA_EXECUTION_ENTRY_POINTS(EXECUTION_ENTRY_)};
#define PEER_ENTRY_(field, base, version, symbol, type)                                            \
    UFORM__LIBRARY_ENTRY(uform__cuda_peer_api_t, field, base, version, symbol, true)
static const uform__library_entry_t peer_entries[] = {
    PEER_ENTRY_(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", 4000, "cuDeviceCanAccessPeer", unused)
        UFORM_CUDA_PEER_ENTRY_POINTS(PEER_ENTRY_)};

uform_status_t uform__cuda_bind_once(uform__library_table_t *state, const uform__library_entry_t *entries,
                                     size_t count, void *table, size_t table_size) {
    const uform__cuda_t *driver = NULL;
    uform_status_t status = uform__cuda_get(&driver);
    if (status != UFORM_STATUS_OK) return status;
    if (!driver) return uform__fail(UFORM_STATUS_NOT_FOUND, "no CUDA device: %s", loader.note);
    return uform__library_bind_once(&loader, state, "the CUDA driver", driver_get_proc ? resolve : NULL,
                                    (void *)driver_get_proc, entries, count, table, table_size);
}

/* A driver call that must succeed while reading the devices; DEVICE_FAULT names it. */
#define QUERY_(call, what, ordinal)                                                                \
    do {                                                                                           \
        uform_cuResult result_ = (call);                                                           \
        if (result_ != UFORM_CUDA_SUCCESS) {                                                       \
            char buffer_[32];                                                                      \
            return fail_load(UFORM_STATUS_DEVICE_FAULT, "%s for CUDA device %d: %s", what, ordinal, \
                             uform__cuda_error_name(&cuda.api, result_, buffer_, sizeof buffer_)); \
        }                                                                                          \
    } while (0)

static uform_status_t read_device(int ordinal, void *element) {
    uform__cuda_device_t *device = element;
    const uform__cuda_api_t *api = &cuda.api;
    QUERY_(api->cuDeviceGet(&device->handle, ordinal), "cuDeviceGet", ordinal);
    uform_cuDevice handle = device->handle;
    QUERY_(api->cuDeviceGetName(device->name, (int)sizeof device->name, handle), "cuDeviceGetName", ordinal);
    uform__utf8_cut(device->name, sizeof device->name);
    size_t bytes = 0;
    QUERY_(api->cuDeviceTotalMem(&bytes, handle), "cuDeviceTotalMem_v2", ordinal);
    device->memory_bytes = bytes;
    int value = 0;
    QUERY_(api->cuDeviceGetAttribute(&value, UFORM_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle),
           "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", ordinal);
    device->multiprocessors = value > 0 ? (uint32_t)value : 0;
    QUERY_(api->cuDeviceGetAttribute(&device->compute_major, UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                     handle),
           "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", ordinal);
    QUERY_(api->cuDeviceGetAttribute(&device->compute_minor, UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                     handle),
           "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", ordinal);
    /* The bus id string carries the function number the attributes lack; the attributes
     * stand in where the string does not parse. */
    char bus_id[64] = {0};
    QUERY_(api->cuDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, handle), "cuDeviceGetPCIBusId", ordinal);
    if (!uform__gpu_parse_pci_bus_id(bus_id, &device->pci_domain, &device->pci_bus, &device->pci_device,
                                     &device->pci_function)) {
        int attribute = 0;
        QUERY_(api->cuDeviceGetAttribute(&attribute, UFORM_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, handle),
               "cuDeviceGetAttribute(PCI_DOMAIN_ID)", ordinal);
        device->pci_domain = (uint32_t)attribute;
        QUERY_(api->cuDeviceGetAttribute(&attribute, UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, handle),
               "cuDeviceGetAttribute(PCI_BUS_ID)", ordinal);
        device->pci_bus = (uint32_t)attribute;
        QUERY_(api->cuDeviceGetAttribute(&attribute, UFORM_CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, handle),
               "cuDeviceGetAttribute(PCI_DEVICE_ID)", ordinal);
        device->pci_device = (uint32_t)attribute;
        device->pci_function = 0;
    }
    return UFORM_STATUS_OK;
}

static int pci_order(const void *a, const void *b) {
    const uform__cuda_device_t *x = a, *y = b;
    return uform__gpu_pci_order(UFORM__GPU_PCI_ADDRESS(x), UFORM__GPU_PCI_ADDRESS(y), x->handle, y->handle);
}

static uform_status_t load(void) {
    static const char *const candidates[] = {DEFAULT_LIBRARY, NULL};
    if (!uform__library_open_first(&loader, "CUDA driver", "UFORM_CUDA_LIBRARY", candidates)) return UFORM_STATUS_OK;
    /* The library stays loaded for the process's life: executors will call into it, and
     * unloading a GPU driver is not something drivers support. */
    const char *path = loader.path;
    driver_get_proc = (uform_cuGetProcAddress_t)uform__library_symbol(loader.handle, "cuGetProcAddress_v2");
    char why[512];
    uform_status_t status = uform__library_bind(&loader, "the CUDA driver", driver_get_proc ? resolve : NULL,
                                                (void *)driver_get_proc, discovery_entries,
                                                sizeof discovery_entries / sizeof discovery_entries[0], &cuda.api,
                                                sizeof cuda.api, why, sizeof why);
    /* The toolkit's stub libcuda (lib64/stubs, for linking where there is no driver) answers
     * CUDA_ERROR_STUB_LIBRARY from every entry, cuGetProcAddress_v2 included: no driver here,
     * which is zero devices, never an error. */
    if (driver_is_stub) {
        uform__library_note(&loader, "CUDA stub library, no driver: %s is the CUDA toolkit's stub (cuGetProcAddress: "
                            "CUDA_ERROR_STUB_LIBRARY)", path);
        return UFORM_STATUS_OK;
    }
    if (status != UFORM_STATUS_OK) return fail_load(status, "%s", why);
    char buffer[32];
    if (cuda.api.cuDriverGetVersion(&cuda.driver_version) != UFORM_CUDA_SUCCESS) cuda.driver_version = 0;
    cuda.fork_generation = loader.generation;
    uform_cuResult result = cuda.api.cuInit(0);
    if (result == UFORM_CUDA_ERROR_NO_DEVICE) {
        uform__library_note(&loader, "the CUDA driver %s sees no device (cuInit: %s)", path,
                            uform__cuda_error_name(&cuda.api, result, buffer, sizeof buffer));
        return UFORM_STATUS_OK;
    }
    /* A stub whose lookup binds (one without cuGetProcAddress_v2, found by dlsym) still answers
     * cuInit with CUDA_ERROR_STUB_LIBRARY. */
    if (result == UFORM_CUDA_ERROR_STUB_LIBRARY) {
        uform__library_note(&loader, "CUDA stub library, no driver: %s is the CUDA toolkit's stub (cuInit: %s)", path,
                            uform__cuda_error_name(&cuda.api, result, buffer, sizeof buffer));
        return UFORM_STATUS_OK;
    }
    if (result != UFORM_CUDA_SUCCESS)
        return fail_load(UFORM_STATUS_DEVICE_FAULT, "cuInit of the CUDA driver %s failed: %s", path,
                         uform__cuda_error_name(&cuda.api, result, buffer, sizeof buffer));
    int count = 0;
    result = cuda.api.cuDeviceGetCount(&count);
    if (result != UFORM_CUDA_SUCCESS)
        return fail_load(UFORM_STATUS_DEVICE_FAULT, "cuDeviceGetCount: %s",
                         uform__cuda_error_name(&cuda.api, result, buffer, sizeof buffer));
    if (count <= 0) {
        uform__library_note(&loader, "the CUDA driver %s sees no device", path);
        return UFORM_STATUS_OK;
    }
    /* nvidia-smi's order, whatever CUDA_DEVICE_ORDER made the driver's ordinals. */
    void *devices = NULL;
    status = uform__gpu_read_devices(&loader, "CUDA", count, sizeof(uform__cuda_device_t), read_device, pci_order, &devices);
    if (status != UFORM_STATUS_OK) return status;
    cuda.devices = devices;
    cuda.device_count = (size_t)count;
    cuda_has_devices = true;
    return UFORM_STATUS_OK;
}

uform_status_t uform__cuda_get(const uform__cuda_t **out) {
    if (!out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform__cuda_get: output is NULL");
    *out = NULL;
    uform_status_t status = uform__library_load_once(&loader, load, &cuda.api, sizeof cuda.api);
    if (status == UFORM_STATUS_OK && cuda_has_devices) *out = &cuda;
    return status;
}

uform_status_t uform__cuda_execution(const uform__cuda_execution_api_t **out) {
    static uform__cuda_execution_api_t execution;
    static uform__library_table_t state;
    *out = NULL;
    uform_status_t status = uform__cuda_bind_once(&state, execution_entries,
                                                  sizeof execution_entries / sizeof execution_entries[0], &execution,
                                                  sizeof execution);
    if (status == UFORM_STATUS_OK) *out = &execution;
    return status;
}

uform_status_t uform__cuda_peers(const uform__cuda_peer_api_t **out) {
    static uform__cuda_peer_api_t peers;
    static uform__library_table_t state;
    *out = NULL;
    uform_status_t status = uform__cuda_bind_once(&state, peer_entries, sizeof peer_entries / sizeof peer_entries[0],
                                                  &peers, sizeof peers);
    if (status == UFORM_STATUS_OK) *out = &peers;
    return status;
}

const uform__library_t *uform__cuda_library(void) {
    const uform__cuda_t *ignored;
    uform__cuda_get(&ignored);
    return &loader;
}

const char *uform__cuda_note(void) {
    const uform__cuda_t *ignored;
    uform__cuda_get(&ignored);
    return loader.note;
}
