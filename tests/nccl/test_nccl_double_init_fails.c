/* Every ncclCommInitRank fails (ncclSystemError): creation answers IO_ERROR, its message naming
 * the result and NCCL's string for it, nothing stays created (no init was logged), and the
 * group was ended (a later group on this thread works). */
#include "nccl_double.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("fault init=ncclSystemError", log_path, sizeof log_path);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;
    for (int attempt = 0; attempt < 2; attempt++) {
        CHECK_STATUS(uform__nccl_communicators_create(executor, id, 0, 2, &communicators), UFORM_STATUS_IO_ERROR);
        CHECK_ERROR_NAMES("ncclSystemError");
        CHECK_ERROR_NAMES("unhandled system error");
        CHECK_ERROR_NAMES("ncclGroupEnd");
        CHECK(communicators.count == 0 && communicators.communicators == NULL);
        CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 0);
    }
    uform__nccl_communicators_destroy(&communicators);
    /* The thread is outside any group: ncclGroupEnd now is NCCL's invalid usage. */
    const uform__nccl_api_t *api = NULL;
    CHECK_OK(uform__nccl_get(&api));
    CHECK_EQ_INT(api->ncclGroupEnd(), UFORM_NCCL_INVALID_USAGE);
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
