/* Internal: the small part of the CUDA driver ABI uform uses, declared here so the project
 * builds without any CUDA headers (Blender's cuew is the precedent). Names carry a
 * `uform_cu` prefix so this header and the toolkit's cuda.h can be included together by
 * tests/gpu/test_cuda_abi_matches_toolkit.c, which checks every value and signature below
 * against the real header wherever the toolkit is installed. Add a declaration here only
 * with its check there. */
#ifndef UFORM_GPU_CUDA_ABI_H
#define UFORM_GPU_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

/* CUresult: only the values uform names. The driver may answer others; they are reported
 * through cuGetErrorName, never interpreted. The toolkit's enums hold no negative value, so
 * GCC and Clang give them the type unsigned int: the same ABI, and a compatible type, so the
 * toolkit test can compare whole signatures. */
typedef unsigned int uform_cuResult;
enum {
    UFORM_CUDA_SUCCESS = 0,
    UFORM_CUDA_ERROR_INVALID_VALUE = 1,
    UFORM_CUDA_ERROR_NOT_INITIALIZED = 3,
    UFORM_CUDA_ERROR_DEINITIALIZED = 4,
    UFORM_CUDA_ERROR_STUB_LIBRARY = 34,
    UFORM_CUDA_ERROR_NO_DEVICE = 100,
    UFORM_CUDA_ERROR_INVALID_DEVICE = 101,
    UFORM_CUDA_ERROR_OUT_OF_MEMORY = 2,
    UFORM_CUDA_ERROR_INVALID_CONTEXT = 201,
    UFORM_CUDA_ERROR_INVALID_HANDLE = 400,
    UFORM_CUDA_ERROR_NOT_FOUND = 500,
    UFORM_CUDA_ERROR_NOT_READY = 600,
    UFORM_CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    UFORM_CUDA_ERROR_CONTAINED = 226,
    UFORM_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    UFORM_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    UFORM_CUDA_ERROR_ASSERT = 710,
    UFORM_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    UFORM_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    UFORM_CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    UFORM_CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    UFORM_CUDA_ERROR_INVALID_PC = 718,
    UFORM_CUDA_ERROR_LAUNCH_FAILED = 719,
    UFORM_CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
    UFORM_CUDA_ERROR_MPS_CLIENT_TERMINATED = 810,
    UFORM_CUDA_ERROR_EXTERNAL_DEVICE = 911,
    UFORM_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    UFORM_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
    UFORM_CUDA_ERROR_NOT_SUPPORTED = 801,
    UFORM_CUDA_ERROR_UNKNOWN = 999
};

/* CUdevice is an int ordinal handle (CUdevice_v1). */
typedef int uform_cuDevice;

/* CUdevice_attribute: the attributes discovery reads. */
typedef unsigned int uform_cuDeviceAttribute;
enum {
    UFORM_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    UFORM_CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    UFORM_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
};

/* cuGetProcAddress flags and its per-symbol answer (CUdriverProcAddressQueryResult). */
enum {
    UFORM_CU_GET_PROC_ADDRESS_DEFAULT = 0,
    UFORM_CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    UFORM_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2
};
typedef unsigned int uform_cuProcAddressQueryResult;
enum {
    UFORM_CU_GET_PROC_ADDRESS_SUCCESS = 0,
    UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
};

/* The CUDA version whose ABI the pointers below follow, as cuGetProcAddress takes it
 * (1000 * major + 10 * minor). 12.0 is the first driver exporting cuGetProcAddress_v2. */
#define UFORM_CUDA_ABI_VERSION 12000

/* Entry points, by their versioned symbol's signature. CUDAAPI is empty on Linux. */
typedef uform_cuResult (*uform_cuInit_t)(unsigned int flags);
typedef uform_cuResult (*uform_cuDriverGetVersion_t)(int *version);
/* cuGetProcAddress_v2, the CUDA 12 signature (cuda.h maps cuGetProcAddress to it). */
typedef uform_cuResult (*uform_cuGetProcAddress_t)(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
                                                   uform_cuProcAddressQueryResult *symbol_status);
