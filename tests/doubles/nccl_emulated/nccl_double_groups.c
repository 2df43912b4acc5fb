/* The NCCL test double's collectives and groups: all-reduces among the ranks of one process,
 * collected by nesting groups, and the work of non-blocking communicators, which runs on a thread
 * of the double after a delay (`delay`, README.md) while ncclGroupEnd (or the collective, outside
 * a group) answers ncclInProgress, as NCCL's group.cc runs a non-blocking group. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_double_internal.h"

/* A collective waiting for its ranks: the k-th all-reduce of each rank of one id. */
typedef struct collective_t {
    uform_ncclUniqueId id;
    int nranks, arrived;
    size_t count;
    uform_ncclDataType type;
    uform_ncclRedOp op;
    const void **send;
    void **receive;
    unsigned char *joined; /* per rank: its part arrived */
    struct collective_t *next;
} collective_t;
static collective_t *collectives; /* under the lock */

/* A call waiting for its group's end, or for its job. */
typedef struct pending_t {
    struct ncclComm *comm;
    const void *send;
    void *receive;
    size_t count;
    uform_ncclDataType type;
    uform_ncclRedOp op;
    struct pending_t *next;
} pending_t;

/* Non-blocking communicators' work: their collectives of one group, run by a thread of its own. */
typedef struct job_t {
    pending_t *calls; /* in call order */
    bool stopped;     /* ncclCommAbort of one of its communicators: nothing more is done */
    pthread_cond_t wake;
} job_t;
static pthread_cond_t job_done = PTHREAD_COND_INITIALIZER; /* a job let go of its communicators */

/* This thread's group: its collectives, and whether they are on blocking (1) or non-blocking (2)
 * communicators (0: none yet), which NCCL does not let one group mix. */
static TLS pending_t *group_calls, *group_calls_last;
static TLS int group_mode;

/* ---- all-reduce among the ranks of this process ---- */

static size_t type_size(uform_ncclDataType type) {
    switch (type) {
    case UFORM_NCCL_INT32:
    case UFORM_NCCL_UINT32:
    case UFORM_NCCL_FLOAT32: return 4;
    case UFORM_NCCL_INT64:
    case UFORM_NCCL_UINT64:
    case UFORM_NCCL_FLOAT64: return 8;
    default: return 0; /* 8-bit and 16-bit types are not emulated */
    }
}

#define REDUCE_(ctype)                                                                             \
    do {                                                                                           \
        ctype *acc = (ctype *)accumulator;                                                         \
        const ctype *in = (const ctype *)input;                                                    \
        for (size_t i = 0; i < count; i++) {                                                       \
            if (first) acc[i] = in[i];                                                             \
            else if (op == UFORM_NCCL_SUM) acc[i] = acc[i] + in[i];                                \
            else if (op == UFORM_NCCL_PROD) acc[i] = acc[i] * in[i];                               \
            else if (op == UFORM_NCCL_MAX) acc[i] = in[i] > acc[i] ? in[i] : acc[i];               \
            else acc[i] = in[i] < acc[i] ? in[i] : acc[i];                                         \
        }                                                                                          \
    } while (0)

static void reduce(void *accumulator, const void *input, size_t count, uform_ncclDataType type, uform_ncclRedOp op,
                   bool first) {
    switch (type) {
    case UFORM_NCCL_INT32: REDUCE_(int32_t); break;
    case UFORM_NCCL_UINT32: REDUCE_(uint32_t); break;
    case UFORM_NCCL_FLOAT32: REDUCE_(float); break;
    case UFORM_NCCL_INT64: REDUCE_(int64_t); break;
    case UFORM_NCCL_UINT64: REDUCE_(uint64_t); break;
    default: REDUCE_(double); break;
    }
}

