/* The device check's all-reduce gives the calling thread back its current CUDA context, as every
 * mesh function does: it makes each device current in turn (prepare, collective, read-back), which
 * would leave the last device's primary context current. Checked after the check alone (over
 * communicators of uform__nccl_communicators_create) and after a bootstrap followed by the check
 * (over the mesh's communicators), with no context current, with device 0's primary context
 * current (not the one the check makes current last) and with device 1's. */
#include <pthread.h>

#include "nccl_double.h"
#include "vram/vram_double.h"

static cuda_double_t cu;
static uform_executor_t *executor;

static void check_keeps(uform_cuContext mine) {
    CHECK_CU(cu.cuCtxSetCurrent(mine), UFORM_CUDA_SUCCESS);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;
    CHECK_OK(uform__nccl_communicators_create(executor, id, 0, 2, &communicators));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform__nccl_communicators_create");
    CHECK_OK(uform__nccl_all_reduce_check(executor, &communicators));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform__nccl_all_reduce_check");
    uform__nccl_communicators_destroy(&communicators);
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform__nccl_communicators_destroy");

    uform_mesh_t *mesh = NULL;
    CHECK_OK(uform_mesh_bootstrap(executor, NULL, &mesh));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_mesh_bootstrap");
    void *handles[2] = {NULL, NULL};
    for (size_t d = 0; d < 2; d++) CHECK_OK(uform_mesh_communicator(mesh, d, &handles[d]));
    uform__nccl_communicators_t view = {2, handles};
    CHECK_OK(uform__nccl_all_reduce_check(executor, &view));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform__nccl_all_reduce_check after uform_mesh_bootstrap");
    uform_mesh_free(mesh);
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_mesh_free");
}

static void *on_a_thread(void *unused) {
    (void)unused;
    CHECK_CURRENT_CONTEXT(&cu, NULL, "starting a thread");
    check_keeps(NULL);
    for (int device = 0; device < 2; device++) {
        uform_cuContext other = NULL;
        CHECK_CU(cu.cuDevicePrimaryCtxRetain(&other, device), UFORM_CUDA_SUCCESS);
        check_keeps(other);
        CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
        CHECK_CU(cu.cuDevicePrimaryCtxRelease(device), UFORM_CUDA_SUCCESS);
    }
    return NULL;
}

int main(void) {
    cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("", NULL, 0);
    executor = vram_executor(NULL, 0, 0);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, on_a_thread, NULL) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK_OK(uform_executor_free(executor));
    CHECK_CURRENT_CONTEXT(&cu, NULL, "uform_executor_free (the main thread made nothing current)");
    TEST_DONE();
}