typedef uform_cuResult (*uform_cuDeviceGetCount_t)(int *count);
typedef uform_cuResult (*uform_cuDeviceGet_t)(uform_cuDevice *device, int ordinal);
typedef uform_cuResult (*uform_cuDeviceGetName_t)(char *name, int length, uform_cuDevice device);
/* cuDeviceTotalMem_v2: size_t bytes (the unversioned symbol takes an unsigned int). */
typedef uform_cuResult (*uform_cuDeviceTotalMem_t)(size_t *bytes, uform_cuDevice device);
typedef uform_cuResult (*uform_cuDeviceGetAttribute_t)(int *value, uform_cuDeviceAttribute attribute,
                                                       uform_cuDevice device);
typedef uform_cuResult (*uform_cuDeviceGetPCIBusId_t)(char *bus_id, int length, uform_cuDevice device);
typedef uform_cuResult (*uform_cuGetErrorName_t)(uform_cuResult error, const char **name);

/*
 * X(field, base name for cuGetProcAddress, CUDA version of that ABI, symbol for dlsym, type):
 * every entry point the loader binds, listed once so the table and its loading cannot drift.
 * The versions are those in which the signature above appeared (cuDeviceTotalMem_v2: 3.2).
 * cuGetErrorName comes first so that a later entry point's failure can be named.
 */
#define UFORM_CUDA_ENTRY_POINTS(X)                                                                \
    X(cuGetErrorName, "cuGetErrorName", 6000, "cuGetErrorName", uform_cuGetErrorName_t)            \
    X(cuDriverGetVersion, "cuDriverGetVersion", 2020, "cuDriverGetVersion", uform_cuDriverGetVersion_t) \
    X(cuInit, "cuInit", 2000, "cuInit", uform_cuInit_t)                                              \
    X(cuDeviceGetCount, "cuDeviceGetCount", 2000, "cuDeviceGetCount", uform_cuDeviceGetCount_t)      \
    X(cuDeviceGet, "cuDeviceGet", 2000, "cuDeviceGet", uform_cuDeviceGet_t)                          \
    X(cuDeviceGetName, "cuDeviceGetName", 2000, "cuDeviceGetName", uform_cuDeviceGetName_t)          \
    X(cuDeviceTotalMem, "cuDeviceTotalMem", 3020, "cuDeviceTotalMem_v2", uform_cuDeviceTotalMem_t)   \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000, "cuDeviceGetAttribute",                   \
      uform_cuDeviceGetAttribute_t)                                                                \
    X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", 4010, "cuDeviceGetPCIBusId", uform_cuDeviceGetPCIBusId_t)


/*
 * Execution: primary contexts, device and pinned host memory, streams. Declared for the VRAM
 * executor (and implemented by the CUDA driver test double); the discovery loader above does
 * not bind these, so a driver lacking them still lists its GPUs. Same X row shape as above.
 */
/* CUcontext and CUstream are pointers to the toolkit's own incomplete struct tags, so the
 * types are the same ones when both headers are included; CUdeviceptr is CUdeviceptr_v2. */
typedef struct CUctx_st *uform_cuContext;
typedef struct CUstream_st *uform_cuStream;
typedef struct CUevent_st *uform_cuEvent;
typedef unsigned long long uform_cuDevicePtr;
typedef void (*uform_cuHostFn)(void *user_data);
typedef unsigned int uform_cuPointerAttribute;
enum {
    UFORM_CU_STREAM_DEFAULT = 0,
    UFORM_CU_STREAM_NON_BLOCKING = 1,
    UFORM_CU_MEMHOSTALLOC_PORTABLE = 1,
    UFORM_CU_MEMHOSTALLOC_DEVICEMAP = 2,
    UFORM_CU_MEMHOSTALLOC_WRITECOMBINED = 4,
    UFORM_CU_MEMHOSTREGISTER_PORTABLE = 1,
    UFORM_CU_MEMHOSTREGISTER_DEVICEMAP = 2,
    UFORM_CU_MEMHOSTREGISTER_IOMEMORY = 4,
    UFORM_CU_MEMHOSTREGISTER_READ_ONLY = 8,
    UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
    UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
    UFORM_CU_EVENT_DEFAULT = 0,
    UFORM_CU_EVENT_BLOCKING_SYNC = 1,
    UFORM_CU_EVENT_DISABLE_TIMING = 2,
    UFORM_CU_MEMORYTYPE_HOST = 1,
    UFORM_CU_MEMORYTYPE_DEVICE = 2
};
/* cuda.h's special stream handles, valid wherever a CUstream is: the legacy default stream, and
 * the calling thread's per-thread default stream (NULL is the legacy one too, in the entry
 * points uform binds, which are the legacy-stream ones). */
