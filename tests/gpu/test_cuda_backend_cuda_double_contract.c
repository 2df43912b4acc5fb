/* The CUDA backend meets gpu_backend.h as the HIP backend does (tests/hip/
 * test_hip_backend_hip_double_operations.c, ..._fork.c): allocations of 0 bytes are refused with
 * INVALID_ARGUMENT before the driver is asked, an event index past the device's events is
 * INVALID_ARGUMENT, and a child fork()ed after the driver loaded gets no backend (UNSUPPORTED)
 * instead of the parent's driver state. */
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_double.h"
#include "cuda_backend_test.h"

int main(void) {
    use_cuda_double("device name=only memory=64M");
    const uform__gpu_backend_t *backend = cuda_backend();
    uform__gpu_device_t device;
    cuda_device_open(&device, backend, 0);

    void *pointer = &pointer;
    CHECK_STATUS(backend->device_alloc(&device, 0, &pointer), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(pointer == NULL);
    CHECK_ERROR_NAMES("allocation of 0 bytes");
    pointer = &pointer;
    CHECK_STATUS(backend->host_alloc(&device, 0, &pointer), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(pointer == NULL);
    CHECK_STATUS(backend->event_record(&device, UFORM_STAGING_BUFFERS), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(backend->event_wait(&device, UFORM_STAGING_BUFFERS), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(!device.faulted);

    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        uform_status_t child_status = UFORM_STATUS_OK;
        const uform__gpu_backend_t *inherited = uform__cuda_backend(&child_status);
        _exit(inherited == NULL && child_status == UFORM_STATUS_UNSUPPORTED ? 0 : 1);
    }
    int wait_status = 0;
    CHECK(waitpid(child, &wait_status, 0) == child);
    CHECK(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);

    backend->close(&device);
    CHECK(!device.opened);
    TEST_DONE();
}
