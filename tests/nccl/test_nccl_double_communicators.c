/* One communicator per device of a VRAM executor (two devices of the CUDA driver test double),
 * bootstrapped from one id: the NCCL double's log shows ranks first_rank and first_rank + 1 of
 * nranks, both with the id, and both destroyed. Refused arguments create nothing. The device
 * check's all-reduce sums over a run whose ranks are all in this process, and is refused (not
 * faked) when ranks live in other processes, which aborts the communicators. */
#include "nccl_double.h"
#include "vram/vram_double.h"

static const char cuda_config[] = "device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n";
static char log_path[512];
static nccl_log_line_t lines[64];

int main(void) {
    use_cuda_double(cuda_config);
    use_nccl_double("", log_path, sizeof log_path);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;

    /* Refusals, before NCCL is asked anything. */
    CHECK_STATUS(uform__nccl_communicators_create(NULL, id, 0, 2, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(communicators.count == 0 && communicators.communicators == NULL);
    CHECK_STATUS(uform__nccl_communicators_create(executor, NULL, 0, 2, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform__nccl_communicators_create(executor, id, 0, 2, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform__nccl_communicators_create(executor, id, 7, 8, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("do not fit");
    CHECK_STATUS(uform__nccl_communicators_create(executor, id, 0, 0, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform__nccl_communicators_create(executor, id, 0, (size_t)1 << 40, &communicators),
                 UFORM_STATUS_INVALID_ARGUMENT);
    uform_executor_t *ram = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &ram));
    CHECK_STATUS(uform__nccl_communicators_create(ram, id, 0, 2, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("VRAM executor");
    CHECK_OK(uform_executor_free(ram));
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 64), 0);

    /* Ranks 4 and 5 of 8. */
    CHECK_OK(uform__nccl_communicators_create(executor, id, 4, 8, &communicators));
    CHECK_EQ_INT(communicators.count, 2);
    CHECK(communicators.communicators[0] && communicators.communicators[1]);
    CHECK(communicators.communicators[0] != communicators.communicators[1]);
    char hex[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1];
    nccl_id_hex(id, hex);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 64), 2);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_STR(lines[i].kind, "init");
        CHECK_EQ_INT(lines[i].pid, getpid());
        CHECK_EQ_INT(lines[i].rank, 4 + i); /* the group initialises in the order asked */
        CHECK_EQ_INT(lines[i].nranks, 8);
        CHECK_EQ_STR(lines[i].id, hex);
    }
    /* Ranks 0..3 and 6..7 are other processes': the double refuses the collective. */
    CHECK_STATUS(uform__nccl_all_reduce_check(executor, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("ncclInvalidUsage");
    CHECK_ERROR_NAMES("invalid usage");
    /* A failure once the collective went to NCCL aborts every communicator (NULL from then on). */
    CHECK(communicators.communicators[0] == NULL && communicators.communicators[1] == NULL);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 64), 4);
    for (int i = 2; i < 4; i++) {
        CHECK_EQ_STR(lines[i].kind, "destroy");
        CHECK_EQ_INT(lines[i].pid, getpid());
        CHECK_EQ_INT(lines[i].rank, 4 + i - 2);
        CHECK(lines[i].aborted);
    }
    CHECK_STATUS(uform__nccl_all_reduce_check(executor, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("NULL (aborted)");
    uform__nccl_communicators_destroy(&communicators); /* frees the array only */
    CHECK(communicators.count == 0 && communicators.communicators == NULL);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 64), 4);
    uform__nccl_communicators_destroy(&communicators); /* twice: a zeroed struct */

    /* A run of two ranks, both here: the all-reduce of 1 + 2 reads back 3 on each device. */
    uint8_t whole[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(whole));
    CHECK_OK(uform__nccl_communicators_create(executor, whole, 0, 2, &communicators));
    CHECK_OK(uform__nccl_all_reduce_check(executor, &communicators));
    CHECK_OK(uform__nccl_all_reduce_check(executor, &communicators)); /* again: nothing left over */
    uform__nccl_communicators_t wrong = {1, communicators.communicators};
    CHECK_STATUS(uform__nccl_all_reduce_check(executor, &wrong), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform__nccl_all_reduce_check(NULL, &communicators), UFORM_STATUS_INVALID_ARGUMENT);
    uform__nccl_communicators_destroy(&communicators);
    size_t count = nccl_log_read(log_path, lines, 64);
    CHECK_EQ_INT(count, 8);
    nccl_id_hex(whole, hex);
    for (size_t i = 4; i < 6; i++) CHECK(lines[i].nranks == 2 && strcmp(lines[i].id, hex) == 0);
    for (size_t i = 6; i < 8; i++) CHECK_EQ_STR(lines[i].kind, "destroy");
    /* Device memory of the check was freed. */
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    TEST_DONE();
}
