/* Every function of mesh.h gives the calling thread back its current CUDA context: a thread with
 * device 1's primary context current (as PyTorch on cuda:1 leaves it) bootstraps a mesh over two
 * devices with the NCCL double (the hand-off makes each device current in turn), describes it,
 * asks for both communicators and frees it; after each, device 1's context is still current. The
 * same with no context current (NULL stays NULL). */
#include <pthread.h>

#include "nccl_double.h"
#include "vram/vram_double.h"

static cuda_double_t cu;
static uform_executor_t *executor;

static void mesh_keeps(uform_cuContext mine) {
    CHECK_CU(cu.cuCtxSetCurrent(mine), UFORM_CUDA_SUCCESS);
    uform_mesh_t *mesh = NULL;
    CHECK_OK(uform_mesh_bootstrap(executor, NULL, &mesh));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_mesh_bootstrap");
    uform_mesh_description_t description;
    CHECK_OK(uform_mesh_describe(mesh, &description));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_mesh_describe");
    void *communicator = NULL;
    for (size_t d = 0; d < 2; d++) {
        CHECK_OK(uform_mesh_communicator(mesh, d, &communicator));
        CHECK_CURRENT_CONTEXT(&cu, mine, "uform_mesh_communicator");
    }
    uform_mesh_free(mesh);
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_mesh_free");
}

static void *on_a_thread(void *unused) {
    (void)unused;
    CHECK_CURRENT_CONTEXT(&cu, NULL, "starting a thread");
    mesh_keeps(NULL);
    uform_cuContext other = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&other, 1), UFORM_CUDA_SUCCESS);
    mesh_keeps(other);
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS);
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
    TEST_DONE();
}
