/* A child fork()ed after the HIP runtime loaded gets no backend (UNSUPPORTED), as with CUDA
 * (tests/gpu/test_cuda_backend_cuda_double_contract.c); pinned allocations of 0 bytes are refused
 * as device ones are. */
#include <sys/wait.h>
#include <unistd.h>

#include "hip_backend_test.h"

int main(void) {
    use_hip_double("device memory=64M name=only");
    const uform__gpu_backend_t *backend = hip_backend();
    uform__gpu_device_t device;
    hip_device_open(&device, backend, 0);
    void *pointer = &pointer;
    CHECK_STATUS(backend->host_alloc(&device, 0, &pointer), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(pointer == NULL);

    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        uform_status_t child_status = UFORM_STATUS_OK;
        const uform__gpu_backend_t *inherited = uform__hip_backend(&child_status);
        _exit(inherited == NULL && child_status == UFORM_STATUS_UNSUPPORTED ? 0 : 1);
    }
    int wait_status = 0;
    CHECK(waitpid(child, &wait_status, 0) == child);
    CHECK(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    backend->close(&device);
    TEST_DONE();
}
