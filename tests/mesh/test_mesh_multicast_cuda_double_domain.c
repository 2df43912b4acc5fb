/* The multicast probe and the NVLink extent against the CUDA driver test double: eight GPUs
 * with multicast in one NVLink group are one domain of 8 and the probe succeeds, over all of
 * them and over any subset; the probe leaves no device memory behind, keeps the caller's
 * current context and last error, and may run again. Executors that are not VRAM ones, and a
 * fork()ed child, get extent 1 and "no" without calling the driver. */
#include <sys/wait.h>
#include <unistd.h>

#include "mesh/mesh_multicast_double.h"

static const char config[] = "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n";

static void *probe_thread(void *executor) {
    bool all = true;
    for (int round = 0; round < 20; round++) all &= uform__mesh_multicast_probe(executor, NULL, 0);
    return all ? (void *)1 : NULL;
}

int main(void) {
    cuda_double_t cu = vram_double_open(config);
    char why[256];
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 8);
    CHECK(probe_leaves_nothing(&cu, 8, executor, why, sizeof why));
    CHECK(probe_leaves_nothing(&cu, 8, executor, why, sizeof why)); /* again: nothing was left */

    /* With a context of the caller's current, and a last error of its own, both survive. */
    uform_cuContext mine = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&mine, 6), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(mine), UFORM_CUDA_SUCCESS);
    size_t none = 0;
    CHECK_STATUS(uform_gpu_devices(NULL, 1, &none), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(uform_last_error()[0] != '\0');
    CHECK(probe_leaves_nothing(&cu, 8, executor, why, sizeof why));
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 8);
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(6), UFORM_CUDA_SUCCESS);
    /* A NULL reason is allowed. */
    CHECK(uform__mesh_multicast_probe(executor, NULL, 0));

    /* Any subset of the domain is a domain of its own size; one GPU is extent 1, and its probe
     * (a team of one) still succeeds. */
    const int32_t three[] = {1, 4, 7};
    uform_executor_t *subset = vram_executor(three, 3, 0);
    CHECK_EQ_INT(uform__mesh_multimem_extent(subset), 3);
    CHECK(probe_leaves_nothing(&cu, 8, subset, why, sizeof why));
    const int32_t one[] = {5};
    uform_executor_t *single = vram_executor(one, 1, 0);
    CHECK_EQ_INT(uform__mesh_multimem_extent(single), 1);
    CHECK(probe_leaves_nothing(&cu, 8, single, why, sizeof why));
    CHECK_OK(uform_executor_free(single));

    /* Probes at once on several threads, over overlapping executors: each makes and releases
     * its own objects, all succeed, nothing is left. */
    pthread_t threads[4];
    uform_executor_t *targets[4] = {executor, subset, executor, subset};
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&threads[i], NULL, probe_thread, targets[i]) == 0);
    for (int i = 0; i < 4; i++) {
        void *answer = NULL;
        pthread_join(threads[i], &answer);
        CHECK(answer == (void *)1);
    }
    CHECK_EQ_INT(used_on_devices(&cu, 8), 0);

    /* Not a VRAM executor; no executor. */
    uform_executor_t *ram = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &ram));
    CHECK_EQ_INT(uform__mesh_multimem_extent(ram), 1);
    CHECK(!probe_leaves_nothing(&cu, 8, ram, why, sizeof why));
    CHECK_WHY_NAMES(why, "not a VRAM executor");
    CHECK_OK(uform_executor_free(ram));
    CHECK_EQ_INT(uform__mesh_multimem_extent(NULL), 1);
    CHECK(!uform__mesh_multicast_probe(NULL, why, sizeof why));

    /* A fork()ed child does not call its parent's driver: extent 1, and no. */
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        char reason[256] = "";
        bool probed = uform__mesh_multicast_probe(executor, reason, sizeof reason);
        size_t extent = uform__mesh_multimem_extent(executor);
        _exit(!probed && extent == 1 && strstr(reason, "fork") ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    CHECK_OK(uform_executor_free(subset));
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
