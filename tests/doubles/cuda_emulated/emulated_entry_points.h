/* Every entry point the CUDA driver test double exports, declared once with its visibility
 * (EXPORT: the build hides everything else), so each file's definitions are checked against
 * one declaration and cuGetProcAddress's table (emulated_discovery.c) can name them all. */
#ifndef UFORM_CUDA_EMULATED_ENTRY_POINTS_H
#define UFORM_CUDA_EMULATED_ENTRY_POINTS_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda/cuda_abi.h"

#define EXPORT __attribute__((visibility("default")))

/* Discovery (emulated_discovery.c) */
EXPORT uform_cuResult cuDriverGetVersion(int *version);
EXPORT uform_cuResult cuInit(unsigned int flags);
EXPORT uform_cuResult cuDeviceGetCount(int *count);
EXPORT uform_cuResult cuDeviceGet(uform_cuDevice *device, int ordinal);
EXPORT uform_cuResult cuDeviceGetName(char *name, int length, uform_cuDevice handle);
EXPORT uform_cuResult cuDeviceTotalMem_v2(size_t *bytes, uform_cuDevice handle);
EXPORT uform_cuResult cuDeviceTotalMem(unsigned int *bytes, uform_cuDevice handle);
EXPORT uform_cuResult cuDeviceGetAttribute(int *value, uform_cuDeviceAttribute attribute, uform_cuDevice handle);
EXPORT uform_cuResult cuDeviceGetPCIBusId(char *bus_id, int length, uform_cuDevice handle);
EXPORT uform_cuResult cuGetErrorName(uform_cuResult error, const char **name);
#if !EMULATED_LEGACY_DRIVER
EXPORT uform_cuResult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
                                          uform_cuProcAddressQueryResult *status);
EXPORT uform_cuResult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version, uint64_t flags);
#endif

/* Primary contexts (emulated_contexts.c) */
EXPORT uform_cuResult cuDevicePrimaryCtxRetain(uform_cuContext *handle, uform_cuDevice device);
EXPORT uform_cuResult cuDevicePrimaryCtxRelease_v2(uform_cuDevice device);
EXPORT uform_cuResult cuCtxSetCurrent(uform_cuContext handle);
EXPORT uform_cuResult cuCtxGetCurrent(uform_cuContext *handle);
EXPORT uform_cuResult cuCtxSynchronize(void);

/* Device and pinned host memory (emulated_memory.c) */
EXPORT uform_cuResult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes);
EXPORT uform_cuResult cuMemAlloc_v2(uform_cuDevicePtr *pointer, size_t bytes);
EXPORT uform_cuResult cuMemFree_v2(uform_cuDevicePtr pointer);
EXPORT uform_cuResult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags);
EXPORT uform_cuResult cuMemFreeHost(void *pointer);
EXPORT uform_cuResult cuMemHostRegister_v2(void *pointer, size_t bytes, unsigned int flags);
EXPORT uform_cuResult cuMemHostUnregister(void *pointer);
EXPORT uform_cuResult cuPointerGetAttribute(void *data, uform_cuPointerAttribute attribute, uform_cuDevicePtr pointer);

/* Streams and their operations (emulated_streams.c) */
EXPORT uform_cuResult cuStreamCreate(uform_cuStream *handle, unsigned int flags);
EXPORT uform_cuResult cuStreamDestroy_v2(uform_cuStream handle);
EXPORT uform_cuResult cuStreamSynchronize(uform_cuStream handle);
EXPORT uform_cuResult cuStreamQuery(uform_cuStream handle);
EXPORT uform_cuResult cuMemcpyHtoDAsync_v2(uform_cuDevicePtr destination, const void *source, size_t bytes,
                                           uform_cuStream stream);
EXPORT uform_cuResult cuMemcpyDtoHAsync_v2(void *destination, uform_cuDevicePtr source, size_t bytes,
                                           uform_cuStream stream);
EXPORT uform_cuResult cuMemsetD8Async(uform_cuDevicePtr destination, unsigned char value, size_t count,
                                      uform_cuStream stream);
EXPORT uform_cuResult cuLaunchHostFunc(uform_cuStream stream, uform_cuHostFn function, void *user_data);

/* Events (emulated_events.c) */
EXPORT uform_cuResult cuEventCreate(uform_cuEvent *handle, unsigned int flags);
EXPORT uform_cuResult cuEventDestroy_v2(uform_cuEvent handle);
EXPORT uform_cuResult cuEventRecord(uform_cuEvent handle, uform_cuStream stream_handle);
EXPORT uform_cuResult cuEventQuery(uform_cuEvent handle);
EXPORT uform_cuResult cuStreamWaitEvent(uform_cuStream stream_handle, uform_cuEvent handle, unsigned int flags);
EXPORT uform_cuResult cuEventSynchronize(uform_cuEvent handle);

/* Peers and multicast (emulated_multicast.c) */
EXPORT uform_cuResult cuDeviceCanAccessPeer(int *can_access, uform_cuDevice handle, uform_cuDevice peer);
EXPORT uform_cuResult cuDeviceGetP2PAttribute(int *value, uform_cuDeviceP2PAttribute attribute, uform_cuDevice source,
                                              uform_cuDevice destination);
EXPORT uform_cuResult cuMulticastGetGranularity(size_t *granularity, const uform_cuMulticastObjectProp *prop,
                                                uform_cuMulticastGranularityFlags option);
EXPORT uform_cuResult cuMulticastCreate(uform_cuMemGenericAllocationHandle *handle,
                                        const uform_cuMulticastObjectProp *prop);
EXPORT uform_cuResult cuMulticastAddDevice(uform_cuMemGenericAllocationHandle handle, uform_cuDevice device);
EXPORT uform_cuResult cuMemCreate(uform_cuMemGenericAllocationHandle *handle, size_t bytes,
                                  const uform_cuMemAllocationProp *prop, unsigned long long flags);
EXPORT uform_cuResult cuMemRelease(uform_cuMemGenericAllocationHandle handle);
EXPORT uform_cuResult cuMemGetAllocationGranularity(size_t *granularity, const uform_cuMemAllocationProp *prop,
                                                    uform_cuMemAllocationGranularityFlags option);
EXPORT uform_cuResult cuMulticastBindMem(uform_cuMemGenericAllocationHandle handle, size_t multicast_offset,
                                         uform_cuMemGenericAllocationHandle memory_handle, size_t memory_offset,
                                         size_t bytes, unsigned long long flags);
EXPORT uform_cuResult cuMulticastUnbind(uform_cuMemGenericAllocationHandle handle, uform_cuDevice device,
                                        size_t multicast_offset, size_t bytes);

#endif
