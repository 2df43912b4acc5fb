/* Aborting a non-blocking communicator while its work is in progress (the double's `delay` is
 * ten minutes here, so the work cannot have run first): ncclCommAbort returns at once, the work is
 * stopped (no buffer written, ever), and the other communicator of the group ends with
 * ncclRemoteError, which sticks. */
#include "nccl_double.h"
#include "platform/platform.h"

int main(void) {
    uform__nccl_api_t nccl = nccl_double_open("delay 600000");
    uform_ncclUniqueId id;
    CHECK_EQ_INT(nccl.ncclGetUniqueId(&id), UFORM_NCCL_SUCCESS);
    uform_ncclConfig config = nccl_nonblocking_config();
    uform_ncclComm comms[2];
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 2; r++) CHECK_EQ_INT(nccl.ncclCommInitRankConfig(&comms[r], 2, id, r, &config), UFORM_NCCL_SUCCESS);
    uform_ncclResult ended = nccl.ncclGroupEnd();
    CHECK(ended == UFORM_NCCL_SUCCESS || ended == UFORM_NCCL_IN_PROGRESS);
    for (int r = 0; r < 2; r++) CHECK_EQ_INT(nccl_poll(&nccl, comms[r], 10.0, NULL), UFORM_NCCL_SUCCESS);

    float send[2] = {1.0f, 2.0f}, receive[2] = {-1.0f, -1.0f};
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 2; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(&send[r], &receive[r], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[r], NULL),
                     UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_IN_PROGRESS);
    CHECK_EQ_INT(nccl_poll(&nccl, comms[0], 0.05, NULL), UFORM_NCCL_IN_PROGRESS);
    uint64_t started = uform__now_ns();
    CHECK_EQ_INT(nccl.ncclCommAbort(comms[0]), UFORM_NCCL_SUCCESS);
    CHECK(uform__now_ns() - started < 5000000000ull); /* the ten-minute work was stopped, not waited for */
    CHECK_EQ_INT(nccl_poll(&nccl, comms[1], 10.0, NULL), UFORM_NCCL_REMOTE_ERROR);
    int value = -1;
    CHECK_EQ_INT(nccl.ncclCommUserRank(comms[1], &value), UFORM_NCCL_REMOTE_ERROR);
    CHECK(receive[0] == -1.0f && receive[1] == -1.0f);
    CHECK_EQ_INT(nccl.ncclCommAbort(comms[1]), UFORM_NCCL_SUCCESS);
    TEST_DONE();
}
