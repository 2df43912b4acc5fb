/* Internal: the small part of the HIP runtime ABI (libamdhip64.so, ROCm 6 and later) uform uses,
 * declared here so the project builds without ROCm (as cuda_abi.h does for CUDA; Blender's hipew
 * is the precedent). Names carry a `uform_hip` prefix so this header never clashes with ROCm's.
 *
 * Where the values and signatures come from: ROCm 6's hip/hip_runtime_api.h (hipError_t, the
 * hipDeviceProp_t that ROCm 6 typedefs as hipDeviceProp_tR0600, hipPointerAttribute_t,
 * hipMemoryType, the stream/event/host-allocation flags, the function signatures) and
 * hip/driver_types.h (hipMemcpyKind), read in ROCm/HIP and ROCm/rocm-systems
 * (projects/hip/include/hip/). No ROCm header exists where this was written, so nothing here is
 * compiled against the real one yet: the layout asserts below are the check, and a test against
 * ROCm's header (like tests/gpu/test_cuda_abi_matches_toolkit.c) is still to be written.
 *
 * HIP has no cuGetProcAddress: entry points are bound with dlsym by their exported names. The
 * properties entry is hipGetDevicePropertiesR0600 (ROCm 6's versioned symbol; the header maps
 * hipGetDeviceProperties to it), so a ROCm 5 library, which lacks it, is refused by name rather
 * than misread through the older, differently laid out struct. */
#ifndef UFORM_GPU_HIP_ABI_H
#define UFORM_GPU_HIP_ABI_H

#include <stddef.h>
#include <stdint.h>

/* hipError_t: only the values uform names; others are reported through hipGetErrorName, never
 * interpreted. ROCm's enum holds no negative value, so compilers give it unsigned int. */
typedef unsigned int uform_hipError;
enum {
    UFORM_HIP_SUCCESS = 0,
    UFORM_HIP_ERROR_INVALID_VALUE = 1,
    UFORM_HIP_ERROR_OUT_OF_MEMORY = 2,
    UFORM_HIP_ERROR_NOT_INITIALIZED = 3,
    UFORM_HIP_ERROR_INVALID_DEVICE_POINTER = 17,
    UFORM_HIP_ERROR_INVALID_MEMCPY_DIRECTION = 21,
    UFORM_HIP_ERROR_INSUFFICIENT_DRIVER = 35,
    UFORM_HIP_ERROR_NO_DEVICE = 100,
    UFORM_HIP_ERROR_INVALID_DEVICE = 101,
    UFORM_HIP_ERROR_INVALID_CONTEXT = 201,
    UFORM_HIP_ERROR_ECC_NOT_CORRECTABLE = 214,
    UFORM_HIP_ERROR_INVALID_HANDLE = 400,
    UFORM_HIP_ERROR_NOT_FOUND = 500,
    UFORM_HIP_ERROR_NOT_READY = 600,
    UFORM_HIP_ERROR_ILLEGAL_ADDRESS = 700,
    UFORM_HIP_ERROR_LAUNCH_TIMEOUT = 702,
    UFORM_HIP_ERROR_ASSERT = 710,
    UFORM_HIP_ERROR_LAUNCH_FAILURE = 719,
    UFORM_HIP_ERROR_NOT_SUPPORTED = 801,
    UFORM_HIP_ERROR_UNKNOWN = 999
};

/* hipUUID and hipDeviceArch_t (17 one-bit `unsigned` fields: one 4-byte word), as ROCm 6. */
typedef struct uform_hipUUID {
    char bytes[16];
} uform_hipUUID;
typedef struct uform_hipDeviceArch {
    unsigned bits : 17;
} uform_hipDeviceArch;

/*
 * hipDeviceProp_tR0600: ROCm 6's hipDeviceProp_t, every member in its order and type (uform reads
 * name, totalGlobalMem, major, minor, multiProcessorCount, pciBusID, pciDeviceID, pciDomainID and
 * gcnArchName; the rest are declared to hold the offsets). Transcribed from
 * projects/hip/include/hip/hip_runtime_api.h of ROCm/rocm-systems, the `HIP_FORCE_API_VERSION >=
 * 600` branch; later ROCm releases add members only by taking words from `reserved`, which keeps
 * the layout. Checked below against the figures published for it (sizeof 1472, alignment 8,
 * gcnArchName at 1160) and the offsets that follow from the header on LP64.
 */
