/* Loading the CUDA driver at run time, once per process. Nothing here links against CUDA:
 * the library is dlopen'ed, its entry points bound through cuGetProcAddress_v2 at the ABI
 * versions of cuda_abi.h (plain dlsym of the versioned names on drivers older than 12.0,
 * which lack it), and the devices read once into a snapshot that later calls only read. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/memory.h"
#include "core/utf8.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/gpu_loader.h"
#include "platform/platform.h"

#define DEFAULT_LIBRARY "libcuda.so.1"

/* The once-per-process, fork-aware load (gpu_loader.h); its lock also guards the later binding of
 * execution and optional entry points through `driver_get_proc`. */
UFORM__GPU_LOAD_DEFINE(loader)
static uform__cuda_t cuda;
static bool cuda_has_devices;

/* Records a failure as the process's answer. */
#define fail_load(...) uform__gpu_load_fail(&loader, __VA_ARGS__)

const char *uform__cuda_error_name(const uform__cuda_api_t *api, uform_cuResult result, char *buffer,
                                   size_t capacity) {
    const char *name = NULL;
    if (api && api->cuGetErrorName && api->cuGetErrorName(result, &name) == UFORM_CUDA_SUCCESS && name) return name;
    snprintf(buffer, capacity, "CUresult %u", result);
    return buffer;
}

/* The library and its resolver, kept for binding the execution entry points later. */
static void *driver_library;
static uform_cuGetProcAddress_t driver_get_proc;
static const char *driver_path;

/* Resolves one entry point: through cuGetProcAddress_v2 at the ABI version where the driver has
 * it, else dlsym of the versioned symbol. UNSUPPORTED, written to `message`, names what lacks. */
static uform_status_t resolve(const char *base, int version, const char *symbol, void **out, char *message,
                              size_t capacity) {
    char buffer[32];
    void *pointer = NULL;
    if (driver_get_proc) {
        uform_cuProcAddressQueryResult found = UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        uform_cuResult result = driver_get_proc(base, &pointer, version, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found);
        /* Drivers answer a missing symbol either with an error or with SUCCESS and NULL. */
        if (result != UFORM_CUDA_SUCCESS || !pointer || found != UFORM_CU_GET_PROC_ADDRESS_SUCCESS) {
            snprintf(message, capacity, "the CUDA driver %s lacks %s (ABI of CUDA %d.%d): cuGetProcAddress answered %s, %s",
                     driver_path, symbol, version / 1000, version % 1000 / 10,
                     uform__cuda_error_name(&cuda.api, result, buffer, sizeof buffer),
                     found == UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "version not sufficient"
                                                                               : "symbol not found");
            return UFORM_STATUS_UNSUPPORTED;
        }
    } else {
        pointer = uform__library_symbol(driver_library, symbol);
        if (!pointer) {
            snprintf(message, capacity, "the CUDA driver %s lacks %s: %s", driver_path, symbol, uform__library_error());
            return UFORM_STATUS_UNSUPPORTED;
        }
    }
    *out = pointer;
    return UFORM_STATUS_OK;
}

