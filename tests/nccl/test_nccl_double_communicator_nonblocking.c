/* What uform_mesh_communicator hands out is what mesh.h says: with NCCL 2.14 and newer (the
 * double's default version) a non-blocking communicator. A collective on it answers ncclInProgress;
 * another call before ncclCommGetAsyncError says ncclSuccess is refused (NCCL's misuse); polled, it
 * completes. uform_mesh_free while work is still in progress aborts the communicators (the double's
 * log) rather than destroy them, which NCCL would refuse. The double's work takes 2 s here. */
#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("delay 2000", log_path, sizeof log_path);
    uform__nccl_api_t nccl = nccl_double_open("delay 2000");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uform_mesh_t *mesh = NULL;
    CHECK_OK(uform_mesh_bootstrap(executor, NULL, &mesh));
    uform_ncclComm comms[2] = {NULL, NULL};
    for (size_t d = 0; d < 2; d++) CHECK_OK(uform_mesh_communicator(mesh, d, (void **)&comms[d]));

    /* One collective per rank, outside a group: each answers ncclInProgress. */
    float values[2] = {1.0f, 2.0f};
    for (int r = 0; r < 2; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(&values[r], &values[r], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[r], NULL),
                     UFORM_NCCL_IN_PROGRESS);
    int rank = -1;
    CHECK_EQ_INT(nccl.ncclCommUserRank(comms[0], &rank), UFORM_NCCL_INVALID_ARGUMENT); /* not polled yet */
    int polls = 0;
    for (int r = 0; r < 2; r++) CHECK_EQ_INT(nccl_poll(&nccl, comms[r], 30.0, &polls), UFORM_NCCL_SUCCESS);
    CHECK(polls > 0);
    CHECK(values[0] == 3.0f && values[1] == 3.0f);
    CHECK_EQ_INT(nccl.ncclCommUserRank(comms[1], &rank), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(rank, 1);

    /* A group left in progress when the mesh is freed: aborted, its buffers never written. */
    float late[2] = {-1.0f, -1.0f};
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 2; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(&values[r], &late[r], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[r], NULL),
                     UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_IN_PROGRESS);
    uform_mesh_free(mesh);
    CHECK(late[0] == -1.0f && late[1] == -1.0f);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 4);
    for (int i = 2; i < 4; i++) CHECK(strcmp(lines[i].kind, "destroy") == 0 && lines[i].aborted);
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
