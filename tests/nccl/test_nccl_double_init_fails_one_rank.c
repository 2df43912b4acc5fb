/* One rank's initialisation fails (rank 5, ncclUnhandledCudaError) while the other's succeeds:
 * creation answers DEVICE_FAULT naming NCCL's error, and the communicator that was made (rank 4)
 * is freed again (ncclCommAbort: the log shows its init, then its destroy). */
#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("fault init=ncclUnhandledCudaError; fault init_rank=5", log_path, sizeof log_path);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;
    CHECK_STATUS(uform__nccl_communicators_create(executor, id, 4, 8, &communicators), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("ncclUnhandledCudaError");
    CHECK_ERROR_NAMES("unhandled cuda error");
    CHECK(communicators.count == 0 && communicators.communicators == NULL);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 2);
    CHECK_EQ_STR(lines[0].kind, "init");
    CHECK_EQ_INT(lines[0].rank, 4);
    CHECK_EQ_STR(lines[1].kind, "destroy");
    CHECK_EQ_INT(lines[1].rank, 4);
    CHECK(lines[1].aborted);
    /* Ranks 0 and 1 do not fail. */
    CHECK_OK(uform__nccl_communicators_create(executor, id, 0, 8, &communicators));
    uform__nccl_communicators_destroy(&communicators);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 6);
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