/* Binds every discovery entry point; UNSUPPORTED names the first one the driver lacks. */
static uform_status_t bind(void *library, const char *path) {
    driver_library = library;
    driver_path = path;
    driver_get_proc = (uform_cuGetProcAddress_t)uform__library_symbol(library, "cuGetProcAddress_v2");
#define BIND_(field, base, version, symbol, type)                                                 \
    {                                                                                              \
        void *pointer = NULL;                                                                      \
        char why_[400];                                                                            \
        uform_status_t status_ = resolve(base, version, symbol, &pointer, why_, sizeof why_);      \
        if (status_ != UFORM_STATUS_OK) return fail_load(status_, "%s", why_);                     \
        cuda.api.field = (type)pointer;                                                            \
    }
    UFORM_CUDA_ENTRY_POINTS(BIND_)
#undef BIND_
    return UFORM_STATUS_OK;
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

static uform_status_t read_device(int ordinal, uform__cuda_device_t *device) {
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
    /* The library name is read once, with the load; later changes are not seen. */
    const char *path = getenv("UFORM_CUDA_LIBRARY");
    if (!path || !*path) path = DEFAULT_LIBRARY;
    void *library = uform__library_open(path);
    if (!library) {
        snprintf(loader.note, sizeof loader.note, "no CUDA driver: %s", uform__library_error());
        return UFORM_STATUS_OK;
    }
    /* The library stays loaded for the process's life: executors will call into it, and
     * unloading a GPU driver is not something drivers support. */
    uform_status_t status = bind(library, path);
    if (status != UFORM_STATUS_OK) return status;
    char buffer[32];
    if (cuda.api.cuDriverGetVersion(&cuda.driver_version) != UFORM_CUDA_SUCCESS) cuda.driver_version = 0;
    cuda.fork_generation = uform__fork_generation();
    uform_cuResult result = cuda.api.cuInit(0);
    if (result == UFORM_CUDA_ERROR_NO_DEVICE) {
        snprintf(loader.note, sizeof loader.note, "the CUDA driver %s sees no device (cuInit: %s)", path,
                 uform__cuda_error_name(&cuda.api, result, buffer, sizeof buffer));
        return UFORM_STATUS_OK;
    }
    /* The toolkit's stub libcuda (for linking on machines without a driver) found first on the
     * library path: there is no driver here, which is zero devices, never an error. */
    if (result == UFORM_CUDA_ERROR_STUB_LIBRARY) {
        snprintf(loader.note, sizeof loader.note, "%s is the CUDA toolkit's stub, not a driver (cuInit: %s)", path,
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
        snprintf(loader.note, sizeof loader.note, "the CUDA driver %s sees no device", path);
        return UFORM_STATUS_OK;
    }
    uform__cuda_device_t *devices = uform__allocate_zeroed((size_t)count, sizeof *devices);
    if (!devices) return fail_load(UFORM_STATUS_OUT_OF_MEMORY, "no memory for %d CUDA devices", count);
    for (int i = 0; i < count; i++) {
        status = read_device(i, &devices[i]);
        if (status != UFORM_STATUS_OK) {
            uform__deallocate(devices);
            return status;
        }
    }
    /* nvidia-smi's order, whatever CUDA_DEVICE_ORDER made the driver's ordinals. */
    qsort(devices, (size_t)count, sizeof *devices, pci_order);
    cuda.devices = devices;
    cuda.device_count = (size_t)count;
    cuda_has_devices = true;
    return UFORM_STATUS_OK;
}

uform_status_t uform__cuda_get(const uform__cuda_t **out) {
    if (!out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform__cuda_get: output is NULL");
    *out = NULL;
    uform_status_t status = uform__gpu_load_once(&loader, load, &cuda.api, sizeof cuda.api);
    if (status == UFORM_STATUS_OK && cuda_has_devices) *out = &cuda;
    return status;
}

uform_status_t uform__cuda_execution(const uform__cuda_execution_api_t **out) {
    static uform__cuda_execution_api_t execution;
    static bool execution_bound;
    static uform_status_t execution_status;
    static char execution_message[512];
    const uform__cuda_t *driver = NULL;
    *out = NULL;
    uform_status_t status = uform__cuda_get(&driver);
    if (status != UFORM_STATUS_OK) return status;
    if (!driver) return uform__fail(UFORM_STATUS_NOT_FOUND, "no CUDA device: %s", loader.note);
    pthread_mutex_lock(&loader.lock);
    if (!execution_bound) {
        execution_status = UFORM_STATUS_OK;
#define BIND_EXECUTION_(field, base, version, symbol, type)                                       \
        if (execution_status == UFORM_STATUS_OK) {                                                 \
            void *pointer = NULL;                                                                  \
            execution_status = resolve(base, version, symbol, &pointer, execution_message, sizeof execution_message); \
            execution.field = (type)pointer;                                                       \
        }
        UFORM_CUDA_EXECUTION_ENTRY_POINTS(BIND_EXECUTION_)
#undef BIND_EXECUTION_
        execution_bound = true;
    }
    status = execution_status;
    pthread_mutex_unlock(&loader.lock);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", execution_message);
    *out = &execution;
    return UFORM_STATUS_OK;
}

uform_status_t uform__cuda_resolve(const char *base, int version, const char *symbol, void **pointer) {
    const uform__cuda_t *driver = NULL;
    *pointer = NULL;
    uform_status_t status = uform__cuda_get(&driver);
    if (status != UFORM_STATUS_OK) return status;
    if (!driver) return uform__fail(UFORM_STATUS_NOT_FOUND, "no CUDA device: %s", loader.note);
    char why[400];
    pthread_mutex_lock(&loader.lock);
    status = resolve(base, version, symbol, pointer, why, sizeof why);
    pthread_mutex_unlock(&loader.lock);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", why);
    return UFORM_STATUS_OK;
}

const char *uform__cuda_note(void) {
    const uform__cuda_t *ignored;
    uform__cuda_get(&ignored);
    return loader.note;
}
