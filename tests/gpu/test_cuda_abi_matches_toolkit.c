/* uform's own declarations of the CUDA driver ABI (src/gpu/cuda/cuda_abi.h) against the toolkit's
 * cuda.h: every value by static assertion, every entry point's type by _Generic (a compatible
 * function type or no build), and every dlsym name against the versioned symbol cuda.h maps
 * the base name to. Built only where the toolkit's headers are installed (tests/gpu/tests.cmake). */
#include <cuda.h>
#include <stddef.h>

#include "gpu/cuda/cuda_abi.h"
#include "test.h"

#define SAME_VALUE(ours, theirs) _Static_assert((long long)(ours) == (long long)(theirs), #ours " != " #theirs)
SAME_VALUE(UFORM_CUDA_SUCCESS, CUDA_SUCCESS);
SAME_VALUE(UFORM_CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
SAME_VALUE(UFORM_CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
SAME_VALUE(UFORM_CUDA_ERROR_DEINITIALIZED, CUDA_ERROR_DEINITIALIZED);
SAME_VALUE(UFORM_CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY);
SAME_VALUE(UFORM_CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME_VALUE(UFORM_CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
SAME_VALUE(UFORM_CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
SAME_VALUE(UFORM_CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
SAME_VALUE(UFORM_CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN);
SAME_VALUE(UFORM_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME_VALUE(UFORM_CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT);
SAME_VALUE(UFORM_CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE);
SAME_VALUE(UFORM_CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
SAME_VALUE(UFORM_CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS);
SAME_VALUE(UFORM_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
SAME_VALUE(UFORM_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
SAME_VALUE(UFORM_CUDA_ERROR_ECC_UNCORRECTABLE, CUDA_ERROR_ECC_UNCORRECTABLE);
SAME_VALUE(UFORM_CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_LAUNCH_TIMEOUT);
SAME_VALUE(UFORM_CUDA_ERROR_ASSERT, CUDA_ERROR_ASSERT);
SAME_VALUE(UFORM_CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_HARDWARE_STACK_ERROR);
SAME_VALUE(UFORM_CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_ILLEGAL_INSTRUCTION);
SAME_VALUE(UFORM_CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS);
SAME_VALUE(UFORM_CUDA_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_INVALID_ADDRESS_SPACE);
SAME_VALUE(UFORM_CUDA_ERROR_INVALID_PC, CUDA_ERROR_INVALID_PC);
SAME_VALUE(UFORM_CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
SAME_VALUE(UFORM_CUDA_ERROR_EXTERNAL_DEVICE, CUDA_ERROR_EXTERNAL_DEVICE);
SAME_VALUE(UFORM_CUDA_ERROR_CONTAINED, CUDA_ERROR_CONTAINED);
SAME_VALUE(UFORM_CUDA_ERROR_MPS_CLIENT_TERMINATED, CUDA_ERROR_MPS_CLIENT_TERMINATED);
#if CUDA_VERSION >= 12080 /* tensor memory: Blackwell's toolkits */
SAME_VALUE(UFORM_CUDA_ERROR_TENSOR_MEMORY_LEAK, CUDA_ERROR_TENSOR_MEMORY_LEAK);
#endif
SAME_VALUE(UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
SAME_VALUE(UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_RANGE_SIZE);
SAME_VALUE(UFORM_CU_EVENT_DEFAULT, CU_EVENT_DEFAULT);
SAME_VALUE(UFORM_CU_EVENT_BLOCKING_SYNC, CU_EVENT_BLOCKING_SYNC);
SAME_VALUE(UFORM_CU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING);
SAME_VALUE(UFORM_CU_STREAM_DEFAULT, CU_STREAM_DEFAULT);
SAME_VALUE(UFORM_CU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
SAME_VALUE(UFORM_CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_PORTABLE);
SAME_VALUE(UFORM_CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_DEVICEMAP);
SAME_VALUE(UFORM_CU_MEMHOSTALLOC_WRITECOMBINED, CU_MEMHOSTALLOC_WRITECOMBINED);
SAME_VALUE(UFORM_CU_MEMHOSTREGISTER_PORTABLE, CU_MEMHOSTREGISTER_PORTABLE);
SAME_VALUE(UFORM_CU_MEMHOSTREGISTER_DEVICEMAP, CU_MEMHOSTREGISTER_DEVICEMAP);
SAME_VALUE(UFORM_CU_MEMHOSTREGISTER_IOMEMORY, CU_MEMHOSTREGISTER_IOMEMORY);
SAME_VALUE(UFORM_CU_MEMHOSTREGISTER_READ_ONLY, CU_MEMHOSTREGISTER_READ_ONLY);
SAME_VALUE(UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
SAME_VALUE(UFORM_CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST);
SAME_VALUE(UFORM_CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE);
SAME_VALUE(UFORM_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME_VALUE(UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
SAME_VALUE(UFORM_CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
SAME_VALUE(UFORM_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
SAME_VALUE(UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_VALUE(UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME_VALUE(UFORM_CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_DEFAULT);
SAME_VALUE(UFORM_CU_GET_PROC_ADDRESS_LEGACY_STREAM, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
SAME_VALUE(UFORM_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
SAME_VALUE(UFORM_CU_GET_PROC_ADDRESS_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS);
SAME_VALUE(UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
SAME_VALUE(UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

/* The scalar types, by size and by compatibility. */
_Static_assert(sizeof(uform_cuResult) == sizeof(CUresult), "CUresult size");
_Static_assert(_Generic((uform_cuResult)0, __typeof__((CUresult)0): 1, default: 0), "CUresult type");
_Static_assert(_Generic((uform_cuDevice)0, CUdevice: 1, default: 0), "CUdevice type");
_Static_assert(_Generic((uform_cuDeviceAttribute)0, __typeof__((CUdevice_attribute)0): 1, default: 0),
               "CUdevice_attribute type");
_Static_assert(_Generic((uform_cuProcAddressQueryResult)0, __typeof__((CUdriverProcAddressQueryResult)0): 1,
                        default: 0),
               "CUdriverProcAddressQueryResult type");
_Static_assert(_Generic((uform_cuContext)0, CUcontext: 1, default: 0), "CUcontext type");
_Static_assert(_Generic((uform_cuStream)0, CUstream: 1, default: 0), "CUstream type");
_Static_assert(_Generic((uform_cuEvent)0, CUevent: 1, default: 0), "CUevent type");
_Static_assert(_Generic((uform_cuDevicePtr)0, CUdeviceptr: 1, default: 0), "CUdeviceptr type");
_Static_assert(_Generic((uform_cuHostFn)0, CUhostFn: 1, default: 0), "CUhostFn type");
_Static_assert(_Generic((uform_cuPointerAttribute)0, __typeof__((CUpointer_attribute)0): 1, default: 0),
               "CUpointer_attribute type");
_Static_assert(UFORM_CUDA_ABI_VERSION <= CUDA_VERSION, "uform asks for an ABI newer than this toolkit");

/* Each entry point: our pointer type is compatible with the toolkit's prototype of the symbol
 * cuda.h maps the name to (cuDeviceTotalMem -> cuDeviceTotalMem_v2, cuGetProcAddress ->
 * cuGetProcAddress_v2). Compile time only: nothing links against the driver. */
#define SAME_SIGNATURE(field, base, version, symbol, type)                                        \
    _Static_assert(_Generic((type)0, __typeof__(&field): 1, default: 0), #type " does not match cuda.h");
UFORM_CUDA_ENTRY_POINTS(SAME_SIGNATURE)
UFORM_CUDA_EXECUTION_ENTRY_POINTS(SAME_SIGNATURE)
_Static_assert(_Generic((uform_cuGetProcAddress_t)0, __typeof__(&cuGetProcAddress): 1, default: 0),
               "uform_cuGetProcAddress_t does not match cuda.h");

/* Multicast (UFORM_CUDA_MULTICAST_ENTRY_POINTS): values, scalar types, the two structs' layouts
 * field by field, and each entry point's signature. Three signatures take our own struct (a
 * distinct type from cuda.h's); for them the test instantiates cuda_abi.h's signature macro over
 * cuda.h's struct, so the comparison is still of our declaration's text, struct aside. */
SAME_VALUE(UFORM_CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED);
SAME_VALUE(UFORM_CUDA_ERROR_ILLEGAL_STATE, CUDA_ERROR_ILLEGAL_STATE);
SAME_VALUE(UFORM_CUDA_ERROR_NOT_PERMITTED, CUDA_ERROR_NOT_PERMITTED);
SAME_VALUE(UFORM_CUDA_ERROR_SYSTEM_NOT_READY, CUDA_ERROR_SYSTEM_NOT_READY);
SAME_VALUE(UFORM_CU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_NONE);
SAME_VALUE(UFORM_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
SAME_VALUE(UFORM_CU_MEM_HANDLE_TYPE_FABRIC, CU_MEM_HANDLE_TYPE_FABRIC);
SAME_VALUE(UFORM_CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_DEVICE);
SAME_VALUE(UFORM_CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_PINNED);
SAME_VALUE(UFORM_CU_MEM_ALLOC_GRANULARITY_MINIMUM, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
SAME_VALUE(UFORM_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
SAME_VALUE(UFORM_CU_MULTICAST_GRANULARITY_MINIMUM, CU_MULTICAST_GRANULARITY_MINIMUM);
SAME_VALUE(UFORM_CU_MULTICAST_GRANULARITY_RECOMMENDED, CU_MULTICAST_GRANULARITY_RECOMMENDED);
_Static_assert(_Generic((uform_cuMemGenericAllocationHandle)0, CUmemGenericAllocationHandle: 1, default: 0),
               "CUmemGenericAllocationHandle type");
_Static_assert(_Generic((uform_cuMemAllocationHandleType)0, __typeof__((CUmemAllocationHandleType)0): 1, default: 0),
               "CUmemAllocationHandleType type");
_Static_assert(_Generic((uform_cuMemLocationType)0, __typeof__((CUmemLocationType)0): 1, default: 0),
               "CUmemLocationType type");
_Static_assert(_Generic((uform_cuMemAllocationType)0, __typeof__((CUmemAllocationType)0): 1, default: 0),
               "CUmemAllocationType type");
_Static_assert(_Generic((uform_cuMulticastGranularityFlags)0, __typeof__((CUmulticastGranularity_flags)0): 1,
                        default: 0),
               "CUmulticastGranularity_flags type");

#define SAME_FIELD(ours, theirs, field)                                                            \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field), #theirs "." #field " offset"); \
    _Static_assert(sizeof(((ours *)0)->field) == sizeof(((theirs *)0)->field), #theirs "." #field " size");
#define SAME_LAYOUT(ours, theirs)                                                                  \
    _Static_assert(sizeof(ours) == sizeof(theirs), #theirs " size");                               \
    _Static_assert(_Alignof(ours) == _Alignof(theirs), #theirs " alignment");
SAME_LAYOUT(uform_cuMemLocation, CUmemLocation)
SAME_FIELD(uform_cuMemLocation, CUmemLocation, type)
SAME_FIELD(uform_cuMemLocation, CUmemLocation, id)
SAME_LAYOUT(uform_cuMemAllocationProp, CUmemAllocationProp)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, type)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, requestedHandleTypes)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, location)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, location.type)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, location.id)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, win32HandleMetaData)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, allocFlags)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, allocFlags.compressionType)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, allocFlags.gpuDirectRDMACapable)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, allocFlags.usage)
SAME_FIELD(uform_cuMemAllocationProp, CUmemAllocationProp, allocFlags.reserved)
SAME_LAYOUT(uform_cuMulticastObjectProp, CUmulticastObjectProp)
SAME_FIELD(uform_cuMulticastObjectProp, CUmulticastObjectProp, numDevices)
SAME_FIELD(uform_cuMulticastObjectProp, CUmulticastObjectProp, size)
SAME_FIELD(uform_cuMulticastObjectProp, CUmulticastObjectProp, handleTypes)
SAME_FIELD(uform_cuMulticastObjectProp, CUmulticastObjectProp, flags)
/* The scalar members' types too, not only their sizes. */
_Static_assert(_Generic(((uform_cuMemAllocationProp *)0)->location.id, __typeof__(((CUmemAllocationProp *)0)->location.id): 1,
                        default: 0),
               "CUmemLocation.id type");
_Static_assert(_Generic(((uform_cuMulticastObjectProp *)0)->size, __typeof__(((CUmulticastObjectProp *)0)->size): 1,
                        default: 0),
               "CUmulticastObjectProp.size type");
_Static_assert(_Generic(((uform_cuMulticastObjectProp *)0)->handleTypes,
                        __typeof__(((CUmulticastObjectProp *)0)->handleTypes): 1, default: 0),
               "CUmulticastObjectProp.handleTypes type");

/* One shape per row of the list (a row without one does not build): our type itself where it
 * holds no struct, else our signature macro over cuda.h's struct. */
typedef uform_cuDeviceCanAccessPeer_t toolkit_shape_cuDeviceCanAccessPeer;
typedef UFORM_CU_MEM_CREATE_SIGNATURE(toolkit_shape_cuMemCreate, CUmemAllocationProp);
typedef uform_cuMemRelease_t toolkit_shape_cuMemRelease;
typedef UFORM_CU_MEM_GET_ALLOCATION_GRANULARITY_SIGNATURE(toolkit_shape_cuMemGetAllocationGranularity,
                                                          CUmemAllocationProp);
typedef UFORM_CU_MULTICAST_GET_GRANULARITY_SIGNATURE(toolkit_shape_cuMulticastGetGranularity, CUmulticastObjectProp);
typedef UFORM_CU_MULTICAST_CREATE_SIGNATURE(toolkit_shape_cuMulticastCreate, CUmulticastObjectProp);
typedef uform_cuMulticastAddDevice_t toolkit_shape_cuMulticastAddDevice;
typedef uform_cuMulticastBindMem_t toolkit_shape_cuMulticastBindMem;
typedef uform_cuMulticastUnbind_t toolkit_shape_cuMulticastUnbind;
#define SAME_MULTICAST_SIGNATURE(field, base, version, symbol, type)                              \
    _Static_assert(_Generic((toolkit_shape_##field)0, __typeof__(&field): 1, default: 0),          \
                   #type " does not match cuda.h");
UFORM_CUDA_MULTICAST_ENTRY_POINTS(SAME_MULTICAST_SIGNATURE)
/* Every row's base name appeared no later than this toolkit. */
#define NOT_NEWER_THAN_TOOLKIT(field, base, version, symbol, type)                                \
    _Static_assert(version <= CUDA_VERSION, base " is newer than this toolkit");
UFORM_CUDA_MULTICAST_ENTRY_POINTS(NOT_NEWER_THAN_TOOLKIT)

#define STRINGIFY_(x) #x
#define EXPANDED_NAME_(x) STRINGIFY_(x)

int main(void) {
    /* The dlsym fallback names the symbol cuda.h itself binds a call to. */
#define SAME_SYMBOL(field, base, version, symbol, type)                                           \
    CHECK_EQ_STR(symbol, EXPANDED_NAME_(field));                                                   \
    CHECK_EQ_STR(base, #field);
    UFORM_CUDA_ENTRY_POINTS(SAME_SYMBOL)
    UFORM_CUDA_EXECUTION_ENTRY_POINTS(SAME_SYMBOL)
    UFORM_CUDA_MULTICAST_ENTRY_POINTS(SAME_SYMBOL)
    CHECK_EQ_STR("cuGetProcAddress_v2", EXPANDED_NAME_(cuGetProcAddress));
    CHECK((uintptr_t)UFORM_CU_STREAM_LEGACY == (uintptr_t)CU_STREAM_LEGACY);
    CHECK((uintptr_t)UFORM_CU_STREAM_PER_THREAD == (uintptr_t)CU_STREAM_PER_THREAD);
    TEST_DONE();
}
