/* The NCCL double's non-blocking communicators, called directly, as NCCL documents them (group.cc,
 * enqueue.cc, ncclCommGetAsyncError): a group holding work answers ncclInProgress and its work runs
 * later on a thread of the double; a collective outside a group does the same; each communicator's
 * ncclCommGetAsyncError says ncclInProgress until the work is done, then ncclSuccess; any other
 * call on it before then is misuse (ncclInvalidArgument). Blocking and non-blocking communicators
 * do not share a group, and ncclCommDestroy of a busy one frees nothing. Aborting work in progress:
 * test_nccl_double_nonblocking_abort.c. */
#include "nccl_double.h"

static uform__nccl_api_t nccl;

/* Two non-blocking ranks of one id, initialised in one group and polled until ready. */
static void make_two(uform_ncclComm comms[2]) {
    uform_ncclUniqueId id;
    CHECK_EQ_INT(nccl.ncclGetUniqueId(&id), UFORM_NCCL_SUCCESS);
    uform_ncclConfig config = nccl_nonblocking_config();
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 2; r++) {
        uform_ncclResult made = nccl.ncclCommInitRankConfig(&comms[r], 2, id, r, &config);
        CHECK(made == UFORM_NCCL_SUCCESS || made == UFORM_NCCL_IN_PROGRESS);
    }
    uform_ncclResult ended = nccl.ncclGroupEnd();
    CHECK(ended == UFORM_NCCL_SUCCESS || ended == UFORM_NCCL_IN_PROGRESS);
    for (int r = 0; r < 2; r++) CHECK_EQ_INT(nccl_poll(&nccl, comms[r], 10.0, NULL), UFORM_NCCL_SUCCESS);
}

int main(void) {
    nccl = nccl_double_open("delay 50");
    uform_ncclComm comms[2];
    make_two(comms);

    /* A group's all-reduce: ncclInProgress, the buffers untouched until the work ran. */
    float send[2] = {1.0f, 2.0f}, receive[2] = {0.0f, 0.0f};
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 2; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(&send[r], &receive[r], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[r], NULL),
                     UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_IN_PROGRESS);
    uform_ncclResult state = UFORM_NCCL_SUCCESS;
    CHECK_EQ_INT(nccl.ncclCommGetAsyncError(comms[0], &state), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(state, UFORM_NCCL_IN_PROGRESS);
    /* Misuse while in progress: queries, collectives and destroy are refused, nothing done. */
    int value = -1;
    CHECK_EQ_INT(nccl.ncclCommUserRank(comms[0], &value), UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(value, -1);
    CHECK_EQ_INT(nccl.ncclCommCount(comms[1], &value), UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(nccl.ncclAllReduce(&send[0], &receive[0], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[0], NULL),
                 UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(nccl.ncclCommDestroy(comms[1]), UFORM_NCCL_INVALID_ARGUMENT);
    int polls = 0;
    for (int r = 0; r < 2; r++) CHECK_EQ_INT(nccl_poll(&nccl, comms[r], 10.0, &polls), UFORM_NCCL_SUCCESS);
    CHECK(polls > 0); /* it was in progress for a while (the 50 ms delay) */
    CHECK(receive[0] == 3.0f && receive[1] == 3.0f);
    CHECK_EQ_INT(nccl.ncclCommUserRank(comms[1], &value), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(value, 1);

    /* Outside a group, each rank's collective answers ncclInProgress on its own. */
    double values[2] = {0.25, 0.5};
    for (int r = 0; r < 2; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(&values[r], &values[r], 1, UFORM_NCCL_FLOAT64, UFORM_NCCL_MAX, comms[r], NULL),
                     UFORM_NCCL_IN_PROGRESS);
    for (int r = 0; r < 2; r++) CHECK_EQ_INT(nccl_poll(&nccl, comms[r], 10.0, NULL), UFORM_NCCL_SUCCESS);
    CHECK(values[0] == 0.5 && values[1] == 0.5);

    /* A blocking communicator's collective and a non-blocking one's do not share a group. */
    uform_ncclComm lone = NULL;
    uform_ncclUniqueId id;
    CHECK_EQ_INT(nccl.ncclGetUniqueId(&id), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclCommInitRank(&lone, 1, id, 0), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclAllReduce(&send[0], &receive[0], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, lone, NULL),
                 UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclAllReduce(&send[0], &receive[0], 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[0], NULL),
                 UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_SUCCESS);
    CHECK(receive[0] == 1.0f); /* the blocking one ran at the end */
    CHECK_EQ_INT(nccl.ncclCommDestroy(lone), UFORM_NCCL_SUCCESS);

    for (int r = 0; r < 2; r++) CHECK_EQ_INT(nccl.ncclCommDestroy(comms[r]), UFORM_NCCL_SUCCESS);
    TEST_DONE();
}
