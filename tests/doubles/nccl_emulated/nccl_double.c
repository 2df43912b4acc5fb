/* A test double of NCCL's ABI (libnccl.so.2), emulated on the host: unique ids, communicators
 * that record their rank, rank count and id, nesting group calls, and all-reduces among the
 * ranks of one process, with the faults and the log UFORM_NCCL_DOUBLE_CONFIG and
 * UFORM_NCCL_DOUBLE_LOG ask for (README.md). Tests load it through UFORM_NCCL_LIBRARY. It never
 * stands in for a real GPU check.
 *
 * Every exported entry point is a GNU indirect function: dlsym runs its resolver, which answers
 * NULL for a symbol `fault missing=` names, as with a library lacking it. Inside the double only
 * the *_impl functions are called. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "../common/double_config.h"
#include "mesh/nccl/nccl_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_MISSING 16

/* ---- configuration ---- */

typedef struct config_t {
    int version;             /* `version N`: what ncclGetVersion answers (default 2.21.5) */
    bool init_fault;         /* `fault init=...` */
    uform_ncclResult init_result;
    long init_rank;          /* `fault init_rank=N`: only that rank fails (-1: every rank) */
    long die_rank;           /* `fault init_dies=N`: the process initialising rank N exits inside it */
    size_t missing_count;    /* `fault missing=ncclName` */
    char missing[MAX_MISSING][64];
    char error[512];         /* why the configuration was refused; "" when it was not */
} config_t;

static config_t config = {.version = 22105, .init_rank = -1, .die_rank = -1};
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static const char *const result_names[] = {"ncclSuccess",      "ncclUnhandledCudaError", "ncclSystemError",
                                           "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                           "ncclRemoteError",  "ncclInProgress",         "ncclTimeout"};
#define RESULT_COUNT (sizeof result_names / sizeof result_names[0])

/* A result's name or a decimal number; -1 if neither. */
static long parse_result(const char *text) {
    for (size_t i = 0; i < RESULT_COUNT; i++)
        if (strcmp(text, result_names[i]) == 0) return (long)i;
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > 0xffff) return -1;
    return value;
}

static long parse_count(const char *text) {
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > 0x7fffffff) return -1;
    return value;
}

static void refuse(const char *what, const char *line) {
    if (!config.error[0]) snprintf(config.error, sizeof config.error, "%s: \"%s\"", what, line);
}

/* One line, its comment cut and its blanks trimmed by double_config_lines (a carriage return
 * before the kind is a blank here too). */
static void parse_line(char *line, size_t number, void *context) {
    while (*line == '\r' || *line == ' ' || *line == '\t') line++;
    char original[256];
    snprintf(original, sizeof original, "%s", line); /* for messages: tokenising cuts `line` */
    char *save = NULL;
    char *kind = strtok_r(line, " \t", &save), *value = strtok_r(NULL, " \t", &save);
    if (!kind || !value || strtok_r(NULL, " \t", &save)) {
        refuse("not `kind value`", original);
        return;
    }
    if (strcmp(kind, "version") == 0) {
        long version = parse_count(value);
        if (version < 0) refuse("bad version", original);
        else config.version = (int)version;
        return;
    }
    if (strcmp(kind, "fault") != 0) {
        refuse("unknown line kind", original);
        return;
    }
    char *equals = strchr(value, '=');
    if (!equals || !equals[1]) {
        refuse("a fault is key=value", original);
        return;
    }
    *equals = '\0';
    const char *key = value, *argument = equals + 1;
    if (strcmp(key, "init") == 0) {
        long result = parse_result(argument);
        if (result <= 0) refuse("init takes an NCCL error name or number", original);
        config.init_fault = result > 0;
        config.init_result = (uform_ncclResult)(result > 0 ? result : 0);
    } else if (strcmp(key, "init_rank") == 0) {
        config.init_rank = parse_count(argument);
        if (config.init_rank < 0) refuse("init_rank takes a rank", original);
    } else if (strcmp(key, "init_dies") == 0) {
        config.die_rank = parse_count(argument);
        if (config.die_rank < 0) refuse("init_dies takes a rank", original);
    } else if (strcmp(key, "missing") == 0) {
        if (config.missing_count == MAX_MISSING || strlen(argument) >= sizeof config.missing[0])
            refuse("too many or too long missing symbols", original);
        else snprintf(config.missing[config.missing_count++], sizeof config.missing[0], "%s", argument);
    } else {
        refuse("unknown fault", original);
    }
}

