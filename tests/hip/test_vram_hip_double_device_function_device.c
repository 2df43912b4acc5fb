/* A device function runs with its device current, and the caller's thread (thread 0, which runs
 * the device function of a one-device executor) gets its own current device back afterwards, as
 * with CUDA (tests/gpu/test_vram_cuda_double_device_function_context.c). */
#include <dlfcn.h>
#include <pthread.h>

#include "gpu/hip/hip_abi.h"
#include "hip_double.h"

typedef uform_hipError (*get_device_t)(int *device);
typedef uform_hipError (*set_device_t)(int device);
static get_device_t get_device;

typedef struct seen_t {
    pthread_t caller;
    int on_caller;
    int during;
} seen_t;

static uform_status_t look(void *context, const uform_device_slot_t *slot) {
    seen_t *seen = context;
    seen->on_caller = pthread_equal(pthread_self(), seen->caller);
    CHECK_EQ_INT(get_device(&seen->during), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(seen->during, slot->native_device);
    return UFORM_STATUS_OK;
}

int main(void) {
    /* Listed out of PCI order: AMD GPU 0 is the runtime's device 1. */
    use_hip_double("device pci=0000:c1:00.0 memory=64M\ndevice pci=0000:05:00.0 memory=64M");
    void *runtime = dlopen(UFORM_TEST_HIP_DOUBLE, RTLD_NOW);
    CHECK(runtime != NULL);
    get_device = (get_device_t)dlsym(runtime, "hipGetDevice");
    set_device_t set_device = (set_device_t)dlsym(runtime, "hipSetDevice");
    CHECK(get_device && set_device);
    CHECK_EQ_INT(set_device(0), UFORM_HIP_SUCCESS); /* the caller's own: not the executor's device */
    uform_executor_t *executor = NULL;
    int32_t first = 0;
    CHECK_OK(uform_executor_for_vram(&first, 1, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    seen_t seen = {.caller = pthread_self(), .during = -1};
    CHECK_OK(uform_executor_for_devices(executor, NULL, look, &seen));
    CHECK(seen.on_caller);
    CHECK_EQ_INT(seen.during, 1);
    int now = -1;
    CHECK_EQ_INT(get_device(&now), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(now, 0);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