#define UFORM_CU_STREAM_LEGACY ((uform_cuStream)0x1)
#define UFORM_CU_STREAM_PER_THREAD ((uform_cuStream)0x2)
typedef uform_cuResult (*uform_cuDevicePrimaryCtxRetain_t)(uform_cuContext *context, uform_cuDevice device);
typedef uform_cuResult (*uform_cuDevicePrimaryCtxRelease_t)(uform_cuDevice device);
typedef uform_cuResult (*uform_cuCtxSetCurrent_t)(uform_cuContext context);
typedef uform_cuResult (*uform_cuCtxGetCurrent_t)(uform_cuContext *context);
typedef uform_cuResult (*uform_cuCtxSynchronize_t)(void);
typedef uform_cuResult (*uform_cuMemGetInfo_t)(size_t *free_bytes, size_t *total_bytes);
typedef uform_cuResult (*uform_cuMemAlloc_t)(uform_cuDevicePtr *pointer, size_t bytes);
typedef uform_cuResult (*uform_cuMemFree_t)(uform_cuDevicePtr pointer);
typedef uform_cuResult (*uform_cuMemHostAlloc_t)(void **pointer, size_t bytes, unsigned int flags);
typedef uform_cuResult (*uform_cuMemFreeHost_t)(void *pointer);
typedef uform_cuResult (*uform_cuMemHostRegister_t)(void *pointer, size_t bytes, unsigned int flags);
typedef uform_cuResult (*uform_cuMemHostUnregister_t)(void *pointer);
typedef uform_cuResult (*uform_cuPointerGetAttribute_t)(void *data, uform_cuPointerAttribute attribute,
                                                        uform_cuDevicePtr pointer);
typedef uform_cuResult (*uform_cuStreamCreate_t)(uform_cuStream *stream, unsigned int flags);
typedef uform_cuResult (*uform_cuStreamDestroy_t)(uform_cuStream stream);
typedef uform_cuResult (*uform_cuStreamSynchronize_t)(uform_cuStream stream);
typedef uform_cuResult (*uform_cuStreamQuery_t)(uform_cuStream stream);
typedef uform_cuResult (*uform_cuMemcpyHtoDAsync_t)(uform_cuDevicePtr destination, const void *source, size_t bytes,
                                                     uform_cuStream stream);
typedef uform_cuResult (*uform_cuMemcpyDtoHAsync_t)(void *destination, uform_cuDevicePtr source, size_t bytes,
                                                     uform_cuStream stream);
typedef uform_cuResult (*uform_cuMemsetD8Async_t)(uform_cuDevicePtr destination, unsigned char value, size_t count,
                                                   uform_cuStream stream);
typedef uform_cuResult (*uform_cuEventCreate_t)(uform_cuEvent *event, unsigned int flags);
typedef uform_cuResult (*uform_cuEventDestroy_t)(uform_cuEvent event);
typedef uform_cuResult (*uform_cuEventRecord_t)(uform_cuEvent event, uform_cuStream stream);
typedef uform_cuResult (*uform_cuEventSynchronize_t)(uform_cuEvent event);
typedef uform_cuResult (*uform_cuEventQuery_t)(uform_cuEvent event);
typedef uform_cuResult (*uform_cuLaunchHostFunc_t)(uform_cuStream stream, uform_cuHostFn function, void *user_data);
typedef uform_cuResult (*uform_cuStreamWaitEvent_t)(uform_cuStream stream, uform_cuEvent event, unsigned int flags);

