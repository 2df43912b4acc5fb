/* The HIP backend's operations against the HIP runtime test double: open (the device's runtime id,
 * a stream, two events, no context handle), device and pinned allocations, host_is_pinned,
 * copies that round-trip through device memory asynchronously, events, stream waits, close. */
#include <pthread.h>
#include <stdint.h>

#include "gpu/hip/hip_loader.h"
#include "hip_backend_test.h"

int main(void) {
    /* Two devices listed out of PCI order: AMD GPU 0 is the runtime's device 1. */
    use_hip_double("device pci=0000:c1:00.0 memory=64M name=second\ndevice pci=0000:05:00.0 memory=64M name=first");
    const uform__gpu_backend_t *backend = hip_backend();
    uform__gpu_device_t device;
    hip_device_open(&device, backend, 0);
    CHECK(device.opened);
    CHECK_EQ_INT(device.native_device, 1);
    CHECK(device.native_context == NULL);
    CHECK(device.stream != NULL);
    CHECK(device.events[0] != NULL && device.events[1] != NULL && device.events[0] != device.events[1]);
    CHECK_OK(backend->make_current(&device));

    enum { BYTES = 1 << 20 };
    void *device_memory = NULL, *pinned = NULL, *back = NULL;
    CHECK_OK(backend->device_alloc(&device, BYTES, &device_memory));
    CHECK(device_memory != NULL);
    CHECK_OK(backend->host_alloc(&device, BYTES, &pinned));
    CHECK_OK(backend->host_alloc(&device, BYTES, &back));
    CHECK(pinned != NULL && back != NULL);
    CHECK(backend->host_is_pinned(&device, pinned, BYTES));
    CHECK(backend->host_is_pinned(&device, (char *)pinned + 100, BYTES - 100));
    CHECK(!backend->host_is_pinned(&device, (char *)pinned + 100, BYTES)); /* runs past its end */
    static unsigned char ordinary[4096];
    CHECK(!backend->host_is_pinned(&device, ordinary, sizeof ordinary));
    CHECK(!backend->host_is_pinned(&device, device_memory, 16)); /* device memory is not pinned host memory */

    /* Round trip: host -> device -> host, ordered on the stream, events marking each half. */
    for (size_t i = 0; i < BYTES; i++) ((unsigned char *)pinned)[i] = (unsigned char)(i * 7 + 3);
    memset(back, 0, BYTES);
    CHECK_OK(backend->copy_to_device_async(&device, device_memory, pinned, BYTES));
    CHECK_OK(backend->event_record(&device, 0));
    CHECK_OK(backend->copy_to_host_async(&device, back, device_memory, BYTES));
    CHECK_OK(backend->event_record(&device, 1));
    CHECK_OK(backend->event_wait(&device, 0));
    CHECK_OK(backend->event_wait(&device, 1));
    CHECK(memcmp(back, pinned, BYTES) == 0);
    /* Unpinned host memory copies too (HIP stages it). */
    memset(ordinary, 0x5A, sizeof ordinary);
    CHECK_OK(backend->copy_to_device_async(&device, device_memory, ordinary, sizeof ordinary));
    CHECK_OK(backend->copy_to_host_async(&device, back, device_memory, sizeof ordinary));
    CHECK_OK(backend->stream_wait(&device));
    CHECK_EQ_INT(((unsigned char *)back)[4095], 0x5A);
    CHECK_EQ_INT(((unsigned char *)back)[4096], (unsigned char)(4096 * 7 + 3));
    CHECK_OK(backend->copy_to_device_async(&device, device_memory, pinned, 0)); /* nothing to do */

    /* The runtime's refusals come back as INVALID_ARGUMENT with its error name. */
    CHECK_STATUS(backend->copy_to_device_async(&device, (char *)device_memory + BYTES - 8, pinned, 16),
                 UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("hipMemcpyAsync");
    CHECK_ERROR_NAMES("hipErrorInvalidValue");
    CHECK(!device.faulted);
    CHECK_STATUS(backend->event_record(&device, UFORM_STAGING_BUFFERS), UFORM_STATUS_INVALID_ARGUMENT);
    void *none = &none;
    CHECK_STATUS(backend->device_alloc(&device, 0, &none), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(none == NULL);

    /* A second device opens on its own runtime id. */
    uform__gpu_device_t second;
    hip_device_open(&second, backend, 1);
    CHECK_EQ_INT(second.native_device, 0);
    uform__gpu_device_t missing;
    hip_device_init(&missing, backend, 2);
    CHECK_STATUS(backend->open(&missing), UFORM_STATUS_NOT_FOUND);
    CHECK(!missing.opened);
    backend->close(&second);
    CHECK(!second.opened && second.stream == NULL);

    backend->device_free(&device, device_memory);
    backend->host_free(&device, back);
    /* Scratch and staging are the executor's (the VRAM executor's close frees them before the
     * backend's close, as with CUDA): close leaves them alone, so they are freed once, afterwards
     * here. */
    void *scratch = NULL;
    CHECK_OK(backend->device_alloc(&device, 4096, &scratch));
    device.scratch = scratch;
    device.scratch_bytes = 4096;
    device.staging = pinned;
    device.staging_bytes = BYTES;
    backend->close(&device);
    CHECK(!device.opened);
    CHECK(device.stream == NULL && device.events[0] == NULL && device.events[1] == NULL);
    CHECK(device.scratch == scratch && device.staging == pinned);
    backend->close(&device); /* a second close does nothing */
    const uform__hip_execution_api_t *api = NULL;
    CHECK_OK(uform__hip_execution(&api));
    uform_hipPointerAttribute attributes;
    memset(&attributes, 0, sizeof attributes);
    CHECK_EQ_INT(api->hipPointerGetAttributes(&attributes, scratch), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(attributes.type, UFORM_HIP_MEMORY_TYPE_DEVICE); /* still allocated */
    backend->device_free(&device, scratch);
    backend->host_free(&device, pinned);
    TEST_DONE();
}
