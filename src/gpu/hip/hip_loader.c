/* Loading the HIP runtime at run time, once per process (core/dynamic_library.h). Nothing here
 * links against ROCm: the library is dlopen'ed, its tables bound with dlsym by their exported
 * names (HIP has no cuGetProcAddress; ROCm 6's versioned names such as
 * hipGetDevicePropertiesR0600 are the ABI), and the devices read once into a snapshot that later
 * calls only read. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dynamic_library.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/utf8.h"
#include "gpu/gpu_loader.h"
#include "gpu/hip/hip_loader.h"
#include "platform/platform.h"

/* ROCm installs the unversioned name with the runtime (libamdhip64.so -> .so.6 -> .so.6.x) in
 * $ROCM_PATH/lib (/opt/rocm/lib by default), which the dynamic linker searches only once the
 * post-install step of AMD's guide lists it in ld.so.conf.d: so the default search comes first,
 * then that directory by name, each with the unversioned name and the runtime's sonames (ROCm 7
 * first: it keeps the ROCm 6 names uform binds). */
#define LIBRARY_NAMES(prefix) prefix "libamdhip64.so", prefix "libamdhip64.so.7", prefix "libamdhip64.so.6"

/* The once-per-process, fork-aware load (core/dynamic_library.h). */
UFORM__LIBRARY_DEFINE(loader)
static uform__hip_t hip;
static bool hip_has_devices;

/* Records a failure as the process's answer. */
#define fail_load(...) uform__library_fail(&loader, __VA_ARGS__)

const char *uform__hip_error_name(const uform__hip_api_t *api, uform_hipError error, char *buffer, size_t capacity) {
    const char *name = api && api->hipGetErrorName ? api->hipGetErrorName(error) : NULL;
    if (name && *name) return name;
    snprintf(buffer, capacity, "hipError_t %u", error);
    return buffer;
}

/* hip_abi.h's lists as binding tables. */
#define DISCOVERY_ENTRY_(field, symbol, type) UFORM__LIBRARY_ENTRY(uform__hip_api_t, field, symbol, 0, symbol, false)
#define EXECUTION_ENTRY_(field, symbol, type)                                                      \
    UFORM__LIBRARY_ENTRY(uform__hip_execution_api_t, field, symbol, 0, symbol, false)
static const uform__library_entry_t discovery_entries[] = {UFORM_HIP_ENTRY_POINTS(DISCOVERY_ENTRY_)};
static const uform__library_entry_t execution_entries[] = {UFORM_HIP_EXECUTION_ENTRY_POINTS(EXECUTION_ENTRY_)};

/* A runtime call that must succeed while reading the devices; DEVICE_FAULT names it. */
#define QUERY_(call, what, ordinal)                                                                \
    do {                                                                                           \
        uform_hipError result_ = (call);                                                           \
        if (result_ != UFORM_HIP_SUCCESS) {                                                        \
            char buffer_[32];                                                                      \
            return fail_load(UFORM_STATUS_DEVICE_FAULT, "%s for HIP device %d: %s", what, ordinal, \
                             uform__hip_error_name(&hip.api, result_, buffer_, sizeof buffer_));   \
        }                                                                                          \
    } while (0)

static uform_status_t read_device(int ordinal, void *element) {
    uform__hip_device_t *device = element;
    const uform__hip_api_t *api = &hip.api;
    /* 1472 bytes: on the heap rather than the caller's stack. */
    uform_hipDeviceProp_R0600 *properties = uform__allocate_zeroed(1, sizeof *properties);
    if (!properties) return fail_load(UFORM_STATUS_OUT_OF_MEMORY, "no memory for HIP device %d's properties", ordinal);
    uform_hipError result = api->hipGetDevicePropertiesR0600(properties, ordinal);
    if (result != UFORM_HIP_SUCCESS) {
        uform__deallocate(properties);
        char buffer[32];
        return fail_load(UFORM_STATUS_DEVICE_FAULT, "hipGetDevicePropertiesR0600 for HIP device %d: %s", ordinal,
                         uform__hip_error_name(api, result, buffer, sizeof buffer));
    }
    device->handle = ordinal;
    /* The runtime's strings are terminated within their arrays; terminate anyway. */
    properties->name[sizeof properties->name - 1] = '\0';
    properties->gcnArchName[sizeof properties->gcnArchName - 1] = '\0';
    snprintf(device->name, sizeof device->name, "%s", properties->name);
    uform__utf8_cut(device->name, sizeof device->name);
    size_t arch_length = strnlen(properties->gcnArchName, sizeof device->arch - 1); /* ASCII: cut anywhere */
    memcpy(device->arch, properties->gcnArchName, arch_length);
    device->arch[arch_length] = '\0';
    device->memory_bytes = properties->totalGlobalMem;
    device->compute_units = properties->multiProcessorCount > 0 ? (uint32_t)properties->multiProcessorCount : 0;
    device->major = properties->major;
    device->minor = properties->minor;
    device->pci_domain = (uint32_t)properties->pciDomainID;
    device->pci_bus = (uint32_t)properties->pciBusID;
    device->pci_device = (uint32_t)properties->pciDeviceID;
    device->pci_function = 0;
    uform__deallocate(properties);
    /* The bus id string carries the function number the properties lack (a virtual function of
     * an SR-IOV GPU is not function 0); the properties stand where it does not parse. */
    char bus_id[64] = {0};
    QUERY_(api->hipDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, ordinal), "hipDeviceGetPCIBusId", ordinal);
    uform__gpu_parse_pci_bus_id(bus_id, &device->pci_domain, &device->pci_bus, &device->pci_device,
                                &device->pci_function);
    return UFORM_STATUS_OK;
}