/* Adds one rank's part (under the lock); the last rank's part runs the reduction. */
static uform_ncclResult submit(const pending_t *call) {
    const struct ncclComm *comm = call->comm;
    collective_t *collective = NULL;
    for (collective_t *c = collectives; c; c = c->next)
        if (memcmp(&c->id, &comm->id, sizeof c->id) == 0 && c->nranks == comm->nranks && !c->joined[comm->rank]) {
            collective = c;
            break;
        }
    if (!collective) {
        collective = calloc(1, sizeof *collective);
        void *arrays = calloc((size_t)comm->nranks, sizeof(void *) * 2 + 1);
        if (!collective || !arrays) {
            free(collective);
            free(arrays);
            return UFORM_NCCL_SYSTEM_ERROR;
        }
        collective->id = comm->id;
        collective->nranks = comm->nranks;
        collective->count = call->count;
        collective->type = call->type;
        collective->op = call->op;
        collective->send = (const void **)arrays;
        collective->receive = (void **)arrays + comm->nranks;
        collective->joined = (unsigned char *)((void **)arrays + 2 * (size_t)comm->nranks);
        collective_t **tail = &collectives;
        while (*tail) tail = &(*tail)->next;
        *tail = collective;
    }
    /* Ranks disagreeing about one collective: NCCL would hang or corrupt; the double refuses. */
    if (collective->count != call->count || collective->type != call->type || collective->op != call->op)
        return UFORM_NCCL_INVALID_ARGUMENT;
    collective->send[comm->rank] = call->send;
    collective->receive[comm->rank] = call->receive;
    collective->joined[comm->rank] = 1;
    if (++collective->arrived < collective->nranks) return UFORM_NCCL_SUCCESS;
    size_t bytes = collective->count * type_size(collective->type);
    void *accumulator = malloc(bytes ? bytes : 1);
    if (!accumulator) return UFORM_NCCL_SYSTEM_ERROR;
    for (int r = 0; r < collective->nranks; r++)
        reduce(accumulator, collective->send[r], collective->count, collective->type, collective->op, r == 0);
    for (int r = 0; r < collective->nranks; r++)
        if (bytes) memcpy(collective->receive[r], accumulator, bytes);
    free(accumulator);
    for (collective_t **p = &collectives; *p; p = &(*p)->next)
        if (*p == collective) {
            *p = collective->next;
            break;
        }
    free(collective->send);
    free(collective);
    return UFORM_NCCL_SUCCESS;
}

/* ---- non-blocking work ---- */

static void *run_job(void *argument) {
    job_t *job = argument;
    const config_t *c = nccl_double_configuration();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += c->delay_ms / 1000;
    until.tv_nsec += (c->delay_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&nccl_double_lock);
    /* The delay stands for the kernels being issued: the caller's next move races it. */
    while (!job->stopped)
        if (pthread_cond_timedwait(&job->wake, &nccl_double_lock, &until) == ETIMEDOUT) break;
    for (pending_t *call = job->calls; call; call = call->next) {
        struct ncclComm *comm = call->comm;
        uform_ncclResult one = job->stopped                    ? UFORM_NCCL_REMOTE_ERROR /* a peer aborted */
                               : comm->state == COMM_FAILED    ? comm->error
                               : comm->state != COMM_READY     ? UFORM_NCCL_INVALID_USAGE
                               : comm->async                   ? comm->async
                               : c->collective_result          ? c->collective_result
                                                               : submit(call);
        if (one != UFORM_NCCL_SUCCESS && comm->async == UFORM_NCCL_SUCCESS) comm->async = one;
    }
    /* Every communicator of the job is alive: ncclCommAbort waits for this. */
    for (pending_t *call = job->calls; call; call = call->next) call->comm->job = NULL;
    pthread_cond_broadcast(&job_done);
    pthread_mutex_unlock(&nccl_double_lock);
    for (pending_t *call = job->calls, *next; call; call = next) {
        next = call->next;
        free(call);
    }
    pthread_cond_destroy(&job->wake);
    free(job);
    return NULL;
}

/* Hands `calls` (non-blocking communicators' collectives) to a thread of their own, their
 * communicators in progress until it ends (under the lock). ncclInProgress, or why not. */
static uform_ncclResult launch(pending_t *calls) {
    job_t *job = calloc(1, sizeof *job);
    pthread_attr_t attributes;
    bool made = false;
    if (job && pthread_cond_init(&job->wake, NULL) == 0) {
        job->calls = calls;
        for (pending_t *call = calls; call; call = call->next) call->comm->job = job;
        pthread_t thread;
        if (pthread_attr_init(&attributes) == 0) {
            pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
            made = pthread_create(&thread, &attributes, run_job, job) == 0;
            pthread_attr_destroy(&attributes);
        }
        if (!made) {
            for (pending_t *call = calls; call; call = call->next) call->comm->job = NULL;
            pthread_cond_destroy(&job->wake);
        }
    }
    if (made) return UFORM_NCCL_IN_PROGRESS;
    free(job);
    for (pending_t *call = calls, *next; call; call = next) {
        next = call->next;
        free(call);
    }
    return UFORM_NCCL_SYSTEM_ERROR;
}

void nccl_double_abort_work(struct ncclComm *comm) {
    if (!comm->job) return;
    comm->job->stopped = true;
    pthread_cond_signal(&comm->job->wake);
    while (comm->job) pthread_cond_wait(&job_done, &nccl_double_lock);
}

/* ---- entry points ---- */

