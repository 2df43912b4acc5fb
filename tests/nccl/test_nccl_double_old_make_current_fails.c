/* NCCL's blocking hand-off (NCCL older than 2.14: the double told `version 21300`, so uform uses
 * ncclCommInitRank inside one group) when device 1 cannot be made current (the CUDA double's
 * `fault current=`, on the hand-off's first cuCtxSetCurrent to device 1): the create answers the
 * driver's error promptly. Had device 0's rank been queued in the group before the failure, the
 * group's end would wait for ever for device 1's rank, which this process never adds (the double's
 * rendezvous directory makes its ranks wait for each other, as NCCL's bootstrap does): an alarm
 * ends the test then. The hand-off's first cuCtxSetCurrent to device 1 is its second (the
 * executor's creation makes it current once). */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>

#include "nccl_double.h"
#include "platform/platform.h"
#include "vram/vram_double.h"

static char log_path[512];
static nccl_log_line_t lines[16];

int main(void) {
    use_cuda_double("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\nfault current=1@2\n");
    use_nccl_double("version 21300", log_path, sizeof log_path);
    char place[600];
    snprintf(place, sizeof place, "%s.rendezvous", log_path);
    CHECK(mkdir(place, 0700) == 0 || errno == EEXIST);
    setenv("UFORM_NCCL_DOUBLE_RENDEZVOUS", place, 1);
    alarm(30); /* a hang fails the test (SIGALRM) instead of waiting for ctest's timeout */
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_OK(uform__nccl_unique_id(id));
    uform__nccl_communicators_t communicators;
    uint64_t started = uform__now_ns();
    CHECK_STATUS(uform__nccl_communicators_create(executor, id, 0, 2, &communicators), UFORM_STATUS_DEVICE_FAULT);
    CHECK(uform__now_ns() - started < 10000000000ull);
    CHECK_ERROR_NAMES("cuCtxSetCurrent");
    CHECK(communicators.count == 0 && communicators.communicators == NULL);
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 0); /* no rank was initialised, none joined */
    /* The fault was one call: the executor works, and a second create succeeds. */
    CHECK_OK(uform__nccl_unique_id(id));
    CHECK_OK(uform__nccl_communicators_create(executor, id, 0, 2, &communicators));
    CHECK_EQ_INT(nccl_log_read(log_path, lines, 16), 2);
    uform__nccl_communicators_destroy(&communicators);
    CHECK_OK(uform_executor_free(executor));
    unlink(log_path);
    char command[700];
    snprintf(command, sizeof command, "rm -rf '%s'", place);
    CHECK(system(command) == 0);
    TEST_DONE();
}
