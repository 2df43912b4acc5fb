/* The mesh's data plane end to end, one process with two devices: uform_mesh_bootstrap takes an
 * id and makes a communicator per device (ranks 0 and 1 of 2, in the double's log), the device
 * check's all-reduce runs over them, and uform_mesh_free destroys both. */
#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("", log_path, sizeof log_path);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uform_mesh_t *mesh = NULL;
    CHECK_OK(uform_mesh_bootstrap(executor, NULL, &mesh));
    void *communicators[2] = {NULL, NULL};
    CHECK_OK(uform_mesh_communicator(mesh, 0, &communicators[0]));
    CHECK_OK(uform_mesh_communicator(mesh, 1, &communicators[1]));
    CHECK(communicators[0] && communicators[1] && communicators[0] != communicators[1]);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 2);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_STR(lines[i].kind, "init");
        CHECK_EQ_INT(lines[i].rank, i);
        CHECK_EQ_INT(lines[i].nranks, 2);
        CHECK_EQ_STR(lines[i].id, lines[0].id);
    }
    uform__nccl_communicators_t view = {2, communicators};
    CHECK_OK(uform__nccl_all_reduce_check(executor, &view));
    uform_mesh_free(mesh);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 4);
    CHECK(strcmp(lines[2].kind, "destroy") == 0 && strcmp(lines[3].kind, "destroy") == 0);
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
