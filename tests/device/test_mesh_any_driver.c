/* A one-process mesh over every GPU of whatever CUDA driver loads, and, where NCCL loads, one
 * all-reduce through the communicators it hands out (each rank r adds r + 1; every GPU must read
 * back n(n+1)/2). On a machine with a GPU this is scripts/device-check's mesh step; in the suite
 * it runs against the CUDA driver and NCCL test doubles (tests.cmake). Without any GPU it is
 * skipped (exit 77). */
#include <stdio.h>

#include "mesh/nccl/nccl_loader.h"
#include "test.h"

int main(void) {
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    if (!count) {
        printf("SKIPPED: no GPU\n");
        return 77;
    }
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    uform_mesh_t *mesh = NULL;
    CHECK_OK(uform_mesh_bootstrap(executor, NULL, &mesh));
    uform_mesh_description_t d;
    CHECK_OK(uform_mesh_describe(mesh, &d));
    size_t devices = uform_executor_devices(executor);
    CHECK_EQ_INT(d.gpus_per_host_domain, devices);
    CHECK_EQ_INT(d.gpus_per_colocated_domain, devices);
    printf("mesh: %zu GPUs, multimem domain of %zu, tier %s, class %s\n", devices, d.gpus_per_multimem_domain,
           d.multimem_tier == UFORM_MULTIMEM_TIER_SWITCH_REDUCED ? "switch_reduced" : "peer_read",
           uform_gpu_class_name((uform_gpu_class_t)d.gpu_class));
    void *first = NULL;
    uform_status_t status = uform_mesh_communicator(mesh, 0, &first);
    if (status == UFORM_STATUS_OK) {
        void *communicators[64];
        for (size_t i = 0; i < devices && i < 64; i++) CHECK_OK(uform_mesh_communicator(mesh, i, &communicators[i]));
        uform__nccl_communicators_t borrowed = {devices, communicators};
        CHECK_OK(uform__nccl_all_reduce_check(executor, &borrowed));
        printf("NCCL all-reduce over %zu GPUs: every GPU read back %zu\n", devices, devices * (devices + 1) / 2);
    } else {
        CHECK_STATUS(status, UFORM_STATUS_NOT_FOUND);
        printf("no NCCL data plane: %s\n", uform_last_error());
    }
    CHECK_OK(uform_executor_free(executor)); /* the mesh holds it */
    uform_mesh_free(mesh);
    TEST_DONE();
}