#define UFORM_CUDA_EXECUTION_ENTRY_POINTS(X)                                                      \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, "cuDevicePrimaryCtxRetain",      \
      uform_cuDevicePrimaryCtxRetain_t)                                                            \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000, "cuDevicePrimaryCtxRelease_v2", \
      uform_cuDevicePrimaryCtxRelease_t)                                                           \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", 4000, "cuCtxSetCurrent", uform_cuCtxSetCurrent_t)          \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", 4000, "cuCtxGetCurrent", uform_cuCtxGetCurrent_t)          \
    X(cuCtxSynchronize, "cuCtxSynchronize", 2000, "cuCtxSynchronize", uform_cuCtxSynchronize_t)      \
    X(cuMemGetInfo, "cuMemGetInfo", 3020, "cuMemGetInfo_v2", uform_cuMemGetInfo_t)                   \
    X(cuMemAlloc, "cuMemAlloc", 3020, "cuMemAlloc_v2", uform_cuMemAlloc_t)                           \
    X(cuMemFree, "cuMemFree", 3020, "cuMemFree_v2", uform_cuMemFree_t)                               \
    X(cuMemHostAlloc, "cuMemHostAlloc", 2020, "cuMemHostAlloc", uform_cuMemHostAlloc_t)              \
    X(cuMemFreeHost, "cuMemFreeHost", 2000, "cuMemFreeHost", uform_cuMemFreeHost_t)                  \
    X(cuMemHostRegister, "cuMemHostRegister", 6050, "cuMemHostRegister_v2", uform_cuMemHostRegister_t) \
    X(cuMemHostUnregister, "cuMemHostUnregister", 4000, "cuMemHostUnregister", uform_cuMemHostUnregister_t) \
    X(cuPointerGetAttribute, "cuPointerGetAttribute", 4000, "cuPointerGetAttribute",               \
      uform_cuPointerGetAttribute_t)                                                               \
    X(cuStreamCreate, "cuStreamCreate", 2000, "cuStreamCreate", uform_cuStreamCreate_t)              \
    X(cuStreamDestroy, "cuStreamDestroy", 4000, "cuStreamDestroy_v2", uform_cuStreamDestroy_t)       \
    X(cuStreamSynchronize, "cuStreamSynchronize", 2000, "cuStreamSynchronize", uform_cuStreamSynchronize_t) \
    X(cuStreamQuery, "cuStreamQuery", 2000, "cuStreamQuery", uform_cuStreamQuery_t)                  \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync", 3020, "cuMemcpyHtoDAsync_v2", uform_cuMemcpyHtoDAsync_t) \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync", 3020, "cuMemcpyDtoHAsync_v2", uform_cuMemcpyDtoHAsync_t) \
    X(cuMemsetD8Async, "cuMemsetD8Async", 3020, "cuMemsetD8Async", uform_cuMemsetD8Async_t)          \
    X(cuLaunchHostFunc, "cuLaunchHostFunc", 10000, "cuLaunchHostFunc", uform_cuLaunchHostFunc_t)  \
    X(cuEventCreate, "cuEventCreate", 2000, "cuEventCreate", uform_cuEventCreate_t)                  \
    X(cuEventDestroy, "cuEventDestroy", 4000, "cuEventDestroy_v2", uform_cuEventDestroy_t)           \
    X(cuEventRecord, "cuEventRecord", 2000, "cuEventRecord", uform_cuEventRecord_t)                  \
    X(cuEventSynchronize, "cuEventSynchronize", 2000, "cuEventSynchronize", uform_cuEventSynchronize_t) \
    X(cuEventQuery, "cuEventQuery", 2000, "cuEventQuery", uform_cuEventQuery_t)                      \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", 3020, "cuStreamWaitEvent", uform_cuStreamWaitEvent_t)

/*
 * Multicast (NVSwitch multimem): the probe of src/gpu/cuda/cuda_multicast.c. One table of
 * optional entries (a driver without them still runs VRAM executors), bound apart from the
 * discovery and execution tables; cuDeviceCanAccessPeer, which the NVLink domain needs without
 * the rest, comes last. Same X row shape as above; none of these names has a versioned symbol in
 * cuda.h.
 */
