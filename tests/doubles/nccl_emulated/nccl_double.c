/* A test double of NCCL's ABI (libnccl.so.2), emulated on the host: unique ids, communicators
 * that record their rank, rank count and id, nesting group calls, and all-reduces among the
 * ranks of one process, with the faults and the log UFORM_NCCL_DOUBLE_CONFIG and
 * UFORM_NCCL_DOUBLE_LOG ask for (README.md). Tests load it through UFORM_NCCL_LIBRARY. It never
 * stands in for a real GPU check. This file: communicators, their initialisation and queries;
 * nccl_double_groups.c: collectives and groups; nccl_double_config.c: configuration and log.
 *
 * Every exported entry point is a GNU indirect function: dlsym runs its resolver, which answers
 * NULL for a symbol `fault missing=` names, as with a library lacking it. Inside the double only
 * the *_impl functions are called. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "nccl_double_internal.h"

/* ---- communicators ---- */

pthread_mutex_t nccl_double_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclComm *communicators; /* live ones, under the lock */

TLS int nccl_double_group_depth;
TLS struct ncclComm *nccl_double_group_inits;

bool nccl_double_live(const struct ncclComm *comm) {
    for (const struct ncclComm *c = communicators; c; c = c->next)
        if (c == comm) return comm->magic == COMM_MAGIC;
    return false;
}

bool nccl_double_busy(const struct ncclComm *comm) {
    return comm->nonblocking && (comm->job || (comm->state == COMM_PENDING && comm->started));
}

int nccl_double_local_ranks(const struct ncclComm *comm) {
    int count = 0;
    for (const struct ncclComm *c = communicators; c; c = c->next)
        if (c->nranks == comm->nranks && memcmp(&c->id, &comm->id, sizeof c->id) == 0 && c->state != COMM_FAILED) count++;
    return count;
}

uform_ncclResult nccl_double_misuse(const char *call, const struct ncclComm *comm) {
    fprintf(stderr,
            "NCCL test double: misuse: %s on rank %d of %d before its previous operation returned ncclSuccess "
            "(poll ncclCommGetAsyncError first); answering ncclInvalidArgument, as NCCL does\n",
            call, comm->rank, comm->nranks);
    return UFORM_NCCL_INVALID_ARGUMENT;
}

static void hex(const uform_ncclUniqueId *id, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < UFORM_NCCL_ID_BYTES; i++) {
        out[2 * i] = digits[(unsigned char)id->internal[i] >> 4];
        out[2 * i + 1] = digits[(unsigned char)id->internal[i] & 15];
    }
    out[2 * UFORM_NCCL_ID_BYTES] = '\0';
}

/* The ranks' meeting place across processes, as NCCL's bootstrap network: the directory
 * UFORM_NCCL_DOUBLE_RENDEZVOUS names, where each rank's initialisation writes
 * nccl.<first 16 hex digits of the id>.<rank>. Without it, an initialisation completes locally. */
static void join_name(const struct ncclComm *comm, int rank, char *path, size_t capacity) {
    char id[2 * UFORM_NCCL_ID_BYTES + 1];
    hex(&comm->id, id);
    snprintf(path, capacity, "%s/nccl.%.16s.%d", getenv("UFORM_NCCL_DOUBLE_RENDEZVOUS"), id, rank);
}

static bool all_joined(const struct ncclComm *comm) {
    const char *place = getenv("UFORM_NCCL_DOUBLE_RENDEZVOUS");
    if (!place || !*place) return true;
    for (int r = 0; r < comm->nranks; r++) {
        char path[1024];
        join_name(comm, r, path, sizeof path);
        if (access(path, F_OK) != 0) return false;
    }
    return true;
}

/* Starts a recorded initialisation: the fault, a death inside it, or this rank joined. */
void nccl_double_start_init(struct ncclComm *comm) {
    const config_t *c = nccl_double_configuration();
    comm->started = true;
    if (c->die_rank == comm->rank) _exit(17); /* inside init, before its peers could know */
    if (c->init_fault && (c->init_rank < 0 || c->init_rank == comm->rank)) {
        comm->state = COMM_FAILED;
        comm->error = c->init_result;
        return;
    }
    const char *place = getenv("UFORM_NCCL_DOUBLE_RENDEZVOUS");
    if (place && *place) {
        char path[1024];
        join_name(comm, comm->rank, path, sizeof path);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) close(fd);
    }
}

/* Ends a started initialisation once every rank has joined: ready and logged. A rank that never
 * joins (it died) leaves it pending for ever: the double, like NCCL, never notices. */
void nccl_double_progress_init(struct ncclComm *comm) {
    if (comm->state != COMM_PENDING || !comm->started || !all_joined(comm)) return;
    char id[2 * UFORM_NCCL_ID_BYTES + 1], line[400];
    hex(&comm->id, id);
    int length = snprintf(line, sizeof line, "init pid=%ld rank=%d nranks=%d id=%s\n", (long)getpid(), comm->rank,
                          comm->nranks, id);
    nccl_double_log(line, (size_t)length);
    comm->logged = true;
    comm->state = COMM_READY;
}

