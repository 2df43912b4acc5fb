/* The NCCL test double itself, called directly: argument checks, group nesting, initialisation
 * inside and outside a group, communicator queries, destroy and abort, and all-reduces among
 * the ranks of this process (several types and operations, in place and not, inside and
 * outside a group), refused for ranks in other processes. */
#include <dlfcn.h>
#include <pthread.h>

#include "nccl_double.h"

typedef struct nccl_t {
#define FIELD_(field, symbol, type) type field;
    UFORM_NCCL_ENTRY_POINTS(FIELD_)
#undef FIELD_
} nccl_t;

static nccl_t nccl;

static uform_ncclUniqueId new_id(void) {
    uform_ncclUniqueId id;
    CHECK_EQ_INT(nccl.ncclGetUniqueId(&id), UFORM_NCCL_SUCCESS);
    return id;
}

/* Three ranks of one id in one group. */
static void make_three(uform_ncclComm comms[3], uform_ncclUniqueId id) {
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 3; r++) CHECK_EQ_INT(nccl.ncclCommInitRank(&comms[r], 3, id, r), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_SUCCESS);
}

typedef struct rank_job_t {
    uform_ncclComm comm;
    double value, result;
} rank_job_t;

/* One thread per rank, no group: each call returns at once (as an enqueue does); the last
 * rank's part completes the collective. */
static void *rank_thread(void *argument) {
    rank_job_t *job = argument;
    CHECK_EQ_INT(nccl.ncclAllReduce(&job->value, &job->result, 1, UFORM_NCCL_FLOAT64, UFORM_NCCL_SUM, job->comm, NULL),
                 UFORM_NCCL_SUCCESS);
    return NULL;
}