enum {
    UFORM_CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132
};
/* CUresult values the multicast calls document (cuda.h: bind may answer OUT_OF_MEMORY,
 * SYSTEM_NOT_READY or ILLEGAL_STATE; every one NOT_PERMITTED): named for tests. */
enum {
    UFORM_CUDA_ERROR_ILLEGAL_STATE = 401,
    UFORM_CUDA_ERROR_NOT_PERMITTED = 800,
    UFORM_CUDA_ERROR_SYSTEM_NOT_READY = 802
};
/* CUmemGenericAllocationHandle (_v1): physical memory of cuMemCreate, or a multicast object. */
typedef unsigned long long uform_cuMemGenericAllocationHandle;
/* CUmemAllocationHandleType, CUmemLocationType, CUmemAllocationType,
 * CUmemAllocationGranularity_flags, CUmulticastGranularity_flags: the values uform names. */
typedef unsigned int uform_cuMemAllocationHandleType;
typedef unsigned int uform_cuMemLocationType;
typedef unsigned int uform_cuMemAllocationType;
typedef unsigned int uform_cuMulticastGranularityFlags;
typedef unsigned int uform_cuMemAllocationGranularityFlags;
enum {
    UFORM_CU_MEM_HANDLE_TYPE_NONE = 0,
    UFORM_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
    UFORM_CU_MEM_HANDLE_TYPE_FABRIC = 8,
    UFORM_CU_MEM_LOCATION_TYPE_DEVICE = 1,
    UFORM_CU_MEM_ALLOCATION_TYPE_PINNED = 1,
    UFORM_CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
    UFORM_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
    UFORM_CU_MULTICAST_GRANULARITY_MINIMUM = 0,
    UFORM_CU_MULTICAST_GRANULARITY_RECOMMENDED = 1
};
/* CUmemLocation (_v1). */
typedef struct uform_cuMemLocation {
    uform_cuMemLocationType type;
    int id;
} uform_cuMemLocation;
/* CUmemAllocationProp (_v1): field for field, the toolkit test checks size and offsets. */
typedef struct uform_cuMemAllocationProp {
    uform_cuMemAllocationType type;
    uform_cuMemAllocationHandleType requestedHandleTypes;
    uform_cuMemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} uform_cuMemAllocationProp;
/* CUmulticastObjectProp (_v1). */
typedef struct uform_cuMulticastObjectProp {
    unsigned int numDevices;
    size_t size;
    unsigned long long handleTypes;
    unsigned long long flags;
} uform_cuMulticastObjectProp;

/* The four entry points taking a struct are spelled through a macro of the struct type, so
 * the toolkit test can instantiate the very same signature over cuda.h's struct and compare it
 * with the prototype (our struct is a distinct type; its layout is checked field by field). */
#define UFORM_CU_MEM_CREATE_SIGNATURE(name, prop_type)                                              \
    uform_cuResult (*name)(uform_cuMemGenericAllocationHandle * handle, size_t bytes, const prop_type *prop, \
                           unsigned long long flags)
#define UFORM_CU_MULTICAST_CREATE_SIGNATURE(name, prop_type)                                        \
    uform_cuResult (*name)(uform_cuMemGenericAllocationHandle * multicast, const prop_type *prop)
#define UFORM_CU_MEM_GET_ALLOCATION_GRANULARITY_SIGNATURE(name, prop_type)                          \
    uform_cuResult (*name)(size_t * granularity, const prop_type *prop, uform_cuMemAllocationGranularityFlags option)
#define UFORM_CU_MULTICAST_GET_GRANULARITY_SIGNATURE(name, prop_type)                               \
    uform_cuResult (*name)(size_t * granularity, const prop_type *prop, uform_cuMulticastGranularityFlags option)

