/* With NCCL older than 2.14 (the double told `version 21300`) the hand-off initialises blocking
 * communicators, and what uform_mesh_communicator hands out is blocking, as mesh.h says: a
 * collective answers ncclSuccess, never ncclInProgress, and the next call needs no polling. */
#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("version 21300", log_path, sizeof log_path);
    uform__nccl_api_t nccl = nccl_double_open("version 21300");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uform_mesh_t *mesh = NULL;
    CHECK_OK(uform_mesh_bootstrap(executor, NULL, &mesh));
    uform_ncclComm comms[2] = {NULL, NULL};
    for (size_t d = 0; d < 2; d++) CHECK_OK(uform_mesh_communicator(mesh, d, (void **)&comms[d]));
    float values[2] = {1.0f, 2.0f};
    for (int r = 0; r < 2; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(&values[r], &values[r], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[r], NULL),
                     UFORM_NCCL_SUCCESS);
    CHECK(values[0] == 3.0f && values[1] == 3.0f);
    int rank = -1;
    CHECK_EQ_INT(nccl.ncclCommUserRank(comms[1], &rank), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(rank, 1);
    uform__nccl_communicators_t view = {2, (void **)comms};
    CHECK_OK(uform__nccl_all_reduce_check(executor, &view));
    uform_mesh_free(mesh);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 4);
    for (int i = 2; i < 4; i++) CHECK(strcmp(lines[i].kind, "destroy") == 0 && !lines[i].aborted);
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