int main(void) {
    setenv("UFORM_NCCL_DOUBLE_CONFIG", "", 1);
    void *library = dlopen(UFORM_TEST_NCCL_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    CHECK(library != NULL);
#define BIND_(field, symbol, type)                                                                 \
    nccl.field = (type)dlsym(library, symbol);                                                     \
    CHECK(nccl.field != NULL);
    UFORM_NCCL_ENTRY_POINTS(BIND_)
#undef BIND_

    CHECK_EQ_STR(nccl.ncclGetErrorString(UFORM_NCCL_INVALID_USAGE), "invalid usage (run with NCCL_DEBUG=WARN for details)");
    CHECK_EQ_STR(nccl.ncclGetErrorString(77), "unknown result code");
    CHECK_EQ_INT(nccl.ncclGetVersion(NULL), UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(nccl.ncclGetUniqueId(NULL), UFORM_NCCL_INVALID_ARGUMENT);

    /* Groups nest; an end without a start is invalid usage. */
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_INVALID_USAGE);
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_INVALID_USAGE);

    /* Arguments are checked at the call. */
    uform_ncclUniqueId id = new_id();
    uform_ncclComm comm = (uform_ncclComm)&id;
    CHECK_EQ_INT(nccl.ncclCommInitRank(NULL, 2, id, 0), UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(nccl.ncclCommInitRank(&comm, 0, id, 0), UFORM_NCCL_INVALID_ARGUMENT);
    CHECK(comm == NULL);
    CHECK_EQ_INT(nccl.ncclCommInitRank(&comm, 2, id, 2), UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(nccl.ncclCommInitRank(&comm, 2, id, -1), UFORM_NCCL_INVALID_ARGUMENT);

    /* Outside a group a rank is ready at once (the double does not wait for the other ranks). */
    CHECK_EQ_INT(nccl.ncclCommInitRank(&comm, 2, id, 1), UFORM_NCCL_SUCCESS);
    int value = -1;
    CHECK_EQ_INT(nccl.ncclCommUserRank(comm, &value), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(value, 1);
    CHECK_EQ_INT(nccl.ncclCommCount(comm, &value), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(value, 2);
    uform_ncclResult asynchronous = 99;
    CHECK_EQ_INT(nccl.ncclCommGetAsyncError(comm, &asynchronous), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(asynchronous, UFORM_NCCL_SUCCESS);
    /* Rank 0 lives elsewhere: a collective is refused, not faked. */
    float one = 1.0f, out = 0.0f;
    CHECK_EQ_INT(nccl.ncclAllReduce(&one, &out, 1, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comm, NULL),
                 UFORM_NCCL_INVALID_USAGE);
    CHECK_EQ_INT(nccl.ncclCommDestroy(comm), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclCommDestroy(comm), UFORM_NCCL_INVALID_ARGUMENT); /* no longer a communicator */
    CHECK_EQ_INT(nccl.ncclCommDestroy(NULL), UFORM_NCCL_SUCCESS);

    /* Inside a group the handle exists at once and is initialised at the outermost end. */
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclCommInitRank(&comm, 1, new_id(), 0), UFORM_NCCL_SUCCESS);
    CHECK(comm != NULL);
    CHECK_EQ_INT(nccl.ncclCommGetAsyncError(comm, &asynchronous), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(asynchronous, UFORM_NCCL_IN_PROGRESS);
    CHECK_EQ_INT(nccl.ncclCommUserRank(comm, &value), UFORM_NCCL_INVALID_USAGE);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclCommUserRank(comm, &value), UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(value, 0);
    CHECK_EQ_INT(nccl.ncclCommAbort(comm), UFORM_NCCL_SUCCESS);

    /* All-reduces among three ranks of this process. */
    uform_ncclComm comms[3];
    make_three(comms, new_id());
    float send[3][4], receive[3][4];
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 4; i++) send[r][i] = (float)(r * 10 + i);
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 3; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(send[r], receive[r], 4, UFORM_NCCL_FLOAT32, UFORM_NCCL_SUM, comms[r], NULL),
                     UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 4; i++) CHECK(receive[r][i] == (float)(30 + 3 * i));
    /* In place, 64-bit integers, maximum. */
    int64_t values[3] = {5, -7, 3};
    CHECK_EQ_INT(nccl.ncclGroupStart(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 3; r++)
        CHECK_EQ_INT(nccl.ncclAllReduce(&values[r], &values[r], 1, UFORM_NCCL_INT64, UFORM_NCCL_MAX, comms[r], NULL),
                     UFORM_NCCL_SUCCESS);
    CHECK_EQ_INT(nccl.ncclGroupEnd(), UFORM_NCCL_SUCCESS);
    for (int r = 0; r < 3; r++) CHECK_EQ_INT(values[r], 5);
    /* Unemulated types and operations are refused. */
    CHECK_EQ_INT(nccl.ncclAllReduce(send[0], receive[0], 4, UFORM_NCCL_FLOAT16, UFORM_NCCL_SUM, comms[0], NULL),
                 UFORM_NCCL_INVALID_ARGUMENT);
    CHECK_EQ_INT(nccl.ncclAllReduce(send[0], receive[0], 4, UFORM_NCCL_FLOAT32, UFORM_NCCL_AVG, comms[0], NULL),
                 UFORM_NCCL_INVALID_ARGUMENT);
    /* No group: one thread per rank. */
    rank_job_t jobs[3];
    pthread_t threads[3];
    for (int r = 0; r < 3; r++) {
        jobs[r] = (rank_job_t){comms[r], 0.5 * (r + 1), 0.0};
        CHECK(pthread_create(&threads[r], NULL, rank_thread, &jobs[r]) == 0);
    }
    for (int r = 0; r < 3; r++) pthread_join(threads[r], NULL);
    for (int r = 0; r < 3; r++) CHECK(jobs[r].result == 3.0);
    for (int r = 0; r < 3; r++) CHECK_EQ_INT(nccl.ncclCommDestroy(comms[r]), UFORM_NCCL_SUCCESS);
    TEST_DONE();
}
