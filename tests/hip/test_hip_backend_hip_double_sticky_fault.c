/* A sticky device fault through the HIP backend: the HIP runtime test double's `fault sticky=2`
 * faults the device at the second stream operation (as an illegal address does on a GPU). The
 * enqueue itself succeeds; the wait answers DEVICE_FAULT naming hipErrorIllegalAddress and sets
 * `faulted`; later calls keep failing; close still releases everything; another device works. */
#include "hip_backend_test.h"

int main(void) {
    use_hip_double("device memory=1M\ndevice memory=1M\nfault sticky=2");
    const uform__gpu_backend_t *backend = hip_backend();
    uform__gpu_device_t device, other;
    hip_device_init(&device, backend, 0);
    hip_device_init(&other, backend, 1);
    CHECK_OK(backend->open(&device));
    CHECK_OK(backend->open(&other));
    void *device_memory = NULL, *pinned = NULL;
    CHECK_OK(backend->device_alloc(&device, 4096, &device_memory));
    CHECK_OK(backend->host_alloc(&device, 4096, &pinned));
    memset(pinned, 1, 4096);
    CHECK_OK(backend->copy_to_device_async(&device, device_memory, pinned, 4096)); /* operation 1 */
    CHECK_OK(backend->copy_to_host_async(&device, pinned, device_memory, 4096));   /* 2: faults */
    CHECK(!device.faulted); /* reported asynchronously, at the next wait */
    CHECK_STATUS(backend->stream_wait(&device), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("hipErrorIllegalAddress");
    CHECK_ERROR_NAMES("(waiting for the stream)"); /* a blocking event recorded and waited for */
    CHECK(device.faulted);
    CHECK_STATUS(backend->copy_to_device_async(&device, device_memory, pinned, 4096), UFORM_STATUS_DEVICE_FAULT);
    CHECK_STATUS(backend->event_record(&device, 0), UFORM_STATUS_DEVICE_FAULT);
    void *more = NULL;
    CHECK_STATUS(backend->device_alloc(&device, 64, &more), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("hipErrorIllegalAddress");

    /* The other device is unaffected. */
    void *other_memory = NULL;
    CHECK_OK(backend->device_alloc(&other, 4096, &other_memory));
    CHECK_OK(backend->copy_to_device_async(&other, other_memory, pinned, 4096));
    CHECK_OK(backend->event_record(&other, 0));
    CHECK_OK(backend->event_wait(&other, 0));
    CHECK(!other.faulted);
    backend->device_free(&other, other_memory);
    backend->close(&other);

    backend->device_free(&device, device_memory); /* refused by the runtime, ignored */
    backend->host_free(&device, pinned);
    backend->close(&device);
    CHECK(!device.opened && device.stream == NULL);
    TEST_DONE();
}
