/* The device check's all-reduce when NCCL reports its failure asynchronously (the double's
 * `fault collective=ncclRemoteError`: the group end answers ncclInProgress, then
 * ncclCommGetAsyncError the error): the check answers IO_ERROR naming the all-reduce, the rank and
 * NCCL's error, and has aborted both communicators (the double's log) before freeing its buffers. */
#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("fault collective=ncclRemoteError", log_path, sizeof log_path);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;
    CHECK_OK(uform__nccl_communicators_create(executor, id, 0, 2, &communicators));
    CHECK_STATUS(uform__nccl_all_reduce_check(executor, &communicators), UFORM_STATUS_IO_ERROR);
    CHECK_ERROR_NAMES("NCCL all-reduce check: the all-reduce of rank 0 of 2 (device 0) failed: ncclRemoteError");
    CHECK(communicators.communicators[0] == NULL && communicators.communicators[1] == NULL);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 4);
    for (int i = 2; i < 4; i++) CHECK(strcmp(lines[i].kind, "destroy") == 0 && lines[i].aborted);
    uform__nccl_communicators_destroy(&communicators);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 4); /* nothing left to destroy */
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