typedef struct uform_hipDeviceProp_R0600 {
    char name[256];
    uform_hipUUID uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int maxTexture1D;
    int maxTexture1DMipmap;
    int maxTexture1DLinear;
    int maxTexture2D[2];
    int maxTexture2DMipmap[2];
    int maxTexture2DLinear[3];
    int maxTexture2DGather[2];
    int maxTexture3D[3];
    int maxTexture3DAlt[3];
    int maxTextureCubemap;
    int maxTexture1DLayered[2];
    int maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D;
    int maxSurface2D[2];
    int maxSurface3D[3];
    int maxSurface1DLayered[2];
    int maxSurface2DLayered[3];
    int maxSurfaceCubemap;
    int maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int hostNativeAtomicSupported;
    int singleToDoublePrecisionPerfRatio;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseHipArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingHipArraySupported;
    int ipcEventSupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
    int reserved[63];
    int hipReserved[32];
    /* HIP-only members */
    char gcnArchName[256];
    size_t maxSharedMemoryPerMultiProcessor;
    int clockInstructionRate;
    uform_hipDeviceArch arch;
    unsigned int *hdpMemFlushCntl;
    unsigned int *hdpRegFlushCntl;
    int cooperativeMultiDeviceUnmatchedFunc;
    int cooperativeMultiDeviceUnmatchedGridDim;
    int cooperativeMultiDeviceUnmatchedBlockDim;
    int cooperativeMultiDeviceUnmatchedSharedMem;
    int isLargeBar;
    int asicRevision;
} uform_hipDeviceProp_R0600;

#if defined(__LP64__) || defined(_LP64)
_Static_assert(sizeof(uform_hipDeviceProp_R0600) == 1472, "hipDeviceProp_tR0600 is 1472 bytes in ROCm 6");
_Static_assert(_Alignof(uform_hipDeviceProp_R0600) == 8, "hipDeviceProp_tR0600 is 8-byte aligned");
_Static_assert(offsetof(uform_hipDeviceProp_R0600, gcnArchName) == 1160, "gcnArchName is at 1160 in ROCm 6");
_Static_assert(offsetof(uform_hipDeviceProp_R0600, totalGlobalMem) == 288, "totalGlobalMem follows name, uuid, luid");
_Static_assert(offsetof(uform_hipDeviceProp_R0600, major) == 360, "major");
_Static_assert(offsetof(uform_hipDeviceProp_R0600, multiProcessorCount) == 388, "multiProcessorCount");
_Static_assert(offsetof(uform_hipDeviceProp_R0600, pciBusID) == 584, "pciBusID");
_Static_assert(offsetof(uform_hipDeviceProp_R0600, pciDeviceID) == 588, "pciDeviceID");
_Static_assert(offsetof(uform_hipDeviceProp_R0600, pciDomainID) == 592, "pciDomainID");
#endif

/* hipMemcpyKind (driver_types.h). */
typedef unsigned int uform_hipMemcpyKind;
enum {
    UFORM_HIP_MEMCPY_HOST_TO_HOST = 0,
    UFORM_HIP_MEMCPY_HOST_TO_DEVICE = 1,
    UFORM_HIP_MEMCPY_DEVICE_TO_HOST = 2,
    UFORM_HIP_MEMCPY_DEVICE_TO_DEVICE = 3,
    UFORM_HIP_MEMCPY_DEFAULT = 4
};

/* hipMemoryType: ROCm 6's values (ROCm 5 numbered them from hipMemoryTypeHost = 0). */
typedef unsigned int uform_hipMemoryType;
enum {
    UFORM_HIP_MEMORY_TYPE_UNREGISTERED = 0,
    UFORM_HIP_MEMORY_TYPE_HOST = 1,
    UFORM_HIP_MEMORY_TYPE_DEVICE = 2,
    UFORM_HIP_MEMORY_TYPE_MANAGED = 3,
    UFORM_HIP_MEMORY_TYPE_ARRAY = 10,
    UFORM_HIP_MEMORY_TYPE_UNIFIED = 11
};

typedef struct uform_hipPointerAttribute {
    uform_hipMemoryType type;
    int device;
    void *devicePointer;
    void *hostPointer;
    int isManaged;
    unsigned allocationFlags;
} uform_hipPointerAttribute;

/* Flags (hip_runtime_api.h #defines). */
enum {
    UFORM_HIP_STREAM_DEFAULT = 0x0,
    UFORM_HIP_STREAM_NON_BLOCKING = 0x1,
    UFORM_HIP_EVENT_DEFAULT = 0x0,
    UFORM_HIP_EVENT_BLOCKING_SYNC = 0x1,
    UFORM_HIP_EVENT_DISABLE_TIMING = 0x2,
    UFORM_HIP_EVENT_INTERPROCESS = 0x4,
    UFORM_HIP_HOST_MALLOC_DEFAULT = 0x0,
    UFORM_HIP_HOST_MALLOC_PORTABLE = 0x1,
    UFORM_HIP_HOST_MALLOC_MAPPED = 0x2,
    UFORM_HIP_HOST_MALLOC_WRITE_COMBINED = 0x4
};

/* hipStream_t and hipEvent_t are pointers to ROCm's incomplete struct tags, as in its header. */
typedef struct ihipStream_t *uform_hipStream;
typedef struct ihipEvent_t *uform_hipEvent;
typedef void (*uform_hipHostFn)(void *user_data);

/* Discovery. */
typedef const char *(*uform_hipGetErrorName_t)(uform_hipError error);
typedef uform_hipError (*uform_hipInit_t)(unsigned int flags);
typedef uform_hipError (*uform_hipGetDeviceCount_t)(int *count);
typedef uform_hipError (*uform_hipGetDevicePropertiesR0600_t)(uform_hipDeviceProp_R0600 *properties, int device);
typedef uform_hipError (*uform_hipDeviceGetPCIBusId_t)(char *bus_id, int length, int device);