static void load_config(void) {
    char *owned = NULL;
    const char *unreadable = NULL;
    const char *text = double_config_text("UFORM_NCCL_DOUBLE_CONFIG", 1 << 16, &owned, &unreadable);
    if (unreadable) snprintf(config.error, sizeof config.error, "cannot read %s", unreadable);
    if (text && !owned) owned = strdup(text); /* the lines are cut in place */
    if (owned) double_config_lines(owned, parse_line, NULL);
    free(owned);
    if (config.init_rank >= 0 && !config.init_fault) refuse("init_rank without init", "fault init_rank");
    if (config.error[0]) fprintf(stderr, "NCCL test double: configuration refused: %s\n", config.error);
}

static const config_t *configuration(void) {
    pthread_once(&config_once, load_config);
    return &config;
}

/* Whether dlsym may see `symbol` (`fault missing=` hides it). */
static int visible(const char *symbol) {
    const config_t *c = configuration();
    for (size_t i = 0; i < c->missing_count; i++)
        if (strcmp(c->missing[i], symbol) == 0) return 0;
    return 1;
}

/* ENTRY(return type, name, (parameters)) { body }: the exported indirect function `name`, its
 * resolver, and its implementation name##_impl (the body). */
#define ENTRY(ret, name, params)                                                                   \
    static ret name##_impl params;                                                                 \
    static __typeof__(name##_impl) *name##_resolve(void) { return visible(#name) ? name##_impl : NULL; } \
    EXPORT ret name params __attribute__((ifunc(#name "_resolve")));                               \
    static ret name##_impl params

/* A refused configuration is no library: every call but the error string answers this. */
#define CONFIGURED()                                                                               \
    do {                                                                                           \
        if (configuration()->error[0]) return UFORM_NCCL_INTERNAL_ERROR;                           \
    } while (0)

/* ---- the log ---- */

/* One line per call, appended with one write() to a file opened O_APPEND, so lines of many
 * processes never interleave. */
static void log_line(const char *line, size_t length) {
    const char *path = getenv("UFORM_NCCL_DOUBLE_LOG");
    if (!path || !*path) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    ssize_t written = write(fd, line, length);
    (void)written;
    close(fd);
}

/* ---- communicators ---- */

typedef enum { COMM_PENDING, COMM_READY, COMM_FAILED } comm_state_t;

struct ncclComm {
    uint32_t magic;
    int rank, nranks;
    uform_ncclUniqueId id;
    comm_state_t state;
    uform_ncclResult error; /* COMM_FAILED: why */
    bool logged;            /* an `init` line was written: a `destroy` line follows */
    bool nonblocking;       /* made by ncclCommInitRankConfig with config->blocking 0 */
    bool started;           /* its initialisation runs: joined, waiting for the other ranks */
    struct ncclComm *next;  /* every live communicator of the process (under `lock`) */
    struct ncclComm *group_next; /* this thread's group: initialisations still to run */
};
#define COMM_MAGIC 0x6e63636cu

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclComm *communicators; /* live ones, under `lock` */

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
static collective_t *collectives; /* under `lock` */

/* A call waiting for the group's end. */
typedef struct pending_t {
    struct ncclComm *comm;
    const void *send;
    void *receive;
    size_t count;
    uform_ncclDataType type;
    uform_ncclRedOp op;
    struct pending_t *next;
} pending_t;

static _Thread_local int group_depth;
static _Thread_local struct ncclComm *group_inits;
static _Thread_local pending_t *group_calls, *group_calls_last;

/* Whether `comm` is a live communicator of this process (under `lock`). */
static bool live(const struct ncclComm *comm) {
    for (const struct ncclComm *c = communicators; c; c = c->next)
        if (c == comm) return comm->magic == COMM_MAGIC;
    return false;
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
static void start_init(struct ncclComm *comm) {
    const config_t *c = configuration();
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
static void progress_init(struct ncclComm *comm) {
    if (comm->state != COMM_PENDING || !comm->started || !all_joined(comm)) return;
    char id[2 * UFORM_NCCL_ID_BYTES + 1], line[400];
    hex(&comm->id, id);
    int length = snprintf(line, sizeof line, "init pid=%ld rank=%d nranks=%d id=%s\n", (long)getpid(), comm->rank,
                          comm->nranks, id);
    log_line(line, (size_t)length);
    comm->logged = true;
    comm->state = COMM_READY;
}

/* A blocking initialisation: started, then waited for, unboundedly, as NCCL does. Called with
 * `lock` held; it is let go while waiting, so other threads' ranks can join. */
static uform_ncclResult complete_init(struct ncclComm *comm) {
    if (!comm->started) start_init(comm);
    for (progress_init(comm); comm->state == COMM_PENDING; progress_init(comm)) {
        pthread_mutex_unlock(&lock);
        usleep(1000);
        pthread_mutex_lock(&lock);
    }
    return comm->state == COMM_FAILED ? comm->error : UFORM_NCCL_SUCCESS;
}

static void unlink_comm(struct ncclComm *comm) {
    for (struct ncclComm **p = &communicators; *p; p = &(*p)->next)
        if (*p == comm) {
            *p = comm->next;
            break;
        }
    for (struct ncclComm **p = &group_inits; *p; p = &(*p)->group_next)
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
        log_line(line, (size_t)length);
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
    *version = configuration()->version;
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
    pthread_mutex_lock(&lock);
    comm->next = communicators;
    communicators = comm;
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (group_depth > 0) {
        /* Inside a group the handle is returned now and initialised at the outermost end. */
        comm->group_next = group_inits;
        group_inits = comm;
        *out = comm;
    } else if (nonblocking) {
        /* Returns at once; the initialisation goes on (ncclCommGetAsyncError reports it). */
        start_init(comm);
        progress_init(comm);
        *out = comm;
        result = comm->state == COMM_PENDING ? UFORM_NCCL_IN_PROGRESS : comm->state == COMM_FAILED ? comm->error
                                                                                                 : UFORM_NCCL_SUCCESS;
    } else {
        result = complete_init(comm);
        if (result == UFORM_NCCL_SUCCESS) {
            *out = comm;
        } else {
            unlink_comm(comm);
            free_comm(comm, "");
        }
    }
    pthread_mutex_unlock(&lock);
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
    if (configuration()->version < 21400) return UFORM_NCCL_INVALID_USAGE; /* not in this release */
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
    pthread_mutex_lock(&lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else if (comm->state == COMM_PENDING) result = UFORM_NCCL_INVALID_USAGE; /* its group has not ended */
    else {
        /* NCCL answers a failed initialisation's error here (ncclCommAbort frees those); the
         * double answers it too but frees the communicator either way. */
        if (comm->state == COMM_FAILED) result = comm->error;
        unlink_comm(comm);
        free_comm(comm, "");
    }
    pthread_mutex_unlock(&lock);
    return result;
}

ENTRY(uform_ncclResult, ncclCommAbort, (uform_ncclComm comm)) {
    CONFIGURED();
    if (!comm) return UFORM_NCCL_SUCCESS;
    pthread_mutex_lock(&lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else {
        unlink_comm(comm);
        free_comm(comm, " abort");
    }
    pthread_mutex_unlock(&lock);
    return result;
}

/* A ready communicator's answer, or why it cannot answer. */
static uform_ncclResult ready(const struct ncclComm *comm) {
    if (!comm || !live(comm)) return UFORM_NCCL_INVALID_ARGUMENT;
    if (comm->state == COMM_PENDING) return UFORM_NCCL_INVALID_USAGE;
    if (comm->state == COMM_FAILED) return comm->error;
    return UFORM_NCCL_SUCCESS;
}

ENTRY(uform_ncclResult, ncclCommCount, (const uform_ncclComm comm, int *count)) {
    CONFIGURED();
    if (!count) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    uform_ncclResult result = ready(comm);
    if (result == UFORM_NCCL_SUCCESS) *count = comm->nranks;
    pthread_mutex_unlock(&lock);
    return result;
}

ENTRY(uform_ncclResult, ncclCommUserRank, (const uform_ncclComm comm, int *rank)) {
    CONFIGURED();
    if (!rank) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    uform_ncclResult result = ready(comm);
    if (result == UFORM_NCCL_SUCCESS) *rank = comm->rank;
    pthread_mutex_unlock(&lock);
    return result;
}

ENTRY(uform_ncclResult, ncclCommGetAsyncError, (uform_ncclComm comm, uform_ncclResult *error)) {
    CONFIGURED();
    if (!error) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!comm || !live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else progress_init(comm); /* NCCL's threads run it meanwhile; the double, when asked */
    if (result == UFORM_NCCL_SUCCESS)
        *error = comm->state == COMM_PENDING ? UFORM_NCCL_IN_PROGRESS
                  : comm->state == COMM_FAILED ? comm->error
                                               : UFORM_NCCL_SUCCESS;
    pthread_mutex_unlock(&lock);
    return result;
}

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

/* Adds one rank's part (under `lock`); the last rank's part runs the reduction. */
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

/* Ranks of `comm`'s id alive in this process (under `lock`). */
static int local_ranks(const struct ncclComm *comm) {
    int count = 0;
    for (const struct ncclComm *c = communicators; c; c = c->next)
        if (c->nranks == comm->nranks && memcmp(&c->id, &comm->id, sizeof c->id) == 0 && c->state != COMM_FAILED) count++;
    return count;
}

ENTRY(uform_ncclResult, ncclAllReduce, (const void *send, void *receive, size_t count, uform_ncclDataType type,
                                        uform_ncclRedOp op, uform_ncclComm comm, uform_ncclStream stream)) {
    CONFIGURED();
    if (!type_size(type) || op > UFORM_NCCL_MIN) return UFORM_NCCL_INVALID_ARGUMENT;
    if (count && (!send || !receive)) return UFORM_NCCL_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    if (!comm || !live(comm)) result = UFORM_NCCL_INVALID_ARGUMENT;
    else if (comm->state == COMM_FAILED) result = comm->error;
    else if (comm->state == COMM_PENDING && group_depth == 0) result = UFORM_NCCL_INVALID_USAGE;
    /* Ranks in other processes are not emulated: such a collective is refused, never faked. */
    else if (local_ranks(comm) < comm->nranks) result = UFORM_NCCL_INVALID_USAGE;
    if (result == UFORM_NCCL_SUCCESS) {
        pending_t call = {comm, send, receive, count, type, op, NULL};
        if (group_depth > 0) {
            pending_t *queued = malloc(sizeof *queued);
            if (!queued) result = UFORM_NCCL_SYSTEM_ERROR;
            else {
                *queued = call;
                if (group_calls_last) group_calls_last->next = queued;
                else group_calls = queued;
                group_calls_last = queued;
            }
        } else {
            result = submit(&call);
        }
    }
    pthread_mutex_unlock(&lock);
    return result;
}

/* ---- groups ---- */

ENTRY(uform_ncclResult, ncclGroupStart, (void)) {
    CONFIGURED();
    group_depth++;
    return UFORM_NCCL_SUCCESS;
}

ENTRY(uform_ncclResult, ncclGroupEnd, (void)) {
    CONFIGURED();
    if (group_depth == 0) return UFORM_NCCL_INVALID_USAGE;
    if (--group_depth > 0) return UFORM_NCCL_SUCCESS;
    pthread_mutex_lock(&lock);
    uform_ncclResult result = UFORM_NCCL_SUCCESS;
    /* The initialisations, in the order they were asked for (the list is newest first). */
    struct ncclComm *order = NULL;
    while (group_inits) {
        struct ncclComm *comm = group_inits;
        group_inits = comm->group_next;
        comm->group_next = order;
        order = comm;
    }
    /* Every rank of the group starts (joins) first, then the blocking ones are waited for; a
     * non-blocking one makes the end answer ncclInProgress while it runs. */
    for (struct ncclComm *comm = order; comm; comm = comm->group_next) start_init(comm);
    bool running = false;
    for (struct ncclComm *comm = order, *next; comm; comm = next) {
        next = comm->group_next;
        comm->group_next = NULL;
        uform_ncclResult one = UFORM_NCCL_SUCCESS;
        if (comm->nonblocking) {
            progress_init(comm);
            running |= comm->state == COMM_PENDING;
            if (comm->state == COMM_FAILED) one = comm->error;
        } else {
            one = complete_init(comm);
        }
        if (one != UFORM_NCCL_SUCCESS && result == UFORM_NCCL_SUCCESS) result = one;
    }
    if (result == UFORM_NCCL_SUCCESS && running) result = UFORM_NCCL_IN_PROGRESS;
    while (group_calls) {
        pending_t *call = group_calls;
        group_calls = call->next;
        uform_ncclResult one = live(call->comm) && call->comm->state == COMM_READY ? submit(call)
                               : live(call->comm)                                   ? call->comm->error
                                                                                    : UFORM_NCCL_INVALID_ARGUMENT;
        if (one != UFORM_NCCL_SUCCESS && result == UFORM_NCCL_SUCCESS) result = one;
        free(call);
    }
    group_calls_last = NULL;
    pthread_mutex_unlock(&lock);
    return result;
}
