/* The CUDA backend's host_is_pinned asks what cuda.h documents for host memory (the memory type at
 * both ends of the range), not the range attributes, which cuda.h documents for device pointers
 * and the double, like a driver may, refuses for host memory: cuMemHostAlloc'd and registered
 * memory is pinned, inside and to its last byte; a range running past its end, ordinary memory
 * and device memory are not. */
#include <stdlib.h>

#include "cuda_double.h"
#include "cuda_double_driver.h"
#include "cuda_backend_test.h"

int main(void) {
    use_cuda_double("device name=only memory=64M");
    cuda_double_t cu = cuda_double_open("device name=only memory=64M");
    const uform__gpu_backend_t *backend = cuda_backend();
    uform__gpu_device_t device;
    cuda_device_open(&device, backend, 0);

    enum { BYTES = 1 << 20 };
    void *pinned = NULL, *device_memory = NULL;
    CHECK_OK(backend->host_alloc(&device, BYTES, &pinned));
    CHECK_OK(backend->device_alloc(&device, 4096, &device_memory));
    CHECK(backend->host_is_pinned(&device, pinned, BYTES));
    CHECK(backend->host_is_pinned(&device, (char *)pinned + 100, BYTES - 100));
    CHECK(backend->host_is_pinned(&device, (char *)pinned + BYTES - 1, 1));
    CHECK(!backend->host_is_pinned(&device, (char *)pinned + 100, BYTES)); /* runs past its end */
    CHECK(!backend->host_is_pinned(&device, device_memory, 16));           /* device memory */
    char *ordinary = malloc(3 * 4096);
    CHECK(ordinary != NULL);
    CHECK(!backend->host_is_pinned(&device, ordinary, 4096));

    /* Registered memory, through the double with the backend's context current. */
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemHostRegister(ordinary, 2 * 4096, 0), UFORM_CUDA_SUCCESS);
    CHECK(backend->host_is_pinned(&device, ordinary, 2 * 4096));
    CHECK(backend->host_is_pinned(&device, ordinary + 10, 4096));
    CHECK(!backend->host_is_pinned(&device, ordinary, 3 * 4096)); /* its last page is not registered */
    CHECK_CU(cu.cuMemHostUnregister(ordinary), UFORM_CUDA_SUCCESS);
    CHECK(!backend->host_is_pinned(&device, ordinary, 4096));
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);

    free(ordinary);
    backend->device_free(&device, device_memory);
    backend->host_free(&device, pinned);
    backend->close(&device);
    TEST_DONE();
}