/* X(field, symbol for dlsym, type): every entry point discovery binds, listed once so the table
 * and its loading cannot drift. hipGetErrorName comes first so a later failure can be named. */
#define UFORM_HIP_ENTRY_POINTS(X)                                                                 \
    X(hipGetErrorName, "hipGetErrorName", uform_hipGetErrorName_t)                                \
    X(hipInit, "hipInit", uform_hipInit_t)                                                        \
    X(hipGetDeviceCount, "hipGetDeviceCount", uform_hipGetDeviceCount_t)                          \
    X(hipGetDevicePropertiesR0600, "hipGetDevicePropertiesR0600", uform_hipGetDevicePropertiesR0600_t) \
    X(hipDeviceGetPCIBusId, "hipDeviceGetPCIBusId", uform_hipDeviceGetPCIBusId_t)

/* Execution: bound by the backend (hip_backend.c) on first use, so a runtime lacking one of these
 * still lists its GPUs. */
typedef uform_hipError (*uform_hipSetDevice_t)(int device);
typedef uform_hipError (*uform_hipGetDevice_t)(int *device);
typedef uform_hipError (*uform_hipDeviceSynchronize_t)(void);
typedef uform_hipError (*uform_hipMalloc_t)(void **pointer, size_t bytes);
typedef uform_hipError (*uform_hipFree_t)(void *pointer);
typedef uform_hipError (*uform_hipHostMalloc_t)(void **pointer, size_t bytes, unsigned int flags);
typedef uform_hipError (*uform_hipHostFree_t)(void *pointer);
typedef uform_hipError (*uform_hipPointerGetAttributes_t)(uform_hipPointerAttribute *attributes, const void *pointer);
typedef uform_hipError (*uform_hipStreamCreateWithFlags_t)(uform_hipStream *stream, unsigned int flags);
typedef uform_hipError (*uform_hipStreamDestroy_t)(uform_hipStream stream);
typedef uform_hipError (*uform_hipStreamSynchronize_t)(uform_hipStream stream);
typedef uform_hipError (*uform_hipStreamQuery_t)(uform_hipStream stream);
typedef uform_hipError (*uform_hipMemcpyAsync_t)(void *destination, const void *source, size_t bytes,
                                                 uform_hipMemcpyKind kind, uform_hipStream stream);
typedef uform_hipError (*uform_hipEventCreateWithFlags_t)(uform_hipEvent *event, unsigned int flags);
typedef uform_hipError (*uform_hipEventDestroy_t)(uform_hipEvent event);
typedef uform_hipError (*uform_hipEventRecord_t)(uform_hipEvent event, uform_hipStream stream);
typedef uform_hipError (*uform_hipEventSynchronize_t)(uform_hipEvent event);
typedef uform_hipError (*uform_hipEventQuery_t)(uform_hipEvent event);
typedef uform_hipError (*uform_hipStreamWaitEvent_t)(uform_hipStream stream, uform_hipEvent event, unsigned int flags);

#define UFORM_HIP_EXECUTION_ENTRY_POINTS(X)                                                       \
    X(hipSetDevice, "hipSetDevice", uform_hipSetDevice_t)                                         \
    X(hipGetDevice, "hipGetDevice", uform_hipGetDevice_t)                                         \
    X(hipDeviceSynchronize, "hipDeviceSynchronize", uform_hipDeviceSynchronize_t)                 \
    X(hipMalloc, "hipMalloc", uform_hipMalloc_t)                                                  \
    X(hipFree, "hipFree", uform_hipFree_t)                                                        \
    X(hipHostMalloc, "hipHostMalloc", uform_hipHostMalloc_t)                                      \
    X(hipHostFree, "hipHostFree", uform_hipHostFree_t)                                            \
    X(hipPointerGetAttributes, "hipPointerGetAttributes", uform_hipPointerGetAttributes_t)        \
    X(hipStreamCreateWithFlags, "hipStreamCreateWithFlags", uform_hipStreamCreateWithFlags_t)     \
    X(hipStreamDestroy, "hipStreamDestroy", uform_hipStreamDestroy_t)                             \
    X(hipStreamSynchronize, "hipStreamSynchronize", uform_hipStreamSynchronize_t)                 \
    X(hipStreamQuery, "hipStreamQuery", uform_hipStreamQuery_t)                                   \
    X(hipMemcpyAsync, "hipMemcpyAsync", uform_hipMemcpyAsync_t)                                   \
    X(hipEventCreateWithFlags, "hipEventCreateWithFlags", uform_hipEventCreateWithFlags_t)        \
    X(hipEventDestroy, "hipEventDestroy", uform_hipEventDestroy_t)                                \
    X(hipEventRecord, "hipEventRecord", uform_hipEventRecord_t)                                   \
    X(hipEventSynchronize, "hipEventSynchronize", uform_hipEventSynchronize_t)                    \
    X(hipEventQuery, "hipEventQuery", uform_hipEventQuery_t)                                      \
    X(hipStreamWaitEvent, "hipStreamWaitEvent", uform_hipStreamWaitEvent_t)

#endif
