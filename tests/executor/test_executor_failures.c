/* A callback's failure stops the call and is its result; bad arguments get clear statuses;
 * a callback calling back into its own executor is refused instead of deadlocking. */
#include "executor/executor_test_util.h"
#include <sched.h>

#include "test.h"

static _Atomic size_t ran;
static uform_executor_t *shared_executor;
static _Atomic uint32_t reentry_status;

static uform_status_t fail_at_3(void *context, size_t task, size_t thread) {
    atomic_fetch_add(&ran, 1);
    return task == 3 ? UFORM_STATUS_CALLBACK_FAILED : UFORM_STATUS_OK;
}
static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }
static uform_status_t reenter(void *context, size_t task, size_t thread) {
    atomic_store(&reentry_status, uform_executor_for_n(shared_executor, NULL, 1, nothing, NULL));
    return UFORM_STATUS_OK;
}
static _Atomic uint32_t nested_other, drain_after_nested, wait_own;
static uform_deferred_t *own_handle;
static uform_deferred_t *_Atomic own_published;
/* A callback that uses another executor, then (wrongly) drains its own: refused, not hung. */
static uform_status_t nest_then_drain(void *context, size_t task, size_t thread) {
    atomic_store(&nested_other, uform_executor_for_n(NULL, NULL, 3, nothing, NULL));
    uform_executor_t *other = context;
    if (other && thread == 0) atomic_store(&nested_other, uform_executor_for_n(other, NULL, 3, nothing, NULL));
    atomic_store(&drain_after_nested, uform_executor_drain(shared_executor, UFORM_MOOD_PARKED));
    return UFORM_STATUS_OK;
}
static uform_status_t wait_for_own(void *context, size_t task, size_t thread) {
    uform_deferred_t *handle;
    while (!(handle = atomic_load(&own_published))) sched_yield();
    atomic_store(&wait_own, uform_deferred_wait(handle, -1));
    return UFORM_STATUS_OK;
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    shared_executor = executor;

    CHECK_STATUS(uform_executor_for_n(executor, NULL, 1000, fail_at_3, NULL), UFORM_STATUS_CALLBACK_FAILED);
    CHECK(atomic_load(&ran) <= 1000);
    CHECK_STATUS(uform_executor_for_n_dynamic(executor, NULL, 1000, fail_at_3, NULL), UFORM_STATUS_CALLBACK_FAILED);
    CHECK_STATUS(uform_executor_for_n(NULL, NULL, 10, fail_at_3, NULL), UFORM_STATUS_CALLBACK_FAILED);
    /* The failure is the call's own: the next call starts clean. */
    CHECK_OK(uform_executor_for_n(executor, NULL, 1000, nothing, NULL));

    /* Re-entry from a callback (on the caller and on a worker) is refused, not deadlocked. */
    CHECK_OK(uform_executor_for_threads(executor, NULL, reenter, NULL));
    CHECK_EQ_INT(atomic_load(&reentry_status), UFORM_STATUS_INVALID_ARGUMENT);
    uform_executor_t *other = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &other));
    CHECK_OK(uform_executor_for_threads(executor, NULL, nest_then_drain, other));
    CHECK_EQ_INT(atomic_load(&nested_other), UFORM_STATUS_OK);
    CHECK_EQ_INT(atomic_load(&drain_after_nested), UFORM_STATUS_INVALID_ARGUMENT);
    /* ...also from the leader, inside a deferred call. */
    uform_call_t deferred_call = UFORM_CALL_INIT;
    uform_deferred_t *handle = NULL;
    deferred_call.deferred = &handle;
    atomic_store(&drain_after_nested, 0);
    CHECK_OK(uform_executor_for_threads(executor, &deferred_call, nest_then_drain, other));
    CHECK_OK(uform_deferred_wait(handle, -1));
    CHECK_EQ_INT(atomic_load(&drain_after_nested), UFORM_STATUS_INVALID_ARGUMENT);
    uform_deferred_free(handle);
    CHECK_OK(uform_executor_free(other));
    /* Waiting, from its executor's callback, for a deferred call that executor has yet to run. */
    uform_deferred_t *blocker = NULL;
    deferred_call.deferred = &blocker;
    CHECK_OK(uform_executor_for_n(executor, &deferred_call, 1, wait_for_own, NULL));
    deferred_call.deferred = &own_handle;
    CHECK_OK(uform_executor_for_n(executor, &deferred_call, 1, nothing, NULL));
    atomic_store(&own_published, own_handle);
    CHECK_OK(uform_deferred_wait(blocker, -1)); /* no deadlock */
    CHECK_EQ_INT(atomic_load(&wait_own), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_OK(uform_deferred_wait(own_handle, -1));
    uform_deferred_free(blocker);
    uform_deferred_free(own_handle);

    /* Bad arguments. */
    CHECK_STATUS(uform_executor_for_n(executor, NULL, 10, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_slices(executor, NULL, 10, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    uform_call_t stale = UFORM_CALL_INIT;
    uform_deferred_t *untouched = (uform_deferred_t *)1;
    uform_call_t refused = UFORM_CALL_INIT;
    refused.deferred = &untouched;
    CHECK_STATUS(uform_executor_for_n(executor, &refused, 10, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(untouched == NULL); /* the handle output is cleared even when validation fails */
    stale.struct_size = 4;
    CHECK_STATUS(uform_executor_for_n(executor, &stale, 10, nothing, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(uform_last_error(), "UFORM_CALL_INIT") != NULL);
    CHECK_OK(uform_executor_for_n(executor, NULL, 0, nothing, NULL)); /* zero tasks is fine */

    uform_executor_t *none = (uform_executor_t *)1;
    CHECK_STATUS(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 0, 0, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1000000, 0, &none),
                 UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(none == NULL);
    CHECK_STATUS(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, (size_t)-1, 0, &none),
                 UFORM_STATUS_INVALID_ARGUMENT);
    int32_t unknown[] = {4093};
    CHECK_STATUS(uform_executor_for_ram(unknown, 1, UFORM_CPU_CLASS_NONE, 0, 0, &none), UFORM_STATUS_NOT_FOUND);
    CHECK(strstr(uform_last_error(), "4093") != NULL);
    int32_t negative[] = {-1};
    CHECK_STATUS(uform_executor_for_ram(negative, 1, UFORM_CPU_CLASS_NONE, 0, 0, &none), UFORM_STATUS_NOT_FOUND);
    int32_t twice[] = {0, 0};
    CHECK_STATUS(uform_executor_for_ram(twice, 2, UFORM_CPU_CLASS_NONE, 0, 0, &none), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_ram(NULL, 3, UFORM_CPU_CLASS_NONE, 0, 0, &none), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_ram(NULL, 0, (uform_cpu_class_t)99, 0, 0, &none), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 0, 1u << 30, &none),
                 UFORM_STATUS_INVALID_ARGUMENT);
    /* A class this CPU cannot run (an Arm class on x86, an x86 class on Arm) is UNSUPPORTED. */
#if defined(__x86_64__)
    CHECK_STATUS(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_APPLE_M2, 0, 0, &none), UFORM_STATUS_UNSUPPORTED);
#else
    CHECK_STATUS(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_INTEL_HASWELL, 0, 0, &none), UFORM_STATUS_UNSUPPORTED);
#endif
    CHECK(strlen(uform_last_error()) > 0);
    /* A lower class is fine and is what calls dispatch as. */
    uform_executor_t *serial = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_SERIAL, 1, 0, &serial));
    CHECK_EQ_INT(uform_executor_cpu_class(serial), UFORM_CPU_CLASS_SERIAL);
    CHECK_OK(uform_executor_free(serial));
    CHECK_EQ_INT(uform_executor_cpu_class(executor), uform_cpu_class_derived());
    CHECK_EQ_INT(uform_executor_cpu_class(NULL), uform_cpu_class_derived());

    /* Domain 0 exists on every Linux machine and is accepted; zero threads takes n - n/8. */
    int32_t zero[] = {0};
    uform_executor_t *local = NULL;
    CHECK_OK(uform_executor_for_ram(zero, 1, UFORM_CPU_CLASS_NONE, 0, 0, &local));
    CHECK_EQ_INT(uform_executor_threads(local), uform_default_threads());
    CHECK_OK(uform_executor_free(local));

    /* on_pool validates, then answers UNSUPPORTED; for_vram finds no GPU; the mesh needs VRAM. */
    int pool_stand_in = 0;
    CHECK_STATUS(uform_executor_on_pool(NULL, 0, UFORM_CPU_CLASS_NONE, &pool_stand_in, 0, &none),
                 UFORM_STATUS_UNSUPPORTED);
    CHECK_STATUS(uform_executor_on_pool(NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, &none), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_on_pool(unknown, 1, UFORM_CPU_CLASS_NONE, &pool_stand_in, 0, &none),
                 UFORM_STATUS_NOT_FOUND);
    CHECK_STATUS(uform_executor_on_pool(NULL, 0, UFORM_CPU_CLASS_NONE, &pool_stand_in, 0, NULL),
                 UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                         &none),
                 UFORM_STATUS_NOT_FOUND);
    int32_t duplicate_devices[] = {0, 0};
    CHECK_STATUS(uform_executor_for_vram(duplicate_devices, 2, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE,
                                         NULL, 0, 0, 0, &none),
                 UFORM_STATUS_INVALID_ARGUMENT);
    void *streams[1] = {&pool_stand_in};
    int32_t first_device[] = {0};
    CHECK_STATUS(uform_executor_for_vram(first_device, 1, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE,
                                         streams, 1, 0, 0, &none),
                 UFORM_STATUS_UNSUPPORTED);
    size_t gpus = 99;
    CHECK_OK(uform_gpu_devices(NULL, 0, &gpus));
    CHECK_EQ_INT(gpus, 0);
    CHECK_STATUS(uform_gpu_devices(NULL, 4, &gpus), UFORM_STATUS_INVALID_ARGUMENT);
    uform_mesh_t *mesh = (uform_mesh_t *)1;
    CHECK_STATUS(uform_mesh_bootstrap(executor, NULL, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(mesh == NULL);
    CHECK(strstr(uform_last_error(), "VRAM executor") != NULL);
    CHECK_STATUS(uform_mesh_bootstrap(NULL, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    uform_mesh_description_t description;
    CHECK_STATUS(uform_mesh_describe(NULL, &description), UFORM_STATUS_INVALID_ARGUMENT);
    uform_mesh_free(NULL);

    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
