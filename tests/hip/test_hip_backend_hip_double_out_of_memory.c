/* Out of memory through the HIP backend: the HIP runtime test double's `fault alloc=2` makes the
 * second hipMalloc fail, and a device of 1 MiB cannot hold 2 MiB; both are OUT_OF_MEMORY with
 * "hipErrorOutOfMemory" in the message, and the device works on (nothing sticky). */
#include "hip_backend_test.h"

int main(void) {
    use_hip_double("device memory=1M\nfault alloc=2");
    const uform__gpu_backend_t *backend = hip_backend();
    uform__gpu_device_t device;
    hip_device_open(&device, backend, 0);
    void *first = NULL, *second = &second, *third = NULL;
    CHECK_OK(backend->device_alloc(&device, 4096, &first));
    CHECK_STATUS(backend->device_alloc(&device, 4096, &second), UFORM_STATUS_OUT_OF_MEMORY);
    CHECK(second == NULL);
    CHECK_ERROR_NAMES("hipErrorOutOfMemory");
    CHECK_ERROR_NAMES("hipMalloc(4096 bytes)");
    CHECK_STATUS(backend->device_alloc(&device, 2 << 20, &third), UFORM_STATUS_OUT_OF_MEMORY);
    CHECK_ERROR_NAMES("hipErrorOutOfMemory");
    CHECK(!device.faulted);
    CHECK_OK(backend->device_alloc(&device, 4096, &third));
    CHECK_OK(backend->stream_wait(&device));
    backend->device_free(&device, first);
    backend->device_free(&device, third);
    backend->close(&device);
    TEST_DONE();
}