/* A blocking initialisation: started, then waited for, unboundedly, as NCCL does. Called with
 * the lock held; it is let go while waiting, so other threads' ranks can join. */
uform_ncclResult nccl_double_complete_init(struct ncclComm *comm) {
    if (!comm->started) nccl_double_start_init(comm);
    for (nccl_double_progress_init(comm); comm->state == COMM_PENDING; nccl_double_progress_init(comm)) {
        pthread_mutex_unlock(&nccl_double_lock);
        usleep(1000);
        pthread_mutex_lock(&nccl_double_lock);
    }
    return comm->state == COMM_FAILED ? comm->error : UFORM_NCCL_SUCCESS;
}

static void unlink_comm(struct ncclComm *comm) {
    for (struct ncclComm **p = &communicators; *p; p = &(*p)->next)
        if (*p == comm) {
            *p = comm->next;
            break;
        }
    for (struct ncclComm **p = &nccl_double_group_inits; *p; p = &(*p)->group_next)
        if (*p == comm) {
            *p = comm->group_next;
            break;
        }
}

static void free_comm(struct ncclComm *comm, const char *how) {
    /* An initialisation still waiting for its peers is aborted: that is logged too. */
    if (comm->logged || (comm->started && comm->state == COMM_PENDING)) {
        char line[128];
        int length = snprintf(line, sizeof line, "destroy pid=%ld rank=%d%s\n", (long)getpid(), comm->rank, how);
        nccl_double_log(line, (size_t)length);
    }
    comm->magic = 0;
    free(comm);
}

/* ---- entry points ---- */

ENTRY(const char *, ncclGetErrorString, (uform_ncclResult result)) {
    /* The library's wording for each result. */
    switch (result) {
    case UFORM_NCCL_SUCCESS: return "no error";
    case UFORM_NCCL_UNHANDLED_CUDA_ERROR: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case UFORM_NCCL_SYSTEM_ERROR: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case UFORM_NCCL_INTERNAL_ERROR: return "internal error - please report this issue to the NCCL developers";
    case UFORM_NCCL_INVALID_ARGUMENT: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case UFORM_NCCL_INVALID_USAGE: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case UFORM_NCCL_REMOTE_ERROR: return "remote process exited or there was a network error";
    case UFORM_NCCL_IN_PROGRESS: return "NCCL operation in progress";
    case UFORM_NCCL_TIMEOUT: return "operation timed out";
    default: return "unknown result code";
    }
}

ENTRY(uform_ncclResult, ncclGetVersion, (int *version)) {
    CONFIGURED();
    if (!version) return UFORM_NCCL_INVALID_ARGUMENT;
    *version = nccl_double_configuration()->version;
    return UFORM_NCCL_SUCCESS;
}

