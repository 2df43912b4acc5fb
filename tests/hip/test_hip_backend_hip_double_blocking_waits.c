/* The HIP backend's waits block: its events are hipEventBlockingSync ones, so a host thread
 * waiting on one (event_wait) or for the stream (stream_wait) spends no CPU while the device
 * works, where the runtime spins on any other event. The stream is held for 1 s by a host
 * function (the double's hipLaunchHostFunc), and the process's CPU time over each wait must stay
 * under 50 ms, which a spin given even a sixth of a loaded machine's CPU exceeds. */
#include <dlfcn.h>
#include <stdio.h>

#include "gpu/hip/hip_abi.h"
#include "hip_backend_test.h"
#include "gpu/cpu_time.h"

typedef uform_hipError (*launch_host_func_t)(uform_hipStream stream, void (*function)(void *), void *data);

int main(void) {
    use_hip_double("device memory=64M name=only");
    const uform__gpu_backend_t *backend = hip_backend();
    uform__gpu_device_t device;
    hip_device_open(&device, backend, 0);
    void *runtime = dlopen(UFORM_TEST_HIP_DOUBLE, RTLD_NOW | RTLD_NOLOAD);
    CHECK(runtime != NULL);
    launch_host_func_t launch = (launch_host_func_t)dlsym(runtime, "hipLaunchHostFunc");
    CHECK(launch != NULL);

    CHECK_EQ_INT(launch((uform_hipStream)device.stream, sleep_a_second, NULL), UFORM_HIP_SUCCESS);
    CHECK_OK(backend->event_record(&device, 0));
    double before = cpu_ms();
    CHECK_OK(backend->event_wait(&device, 0));
    double event_cpu = cpu_ms() - before;

    CHECK_EQ_INT(launch((uform_hipStream)device.stream, sleep_a_second, NULL), UFORM_HIP_SUCCESS);
    before = cpu_ms();
    CHECK_OK(backend->stream_wait(&device));
    double stream_cpu = cpu_ms() - before;
    printf("waits of 1 s: event_wait %.0f ms CPU, stream_wait %.0f ms CPU\n", event_cpu, stream_cpu);
    if (event_cpu > 50 || stream_cpu > 50)
        TEST_FAIL_("waiting 1 s spent %.0f (event) / %.0f (stream) ms of CPU: the wait spins", event_cpu, stream_cpu);
    backend->close(&device);
    TEST_DONE();
}
