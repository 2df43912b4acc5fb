/* The CUDA driver test double's memory keeps the driver's semantics: device memory counts
 * against the configured size (OUT_OF_MEMORY past it, cuMemGetInfo tracking it), `fault
 * alloc=N` fails the Nth cuMemAlloc, freeing an unknown pointer is INVALID_VALUE, pinned host
 * memory is allocated or registered once, and cuPointerGetAttribute tells device from host, gives
 * the range (start and size) of the device allocation holding an address, and refuses a range for
 * host memory, which cuda.h documents the range attributes for no more than device pointers. */
#include <stdlib.h>

#include "cuda_double_driver.h"

/* CU_POINTER_ATTRIBUTE_RANGE_START_ADDR and _RANGE_SIZE of `address`: the whole range holding it.
 * The outputs start as all-ones, so a narrower write than CUdeviceptr / size_t would show. */
static void check_range(cuda_double_t *cu, uintptr_t address, uintptr_t start, size_t bytes) {
    uform_cuDevicePtr got_start = ~0ull;
    size_t got_bytes = ~(size_t)0;
    CHECK_CU(cu->cuPointerGetAttribute(&got_start, UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address),
             UFORM_CUDA_SUCCESS);
    CHECK_CU(cu->cuPointerGetAttribute(&got_bytes, UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE, address), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(got_start, start);
    CHECK_EQ_INT(got_bytes, bytes);
}

/* An address in no device allocation has no range. */
static void check_no_range(cuda_double_t *cu, uintptr_t address) {
    uform_cuDevicePtr start = 7;
    size_t bytes = 7;
    CHECK_CU(cu->cuPointerGetAttribute(&start, UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address),
             UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu->cuPointerGetAttribute(&bytes, UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE, address),
             UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(start, 7); /* untouched */
    CHECK_EQ_INT(bytes, 7);
}

int main(void) {
    cuda_double_t cu = cuda_double_open("device memory=1M\ndevice memory=2M\nfault alloc=3");
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);

    size_t free_bytes = 0, total_bytes = 0;
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(total_bytes, 2u << 20); /* the current context's device */
    CHECK_EQ_INT(free_bytes, 2u << 20);
    CHECK_CU(cu.cuMemGetInfo(NULL, &total_bytes), UFORM_CUDA_ERROR_INVALID_VALUE);

    uform_cuDevicePtr a = 0, b = 0, c = 0;
    CHECK_CU(cu.cuMemAlloc(&a, 0), UFORM_CUDA_ERROR_INVALID_VALUE); /* not counted as a call */
    CHECK_CU(cu.cuMemAlloc(NULL, 16), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemAlloc(&a, 1u << 20), UFORM_CUDA_SUCCESS);       /* call 1 */
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(free_bytes, 1u << 20);
    CHECK_CU(cu.cuMemAlloc(&b, (1u << 20) + 1), UFORM_CUDA_ERROR_OUT_OF_MEMORY); /* call 2: too big */
    CHECK_CU(cu.cuMemAlloc(&b, 100), UFORM_CUDA_ERROR_OUT_OF_MEMORY);            /* call 3: the fault */
    CHECK_CU(cu.cuMemAlloc(&b, 100), UFORM_CUDA_SUCCESS);                         /* call 4 */
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(free_bytes, (1u << 20) - 256); /* whole 256-byte granules */
    CHECK(a % 256 == 0 && b % 256 == 0 && a != b);

    unsigned type = 0;
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, b + 99), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(type, UFORM_CU_MEMORYTYPE_DEVICE);
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, b + 100),
             UFORM_CUDA_ERROR_INVALID_VALUE); /* past its end */
    CHECK_CU(cu.cuPointerGetAttribute(NULL, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, b), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuPointerGetAttribute(&type, 1, b), UFORM_CUDA_ERROR_INVALID_VALUE); /* not emulated */

    /* Device ranges: the cuMemAlloc allocation holding the address, from anywhere inside it. */
    check_range(&cu, a, a, 1u << 20);
    check_range(&cu, a + 12345, a, 1u << 20);
    check_range(&cu, a + (1u << 20) - 1, a, 1u << 20);
    check_range(&cu, b, b, 100);
    check_range(&cu, b + 99, b, 100);
    check_no_range(&cu, b + 100); /* past its end (inside its granule) */
    CHECK_CU(cu.cuPointerGetAttribute(NULL, UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE, b), UFORM_CUDA_ERROR_INVALID_VALUE);

    /* Frees: only an allocation's start, once. */
    CHECK_CU(cu.cuMemFree(b + 16), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemFree(b), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFree(b), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemFree(a), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(free_bytes, 2u << 20);
    CHECK_CU(cu.cuMemAlloc(&c, 2u << 20), UFORM_CUDA_SUCCESS); /* all of it, again */
    CHECK_CU(cu.cuMemFree(c), UFORM_CUDA_SUCCESS);

    /* Pinned host memory: cuMemHostAlloc'd, and registered. */
    void *pinned = NULL;
    CHECK_CU(cu.cuMemHostAlloc(&pinned, 0, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostAlloc(&pinned, 64, 0x80), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostAlloc(&pinned, 100, UFORM_CU_MEMHOSTALLOC_PORTABLE), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uintptr_t)pinned),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(type, UFORM_CU_MEMORYTYPE_HOST);
    check_no_range(&cu, (uintptr_t)pinned + 50); /* host memory: no documented range */
    check_no_range(&cu, (uintptr_t)pinned);
    CHECK_CU(cu.cuMemFree((uintptr_t)pinned), UFORM_CUDA_ERROR_INVALID_VALUE); /* not device memory */
    CHECK_CU(cu.cuMemHostRegister((char *)pinned + 8, 8, 0), UFORM_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK_CU(cu.cuMemFreeHost(pinned), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFreeHost(pinned), UFORM_CUDA_ERROR_INVALID_VALUE);

    char *buffer = malloc(8192);
    CHECK(buffer != NULL);
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uintptr_t)buffer),
             UFORM_CUDA_ERROR_INVALID_VALUE); /* ordinary host memory is no CUDA pointer */
    check_no_range(&cu, (uintptr_t)buffer + 10);
    CHECK_CU(cu.cuMemHostRegister(buffer, 0, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostRegister(buffer, 4096, 0x10), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemHostUnregister(buffer), UFORM_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK_CU(cu.cuMemHostRegister(buffer, 4096, UFORM_CU_MEMHOSTREGISTER_PORTABLE), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemHostRegister(buffer + 4000, 100, 0), UFORM_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK_CU(cu.cuMemHostRegister(buffer + 4096, 4096, 0), UFORM_CUDA_SUCCESS); /* next to it is fine */
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uintptr_t)buffer + 10),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(type, UFORM_CU_MEMORYTYPE_HOST);
    /* Registered memory is host memory through its whole registration, and has no range. */
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uintptr_t)buffer + 8191),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(type, UFORM_CU_MEMORYTYPE_HOST);
    check_no_range(&cu, (uintptr_t)buffer + 10);
    check_no_range(&cu, (uintptr_t)buffer + 8191);
    CHECK_CU(cu.cuMemHostUnregister(buffer + 10), UFORM_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK_CU(cu.cuMemHostUnregister(buffer), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uintptr_t)buffer + 10),
             UFORM_CUDA_ERROR_INVALID_VALUE); /* pageable again */
    CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uintptr_t)buffer + 4096),
             UFORM_CUDA_SUCCESS); /* the other registration stays */
    CHECK_CU(cu.cuMemHostUnregister(buffer + 4096), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemHostUnregister(buffer), UFORM_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    free(buffer);

    /* The last release frees the context's device memory and ends its streams. */
    CHECK_CU(cu.cuMemAlloc(&a, 4096), UFORM_CUDA_SUCCESS);
    uform_cuStream stream = NULL;
    CHECK_CU(cu.cuStreamCreate(&stream, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(free_bytes, 2u << 20);
    CHECK_CU(cu.cuStreamQuery(stream), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuMemFree(a), UFORM_CUDA_ERROR_INVALID_VALUE); /* gone with the context */
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
