/* What the NCCL test double's files share: its configuration, the exported-entry macro, the
 * communicators and the lock that guards them, and the steps one file runs for another
 * (initialisations for the group end, a non-blocking communicator's outstanding work for abort).
 * Nothing here is exported from the library. */
#ifndef UFORM_NCCL_DOUBLE_INTERNAL_H
#define UFORM_NCCL_DOUBLE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mesh/nccl/nccl_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define INTERNAL __attribute__((visibility("hidden")))
/* Thread-local in the static TLS block (initial-exec), not dynamic TLS: LeakSanitizer's exit-time
 * scan of this dlopen'ed library's dynamic TLS faults on a bogus range (test_nccl_double_semantics
 * under ASan). The double's few bytes fit glibc's static TLS surplus for dlopen'ed libraries. */
#define TLS _Thread_local __attribute__((tls_model("initial-exec")))
#define MAX_MISSING 16

/* ---- configuration (nccl_double_config.c) ---- */

typedef struct config_t {
    int version;             /* `version N`: what ncclGetVersion answers (default 2.21.5) */
    long delay_ms;           /* `delay N`: how long a non-blocking communicator's work runs (default 20) */
    bool init_fault;         /* `fault init=...` */
    uform_ncclResult init_result;
    long init_rank;          /* `fault init_rank=N`: only that rank fails (-1: every rank) */
    long die_rank;           /* `fault init_dies=N`: the process initialising rank N exits inside it */
    uform_ncclResult collective_result; /* `fault collective=...`: non-blocking work ends so (0: none) */
    size_t missing_count;    /* `fault missing=ncclName` */
    char missing[MAX_MISSING][64];
    char error[512];         /* why the configuration was refused; "" when it was not */
} config_t;

INTERNAL const config_t *nccl_double_configuration(void);

/* Whether dlsym may see `symbol` (`fault missing=` hides it). */
INTERNAL int nccl_double_visible(const char *symbol);

/* Appends one line to the UFORM_NCCL_DOUBLE_LOG file (nothing when it is unset). */
INTERNAL void nccl_double_log(const char *line, size_t length);

/* ENTRY(return type, name, (parameters)) { body }: the exported indirect function `name`, its
 * resolver, and its implementation name##_impl (the body). */
#define ENTRY(ret, name, params)                                                                   \
    static ret name##_impl params;                                                                 \
    static __typeof__(name##_impl) *name##_resolve(void) {                                         \
        return nccl_double_visible(#name) ? name##_impl : NULL;                                    \
    }                                                                                              \
    EXPORT ret name params __attribute__((ifunc(#name "_resolve")));                               \
    static ret name##_impl params

/* A refused configuration is no library: every call but the error string answers this. */
#define CONFIGURED()                                                                               \
    do {                                                                                           \
        if (nccl_double_configuration()->error[0]) return UFORM_NCCL_INTERNAL_ERROR;               \
    } while (0)

/* ---- communicators (nccl_double.c) ---- */

typedef enum { COMM_PENDING, COMM_READY, COMM_FAILED } comm_state_t;

struct job_t;

struct ncclComm {
    uint32_t magic;
    int rank, nranks;
    uform_ncclUniqueId id;
    comm_state_t state;
    uform_ncclResult error; /* COMM_FAILED: why */
    bool logged;            /* an `init` line was written: a `destroy` line follows */
    bool nonblocking;       /* made by ncclCommInitRankConfig with config->blocking 0 */
    bool started;           /* its initialisation runs: joined, waiting for the other ranks */
    struct job_t *job;      /* non-blocking: the work still running on it (NULL: none) */
    uform_ncclResult async; /* non-blocking: how its last work ended (a failure sticks) */
    struct ncclComm *next;  /* every live communicator of the process (under nccl_double_lock) */
    struct ncclComm *group_next; /* this thread's group: initialisations still to run */
};
#define COMM_MAGIC 0x6e63636cu

/* Guards every communicator, collective and job of the process. */
extern INTERNAL pthread_mutex_t nccl_double_lock;

/* Whether `comm` is a live communicator of this process (under the lock). */
INTERNAL bool nccl_double_live(const struct ncclComm *comm);

/* The initialisation steps the outermost ncclGroupEnd runs (under the lock): start (join),
 * progress (ready once every rank joined), and complete (a blocking one, waited for). */
INTERNAL void nccl_double_start_init(struct ncclComm *comm);
INTERNAL void nccl_double_progress_init(struct ncclComm *comm);
INTERNAL uform_ncclResult nccl_double_complete_init(struct ncclComm *comm);

/* This thread's group: its depth and the initialisations it collected (newest first). */
extern INTERNAL TLS int nccl_double_group_depth;
extern INTERNAL TLS struct ncclComm *nccl_double_group_inits;

/* A call on a non-blocking communicator whose previous operation is still in progress: NCCL
 * (ncclCommEnsureReady) warns "Attempt to use communicator before the previous operation returned
 * ncclSuccess" and answers ncclInvalidArgument. The double says so on stderr and answers the same
 * (under the lock). */
INTERNAL uform_ncclResult nccl_double_misuse(const char *call, const struct ncclComm *comm);

/* Ranks of `comm`'s id alive in this process (under the lock). */
INTERNAL int nccl_double_local_ranks(const struct ncclComm *comm);

/* Whether `comm` is non-blocking with an operation still in progress (under the lock). */
INTERNAL bool nccl_double_busy(const struct ncclComm *comm);

/* ---- collectives and groups (nccl_double_groups.c) ---- */

/* Stops the work still running on `comm` (ncclCommAbort) and waits until the job no longer
 * touches it; the other communicators of that job end with ncclRemoteError (under the lock). */
INTERNAL void nccl_double_abort_work(struct ncclComm *comm);

#endif