typedef uform_cuResult (*uform_cuDeviceCanAccessPeer_t)(int *can_access, uform_cuDevice device, uform_cuDevice peer);
typedef UFORM_CU_MEM_CREATE_SIGNATURE(uform_cuMemCreate_t, uform_cuMemAllocationProp);
typedef uform_cuResult (*uform_cuMemRelease_t)(uform_cuMemGenericAllocationHandle handle);
typedef UFORM_CU_MEM_GET_ALLOCATION_GRANULARITY_SIGNATURE(uform_cuMemGetAllocationGranularity_t,
                                                          uform_cuMemAllocationProp);
typedef UFORM_CU_MULTICAST_CREATE_SIGNATURE(uform_cuMulticastCreate_t, uform_cuMulticastObjectProp);
typedef uform_cuResult (*uform_cuMulticastAddDevice_t)(uform_cuMemGenericAllocationHandle multicast,
                                                       uform_cuDevice device);
typedef uform_cuResult (*uform_cuMulticastBindMem_t)(uform_cuMemGenericAllocationHandle multicast,
                                                     size_t multicast_offset,
                                                     uform_cuMemGenericAllocationHandle memory, size_t memory_offset,
                                                     size_t bytes, unsigned long long flags);
typedef uform_cuResult (*uform_cuMulticastUnbind_t)(uform_cuMemGenericAllocationHandle multicast, uform_cuDevice device,
                                                    size_t multicast_offset, size_t bytes);
typedef UFORM_CU_MULTICAST_GET_GRANULARITY_SIGNATURE(uform_cuMulticastGetGranularity_t, uform_cuMulticastObjectProp);

/* Versions: cuDeviceCanAccessPeer appeared in CUDA 4.0, the virtual memory management calls
 * (cuMemCreate, cuMemRelease) in 10.2, the multicast objects in 12.1. */
#define UFORM_CUDA_MULTICAST_ENTRY_POINTS(X)                                                      \
    X(cuMemCreate, "cuMemCreate", 10020, "cuMemCreate", uform_cuMemCreate_t)                         \
    X(cuMemRelease, "cuMemRelease", 10020, "cuMemRelease", uform_cuMemRelease_t)                     \
    X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity", 10020, "cuMemGetAllocationGranularity", \
      uform_cuMemGetAllocationGranularity_t)                                                       \
    X(cuMulticastGetGranularity, "cuMulticastGetGranularity", 12010, "cuMulticastGetGranularity",  \
      uform_cuMulticastGetGranularity_t)                                                           \
    X(cuMulticastCreate, "cuMulticastCreate", 12010, "cuMulticastCreate", uform_cuMulticastCreate_t) \
    X(cuMulticastAddDevice, "cuMulticastAddDevice", 12010, "cuMulticastAddDevice",                 \
      uform_cuMulticastAddDevice_t)                                                                \
    X(cuMulticastBindMem, "cuMulticastBindMem", 12010, "cuMulticastBindMem", uform_cuMulticastBindMem_t) \
    X(cuMulticastUnbind, "cuMulticastUnbind", 12010, "cuMulticastUnbind", uform_cuMulticastUnbind_t) \
    X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", 4000, "cuDeviceCanAccessPeer",               \
      uform_cuDeviceCanAccessPeer_t)

/* Peer links, for the report's GPU table (src/report/): CUdevice_P2PAttribute and
 * cuDeviceGetP2PAttribute (CUDA 8.0), optional like the multicast entry points. */
typedef enum uform_cuDeviceP2PAttribute {
    UFORM_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK = 0x01,
    UFORM_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 0x02,
    UFORM_CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED = 0x03,
    UFORM_CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED = 0x04
} uform_cuDeviceP2PAttribute;
typedef uform_cuResult (*uform_cuDeviceGetP2PAttribute_t)(int *value, uform_cuDeviceP2PAttribute attribute,
                                                          uform_cuDevice source, uform_cuDevice destination);
#define UFORM_CUDA_PEER_ENTRY_POINTS(X)                                                           \
    X(cuDeviceGetP2PAttribute, "cuDeviceGetP2PAttribute", 8000, "cuDeviceGetP2PAttribute",         \
      uform_cuDeviceGetP2PAttribute_t)

#endif