ENTRY(uform_ncclResult, ncclGetUniqueId, (uform_ncclUniqueId * id)) {
    CONFIGURED();
    if (!id) return UFORM_NCCL_INVALID_ARGUMENT;
    /* Real ids hold the root's bootstrap address and a random magic; these are all random. */
    size_t filled = 0;
    while (filled < sizeof id->internal) {
        ssize_t got = getrandom(id->internal + filled, sizeof id->internal - filled, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return UFORM_NCCL_SYSTEM_ERROR;
        filled += (size_t)got;
    }
    return UFORM_NCCL_SUCCESS;
}

static uform_ncclResult init_rank(uform_ncclComm *out, int nranks, uform_ncclUniqueId id, int rank, bool nonblocking) {
    if (!out) return UFORM_NCCL_INVALID_ARGUMENT;
    *out = NULL;
    /* As NCCL, the arguments are checked at the call, even inside a group. */
    if (nranks < 1 || rank < 0 || rank >= nranks) return UFORM_NCCL_INVALID_ARGUMENT;
    struct ncclComm *comm = calloc(1, sizeof *comm);
    if (!comm) return UFORM_NCCL_SYSTEM_ERROR;
    comm->magic = COMM_MAGIC;
    comm->rank = rank;
    comm->nranks = nranks;
    comm->id = id;
    comm->state = COMM_PENDING;
    comm->nonblocking = nonblocking;
    pthread_mutex_lock(&nccl_double_lock);
    comm->next = communicators;
    communicators = comm;
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (nccl_double_group_depth > 0) {
        /* Inside a group the handle is returned now and initialised at the outermost end. */
        comm->group_next = nccl_double_group_inits;
        nccl_double_group_inits = comm;
        *out = comm;
    } else if (nonblocking) {
        /* Returns at once; the initialisation goes on (ncclCommGetAsyncError reports it). */
        nccl_double_start_init(comm);
        nccl_double_progress_init(comm);
        *out = comm;
        result = comm->state == COMM_PENDING ? UFORM_NCCL_IN_PROGRESS : comm->state == COMM_FAILED ? comm->error
                                                                                                 : UFORM_NCCL_SUCCESS;
    } else {
        result = nccl_double_complete_init(comm);
        if (result == UFORM_NCCL_SUCCESS) {
            *out = comm;
        } else {
            unlink_comm(comm);
            free_comm(comm, "");
        }
    }
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}

ENTRY(uform_ncclResult, ncclCommInitRank, (uform_ncclComm * out, int nranks, uform_ncclUniqueId id, int rank)) {
    CONFIGURED();
    return init_rank(out, nranks, id, rank, false);
}

/* config: NULL is NCCL's defaults (blocking); otherwise it must carry the magic and at least the
 * fields up to `blocking`, which is 0 (non-blocking), 1 or NCCL_CONFIG_UNDEF_INT (blocking). */
ENTRY(uform_ncclResult, ncclCommInitRankConfig,
      (uform_ncclComm * out, int nranks, uform_ncclUniqueId id, int rank, uform_ncclConfig *config)) {
    CONFIGURED();
    if (nccl_double_configuration()->version < 21400) return UFORM_NCCL_INVALID_USAGE; /* not in this release */
    bool nonblocking = false;
    if (config) {
        if (config->magic != UFORM_NCCL_CONFIG_MAGIC || config->size < offsetof(uform_ncclConfig, cgaClusterSize))
            return UFORM_NCCL_INVALID_ARGUMENT;
        if (config->blocking != 0 && config->blocking != 1 && config->blocking != UFORM_NCCL_CONFIG_UNDEF_INT)
            return UFORM_NCCL_INVALID_ARGUMENT;
        nonblocking = config->blocking == 0;
    }
    return init_rank(out, nranks, id, rank, nonblocking);
}

ENTRY(uform_ncclResult, ncclCommDestroy, (uform_ncclComm comm)) {
    CONFIGURED();
    if (!comm) return UFORM_NCCL_SUCCESS; /* as NCCL */
    pthread_mutex_lock(&nccl_double_lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!nccl_double_live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else if (nccl_double_busy(comm)) result = nccl_double_misuse("ncclCommDestroy", comm); /* nothing freed */
    else if (comm->state == COMM_PENDING) result = UFORM_NCCL_INVALID_USAGE; /* its group has not ended */
    else {
        /* NCCL answers a failed initialisation's (or failed work's) error here (ncclCommAbort
         * frees those); the double answers it too but frees the communicator either way. */
        if (comm->state == COMM_FAILED) result = comm->error;
        else if (comm->async != UFORM_NCCL_SUCCESS) result = comm->async;
        unlink_comm(comm);
        free_comm(comm, "");
    }
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}

ENTRY(uform_ncclResult, ncclCommAbort, (uform_ncclComm comm)) {
    CONFIGURED();
    if (!comm) return UFORM_NCCL_SUCCESS;
    pthread_mutex_lock(&nccl_double_lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!nccl_double_live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else {
        nccl_double_abort_work(comm); /* as NCCL, which stops and joins what runs on it */
        unlink_comm(comm);
        free_comm(comm, " abort");
    }
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}

/* A ready communicator's answer, or why it cannot answer: a non-blocking one still in progress
 * is misused; a blocking one whose group has not ended is not initialised yet. */
static uform_ncclResult ready(const struct ncclComm *comm, const char *call) {
    if (!comm || !nccl_double_live(comm)) return UFORM_NCCL_INVALID_ARGUMENT;
    if (nccl_double_busy(comm)) return nccl_double_misuse(call, comm);
    if (comm->state == COMM_PENDING) return UFORM_NCCL_INVALID_USAGE;
    if (comm->state == COMM_FAILED) return comm->error;
    return comm->async;
}

ENTRY(uform_ncclResult, ncclCommCount, (const uform_ncclComm comm, int *count)) {
    CONFIGURED();
    if (!count) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&nccl_double_lock);
    uform_ncclResult result = ready(comm, "ncclCommCount");
    if (result == UFORM_NCCL_SUCCESS) *count = comm->nranks;
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}

ENTRY(uform_ncclResult, ncclCommUserRank, (const uform_ncclComm comm, int *rank)) {
    CONFIGURED();
    if (!rank) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&nccl_double_lock);
    uform_ncclResult result = ready(comm, "ncclCommUserRank");
    if (result == UFORM_NCCL_SUCCESS) *rank = comm->rank;
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}

ENTRY(uform_ncclResult, ncclCommGetAsyncError, (uform_ncclComm comm, uform_ncclResult *error)) {
    CONFIGURED();
    if (!error) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&nccl_double_lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!comm || !nccl_double_live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else nccl_double_progress_init(comm); /* NCCL's threads run it meanwhile; the double, when asked */
    /* In progress while its initialisation or its work runs; then how that ended. */
    if (result == UFORM_NCCL_SUCCESS)
        *error = comm->state == COMM_PENDING ? UFORM_NCCL_IN_PROGRESS
                  : comm->state == COMM_FAILED ? comm->error
                  : comm->job                  ? UFORM_NCCL_IN_PROGRESS
                                               : comm->async;
    pthread_mutex_unlock(&nccl_double_lock);
    return result;
}