ENTRY(uform_ncclResult, ncclAllReduce, (const void *send, void *receive, size_t count, uform_ncclDataType type,
                                        uform_ncclRedOp op, uform_ncclComm comm, uform_ncclStream stream)) {
    CONFIGURED();
    if (!type_size(type) || op > UFORM_NCCL_MIN) return UFORM_NCCL_INVALID_ARGUMENT;
    if (count && (!send || !receive)) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&nccl_double_lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!comm || !nccl_double_live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else if (nccl_double_busy(comm)) result = nccl_double_misuse("ncclAllReduce", comm);
    else if (comm->state == COMM_FAILED) result = comm->error;
    else if (comm->async != UFORM_NCCL_SUCCESS) result = comm->async; /* a failure sticks */
    else if (comm->state == COMM_PENDING && nccl_double_group_depth == 0) result = UFORM_NCCL_INVALID_USAGE;
    /* Ranks in other processes are not emulated: such a collective is refused, never faked. */
    else if (nccl_double_local_ranks(comm) < comm->nranks) result = UFORM_NCCL_INVALID_USAGE;
    else if (nccl_double_group_depth > 0 && group_mode && group_mode != (comm->nonblocking ? 2 : 1))
        result = UFORM_NCCL_INVALID_ARGUMENT; /* "Blocking and nonblocking communicators are not allowed in the same group" */
    if (result == UFORM_NCCL_SUCCESS) {
        pending_t call = {comm, send, receive, count, type, op, NULL};
        pending_t *queued = NULL;
        if (nccl_double_group_depth > 0 || comm->nonblocking) {
            queued = malloc(sizeof *queued);
            if (!queued) result = UFORM_NCCL_SYSTEM_ERROR;
            else *queued = call;
        }
        if (!queued) {
            if (result == UFORM_NCCL_SUCCESS) result = submit(&call);
        } else if (nccl_double_group_depth > 0) {
            group_mode = comm->nonblocking ? 2 : 1;
            if (group_calls_last) group_calls_last->next = queued;
            else group_calls = queued;
            group_calls_last = queued;
        } else {
            result = launch(queued); /* outside a group, as a group of one */
        }
    }
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}

ENTRY(uform_ncclResult, ncclGroupStart, (void)) {
    CONFIGURED();
    nccl_double_group_depth++;
    return UFORM_NCCL_SUCCESS;
}

ENTRY(uform_ncclResult, ncclGroupEnd, (void)) {
    CONFIGURED();
    if (nccl_double_group_depth == 0) return UFORM_NCCL_INVALID_USAGE;
    if (--nccl_double_group_depth > 0) return UFORM_NCCL_SUCCESS;
    pthread_mutex_lock(&nccl_double_lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    /* The initialisations, in the order they were asked for (the list is newest first). */
    struct ncclComm *order = NULL;
    while (nccl_double_group_inits) {
        struct ncclComm *comm = nccl_double_group_inits;
        nccl_double_group_inits = comm->group_next;
        comm->group_next = order;
        order = comm;
    }
    /* Every rank of the group starts (joins) first, then the blocking ones are waited for; a
     * non-blocking one makes the end answer ncclInProgress while it runs. */
    for (struct ncclComm *comm = order; comm; comm = comm->group_next) nccl_double_start_init(comm);
    bool running = false;
    for (struct ncclComm *comm = order, *next; comm; comm = next) {
        next = comm->group_next;
        comm->group_next = NULL;
        uform_ncclResult one = UFORM_NCCL_SUCCESS;
        if (comm->nonblocking) {
            nccl_double_progress_init(comm);
            running |= comm->state == COMM_PENDING;
            if (comm->state == COMM_FAILED) one = comm->error;
        } else {
            one = nccl_double_complete_init(comm);
        }
        if (one != UFORM_NCCL_SUCCESS && result == UFORM_NCCL_SUCCESS) result = one;
    }
    if (result == UFORM_NCCL_SUCCESS && running) result = UFORM_NCCL_IN_PROGRESS;
    /* Blocking communicators' collectives run now; non-blocking ones' go to a job together. */
    pending_t *deferred = NULL, **deferred_last = &deferred;
    while (group_calls) {
        pending_t *call = group_calls;
        group_calls = call->next;
        call->next = NULL;
        if (nccl_double_live(call->comm) && call->comm->nonblocking) {
            *deferred_last = call;
            deferred_last = &call->next;
            continue;
        }
        uform_ncclResult one = !nccl_double_live(call->comm)         ? UFORM_NCCL_INVALID_ARGUMENT
                               : call->comm->state == COMM_READY ? submit(call)
                                                                 : call->comm->error;
        if (one != UFORM_NCCL_SUCCESS && result == UFORM_NCCL_SUCCESS) result = one;
        free(call);
    }
    group_calls_last = NULL;
    group_mode = 0;
    if (deferred) {
        uform_ncclResult one = launch(deferred);
        if (result == UFORM_NCCL_SUCCESS || (result == UFORM_NCCL_IN_PROGRESS && one != UFORM_NCCL_IN_PROGRESS))
            result = one;
    }
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}