static int pci_order(const void *a, const void *b) {
    const uform__hip_device_t *x = a, *y = b;
    return uform__gpu_pci_order(UFORM__GPU_PCI_ADDRESS(x), UFORM__GPU_PCI_ADDRESS(y), x->handle, y->handle);
}

/* Opens the runtime: UFORM_HIP_LIBRARY alone when set, else the default search, then
 * $ROCM_PATH/lib, then /opt/rocm/lib. */
static bool open_library(void) {
    static char rocm_path[3][600];
    const char *rocm = getenv("ROCM_PATH");
    const char *candidates[10] = {LIBRARY_NAMES("")};
    size_t n = 3;
    if (rocm && *rocm) {
        const char *names[3] = {LIBRARY_NAMES("")};
        for (size_t i = 0; i < 3; i++) {
            snprintf(rocm_path[i], sizeof rocm_path[i], "%s/lib/%s", rocm, names[i]);
            candidates[n++] = rocm_path[i];
        }
    }
    const char *standard[3] = {LIBRARY_NAMES("/opt/rocm/lib/")};
    for (size_t i = 0; i < 3; i++) candidates[n++] = standard[i];
    candidates[n] = NULL;
    return uform__library_open_first(&loader, "HIP runtime", "UFORM_HIP_LIBRARY", candidates);
}

static uform_status_t load(void) {
    if (!open_library()) return UFORM_STATUS_OK;
    /* Stays loaded for the process's life, as the CUDA driver does. */
    const char *path = hip.path = loader.path;
    hip.library = loader.handle;
    char why[512];
    uform_status_t status = uform__library_bind(&loader, "the HIP runtime", NULL, NULL, discovery_entries,
                                                sizeof discovery_entries / sizeof discovery_entries[0], &hip.api,
                                                sizeof hip.api, why, sizeof why);
    if (status != UFORM_STATUS_OK) return fail_load(status, "%s (ROCm 6 ABI)", why);
    char buffer[32];
    hip.fork_generation = loader.generation;
    uform_hipError result = hip.api.hipInit(0);
    /* A machine with ROCm's user space but no usable GPU (no /dev/kfd, or no access to it) has
     * hipInit answer hipErrorNoDevice, or hipErrorInvalidDevice in the releases of ROCm/hip#3464
     * (ROCm/ROCm#3071): zero devices either way, never an error. */
    if (result == UFORM_HIP_ERROR_NO_DEVICE || result == UFORM_HIP_ERROR_INVALID_DEVICE) {
        uform__library_note(&loader, "the HIP runtime %s sees no device (hipInit: %s)", path,
                            uform__hip_error_name(&hip.api, result, buffer, sizeof buffer));
        return UFORM_STATUS_OK;
    }
    if (result != UFORM_HIP_SUCCESS)
        return fail_load(UFORM_STATUS_DEVICE_FAULT, "hipInit of the HIP runtime %s failed: %s", path,
                         uform__hip_error_name(&hip.api, result, buffer, sizeof buffer));
    int count = 0;
    result = hip.api.hipGetDeviceCount(&count);
    /* hip_runtime_api.h: hipGetDeviceCount answers hipErrorNoDevice when it finds none. */
    if (result == UFORM_HIP_ERROR_NO_DEVICE || (result == UFORM_HIP_SUCCESS && count <= 0)) {
        uform__library_note(&loader, "the HIP runtime %s sees no device", path);
        return UFORM_STATUS_OK;
    }
    if (result != UFORM_HIP_SUCCESS)
        return fail_load(UFORM_STATUS_DEVICE_FAULT, "hipGetDeviceCount: %s",
                         uform__hip_error_name(&hip.api, result, buffer, sizeof buffer));
    /* rocm-smi's order, whatever HIP_VISIBLE_DEVICES made the runtime's ids. */
    void *devices = NULL;
    status = uform__gpu_read_devices(&loader, "HIP", count, sizeof(uform__hip_device_t), read_device, pci_order, &devices);
    if (status != UFORM_STATUS_OK) return status;
    hip.devices = devices;
    hip.device_count = (size_t)count;
    hip_has_devices = true;
    return UFORM_STATUS_OK;
}

uform_status_t uform__hip_get(const uform__hip_t **out) {
    if (!out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform__hip_get: output is NULL");
    *out = NULL;
    uform_status_t status = uform__library_load_once(&loader, load, &hip.api, sizeof hip.api);
    if (status == UFORM_STATUS_OK && hip_has_devices) *out = &hip;
    return status;
}

uform_status_t uform__hip_execution(const uform__hip_execution_api_t **out) {
    static uform__hip_execution_api_t execution;
    static uform__library_table_t state;
    const uform__hip_t *runtime = NULL;
    *out = NULL;
    uform_status_t status = uform__hip_get(&runtime);
    if (status != UFORM_STATUS_OK) return status;
    if (!runtime) return uform__fail(UFORM_STATUS_NOT_FOUND, "no HIP device: %s", loader.note);
    status = uform__library_bind_once(&loader, &state, "the HIP runtime", NULL, NULL, execution_entries,
                                      sizeof execution_entries / sizeof execution_entries[0], &execution,
                                      sizeof execution);
    if (status == UFORM_STATUS_OK) *out = &execution;
    return status;
}

const uform__library_t *uform__hip_library(void) {
    const uform__hip_t *ignored;
    uform__hip_get(&ignored);
    return &loader;
}

const char *uform__hip_note(void) {
    const uform__hip_t *ignored;
    uform__hip_get(&ignored);
    return loader.note;
}
