/* A mesh holds its executor, against the CUDA driver test double: freeing the executor first
 * answers OK and leaves its threads and streams to the mesh, whose free closes it. Also the
 * mesh's refusals that need no peers: NULL and RAM executors, NULL output, bad options, a
 * forked child, a mesh without a data plane asked for a communicator. */
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/cuda_double.h"
#include "test.h"

/* Threads of this process named uform:ram:* (the executor's host decoders). */
static int uform_threads(void) {
    DIR *tasks = opendir("/proc/self/task");
    CHECK(tasks != NULL);
    int count = 0;
    for (struct dirent *entry; (entry = readdir(tasks));) {
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
        FILE *file = fopen(path, "r");
        if (!file) continue;
        if (fgets(name, sizeof name, file) && !strncmp(name, "uform:ram:", 10)) count++;
        fclose(file);
    }
    closedir(tasks);
    return count;
}

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    setenv("UFORM_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1); /* a machine without NCCL */
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    int threads = uform_threads();
    CHECK(threads >= 1);

    /* Refusals. */
    uform_mesh_t *mesh = (uform_mesh_t *)1;
    CHECK_STATUS(uform_mesh_bootstrap(NULL, NULL, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(mesh == NULL);
    uform_executor_t *ram = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &ram));
    CHECK_STATUS(uform_mesh_bootstrap(ram, NULL, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("VRAM executor");
    CHECK_OK(uform_executor_free(ram));
    CHECK_STATUS(uform_mesh_bootstrap(executor, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
    options.host_domain_count = 2;
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT); /* no directory */
    options = (uform_mesh_options_t)UFORM_MESH_OPTIONS_INIT;
    options.timeout_seconds = -1;
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    options.struct_size = 8;
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT);

    /* A forked child answers FORKED. */
    pid_t child = fork();
    if (child == 0) _exit(uform_mesh_bootstrap(executor, NULL, &mesh) == UFORM_STATUS_FORKED ? 0 : 1);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* A one-process mesh. Without NCCL it has no data plane, and says so. */
    CHECK_OK(uform_mesh_bootstrap(executor, NULL, &mesh));
    uform_mesh_description_t d;
    CHECK_OK(uform_mesh_describe(mesh, &d));
    CHECK_EQ_INT(d.gpus_per_host_domain, 2);
    CHECK_EQ_INT(d.gpus_per_colocated_domain, 2);
    CHECK_EQ_INT(d.first_gpu_index, 0);
    CHECK_EQ_INT(d.gpu_class, UFORM_GPU_CLASS_NVIDIA_HOPPER);
    void *communicator = NULL;
    CHECK_STATUS(uform_mesh_communicator(mesh, 0, &communicator), UFORM_STATUS_NOT_FOUND);
    CHECK_ERROR_NAMES("no data plane");
    CHECK_STATUS(uform_mesh_communicator(mesh, 2, &communicator), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_mesh_communicator(NULL, 0, &communicator), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_mesh_describe(NULL, &d), UFORM_STATUS_INVALID_ARGUMENT);

    /* In a forked child: the executor freed first (memory only), then the mesh, which must not
     * touch the executor's freed memory (valgrind and ASan saw it do so once). */
    child = fork();
    if (child == 0) {
        uform_executor_free(executor);
        uform_mesh_free(mesh);
        _exit(0);
    }
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* The executor freed first: OK, and its threads live on for the mesh... */
    CHECK_OK(uform_executor_free(executor));
    CHECK_EQ_INT(uform_threads(), threads);
    CHECK_OK(uform_mesh_describe(mesh, &d));
    /* ...until the mesh goes. */
    uform_mesh_free(mesh);
    /* Joined; their /proc entries go a moment after the join returns (wide under qemu-user). */
    int left = uform_threads();
    for (int attempt = 0; attempt < 200 && left; attempt++, left = uform_threads()) usleep(10000);
    CHECK_EQ_INT(left, 0);
    uform_mesh_free(NULL);
    TEST_DONE();
}
