/* The CUDA driver test double's discovery (README.md): the driver's version, cuInit, device
 * queries, error names, and cuGetProcAddress over every entry point the double exports (not in
 * the legacy build, a driver older than CUDA 12.0). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "emulated_entry_points.h"
#include "emulated_errors.h"
#include "emulated_state.h"

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
    case UFORM_CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: *value = device->multicast; break;
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
    {"cuDevicePrimaryCtxRetain", 7000, (void *)cuDevicePrimaryCtxRetain},
    {"cuDevicePrimaryCtxRelease", 11000, (void *)cuDevicePrimaryCtxRelease_v2},
    {"cuCtxSetCurrent", 4000, (void *)cuCtxSetCurrent},
    {"cuCtxGetCurrent", 4000, (void *)cuCtxGetCurrent},
    {"cuCtxSynchronize", 2000, (void *)cuCtxSynchronize},
    {"cuMemGetInfo", 3020, (void *)cuMemGetInfo_v2},
    {"cuMemAlloc", 3020, (void *)cuMemAlloc_v2},
    {"cuMemFree", 3020, (void *)cuMemFree_v2},
    {"cuMemHostAlloc", 2020, (void *)cuMemHostAlloc},
    {"cuMemFreeHost", 2000, (void *)cuMemFreeHost},
    {"cuMemHostRegister", 6050, (void *)cuMemHostRegister_v2},
    {"cuMemHostUnregister", 4000, (void *)cuMemHostUnregister},
    {"cuPointerGetAttribute", 4000, (void *)cuPointerGetAttribute},
    {"cuStreamCreate", 2000, (void *)cuStreamCreate},
    {"cuStreamDestroy", 4000, (void *)cuStreamDestroy_v2},
    {"cuStreamSynchronize", 2000, (void *)cuStreamSynchronize},
    {"cuStreamQuery", 2000, (void *)cuStreamQuery},
    {"cuMemcpyHtoDAsync", 3020, (void *)cuMemcpyHtoDAsync_v2},
    {"cuMemcpyDtoHAsync", 3020, (void *)cuMemcpyDtoHAsync_v2},
    {"cuMemsetD8Async", 3020, (void *)cuMemsetD8Async},
    {"cuLaunchHostFunc", 10000, (void *)cuLaunchHostFunc},
    {"cuEventCreate", 2000, (void *)cuEventCreate},
    {"cuEventDestroy", 4000, (void *)cuEventDestroy_v2},
    {"cuEventRecord", 2000, (void *)cuEventRecord},
    {"cuEventSynchronize", 2000, (void *)cuEventSynchronize},
    {"cuEventQuery", 2000, (void *)cuEventQuery},
    {"cuStreamWaitEvent", 3020, (void *)cuStreamWaitEvent},
    {"cuDeviceCanAccessPeer", 4000, (void *)cuDeviceCanAccessPeer},
    {"cuDeviceGetP2PAttribute", 8000, (void *)cuDeviceGetP2PAttribute},
    {"cuMemCreate", 10020, (void *)cuMemCreate},
    {"cuMemRelease", 10020, (void *)cuMemRelease},
    {"cuMemGetAllocationGranularity", 10020, (void *)cuMemGetAllocationGranularity},
    {"cuMulticastGetGranularity", 12010, (void *)cuMulticastGetGranularity},
    {"cuMulticastCreate", 12010, (void *)cuMulticastCreate},
    {"cuMulticastAddDevice", 12010, (void *)cuMulticastAddDevice},
    {"cuMulticastBindMem", 12010, (void *)cuMulticastBindMem},
    {"cuMulticastUnbind", 12010, (void *)cuMulticastUnbind},
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
