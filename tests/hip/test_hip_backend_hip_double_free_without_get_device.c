/* device_free releases the memory even when hipGetDevice fails (it cannot tell which device the
 * thread had, so it makes the device current and frees anyway): no leak. The double's
 * `fault get_device=N` makes the Nth hipGetDevice and every later one answer
 * hipErrorInvalidDevice; the test calls hipGetDevice itself until that point is reached, then
 * frees. Operations that must report (alloc) answer the failure, naming hipGetDevice. */
#include <dlfcn.h>

#include "gpu/hip/hip_abi.h"
#include "hip_backend_test.h"

typedef uform_hipError (*get_device_t)(int *device);
typedef uform_hipError (*mem_get_info_t)(size_t *free_bytes, size_t *total_bytes);

int main(void) {
    use_hip_double("device memory=64M name=only\nfault get_device=40");
    const uform__gpu_backend_t *backend = hip_backend();
    void *runtime = dlopen(UFORM_TEST_HIP_DOUBLE, RTLD_NOW);
    CHECK(runtime != NULL);
    get_device_t get_device = (get_device_t)dlsym(runtime, "hipGetDevice");
    mem_get_info_t mem_get_info = (mem_get_info_t)dlsym(runtime, "hipMemGetInfo");
    CHECK(get_device && mem_get_info);

    uform__gpu_device_t device;
    hip_device_open(&device, backend, 0);
    void *memory = NULL;
    CHECK_OK(backend->device_alloc(&device, 1u << 20, &memory));
    size_t free_before = 0, total = 0;
    CHECK_EQ_INT(mem_get_info(&free_before, &total), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(total - free_before, 1u << 20);

    int current = 0, calls = 0;
    while (get_device(&current) == UFORM_HIP_SUCCESS) CHECK(++calls < 40);
    CHECK_EQ_INT(get_device(&current), UFORM_HIP_ERROR_INVALID_DEVICE); /* from now on */

    void *more = NULL;
    CHECK_STATUS(backend->device_alloc(&device, 4096, &more), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("hipGetDevice");
    backend->device_free(&device, memory);
    size_t free_after = 0;
    CHECK_EQ_INT(mem_get_info(&free_after, &total), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(free_after, total); /* freed, not leaked */
    backend->close(&device);
    TEST_DONE();
}
