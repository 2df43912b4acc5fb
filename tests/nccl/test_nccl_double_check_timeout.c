/* The device check's all-reduce when NCCL never finishes issuing it (the double's work takes ten
 * minutes here, as a collective whose peer stalled): the check gives up at its deadline with
 * TIMEOUT naming the all-reduce and the ranks unfinished, promptly, having aborted both
 * communicators (which stops the double's work) before freeing the buffers that work would write. */
#include "nccl_double.h"
#include "platform/platform.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    use_nccl_double("delay 600000", log_path, sizeof log_path);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;
    CHECK_OK(uform__nccl_communicators_create(executor, id, 0, 2, &communicators));
    uint64_t started = uform__now_ns();
    CHECK_STATUS(uform__nccl_all_reduce_check_bounded(executor, &communicators, 0.3), UFORM_STATUS_TIMEOUT);
    uint64_t took = uform__now_ns() - started;
    CHECK(took >= 300000000ull && took < 10000000000ull);
    CHECK_ERROR_NAMES("the all-reduce did not finish within 0.3 s: this process's ranks 0, 1 of 2 never finished");
    CHECK(communicators.communicators[0] == NULL && communicators.communicators[1] == NULL);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 4);
    for (int i = 2; i < 4; i++) CHECK(strcmp(lines[i].kind, "destroy") == 0 && lines[i].aborted);
    uform__nccl_communicators_destroy(&communicators);
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
