/* Internal: the processes of a run meet in directory/job/. Index 0 makes the job directory
 * (it must not exist: a name is one run's) and writes `run` (the run's nonce, its deadline and
 * timeout); every other index writes `facts.<i>` (claimed exclusively); index 0 reads them all,
 * checks they agree, and writes one `roster` that every other process reads: O(n) files for the
 * whole run. A process acknowledges the roster by renaming its facts `took.<i>`; once every one
 * has, index 0 removes the run file, then the rest, then the directory.
 *
 * A refused run's roster is its verdict: index 0 stops at the first disagreement and gives
 * processes still on their way a grace (a tenth of the timeout, 1 to 10 s) to arrive and take
 * it. A process that finds the run file gone says the run ended without it, removes what it
 * wrote, and the last one out removes the directory. A run file older than its timeout plus
 * twice the grace by the file system's clock (the one every host shares) is an earlier run's.
 * Every wait is bounded by the timeout, and a timeout names who never arrived.
 *
 * One race is left open, as in any two-phase exchange without a third message: a process that
 * acknowledges at the very moment index 0's wait for acknowledgements ends (at its full timeout)
 * may return OK while index 0 answers TIMEOUT. */
#ifndef UFORM_MESH_RENDEZVOUS_H
#define UFORM_MESH_RENDEZVOUS_H

#include <stdbool.h>
#include <stdint.h>

#include "mesh/mesh_internal.h"

/** What one process says about itself. */
typedef struct uform__mesh_facts_t {
    uint64_t index, count;
    uint64_t gpus;      /* devices of its executor */
    uint64_t gpu_class; /* its executor's class */
    uint64_t multimem;  /* the NVLink domain's extent it asks for (given or derived) */
    bool multicast;     /* its multicast probe succeeded on all its devices */
    uint64_t nccl;      /* 1 where libnccl.so.2 loads here (index 0: where it made an NCCL id) */
    char host[128];
    uint64_t pid;
} uform__mesh_facts_t;

/** What every process learns: the run's agreed shape. */
typedef struct uform__mesh_roster_t {
    uint64_t count, gpus, gpu_class, multimem;
    bool all_multicast;  /* every process's probe succeeded */
    bool has_nccl_id;
    uint8_t nccl_id[UFORM_NCCL_UNIQUE_ID_BYTES];
} uform__mesh_roster_t;

/**
 * Meets the other processes. `mine` is this process's facts; index 0 also gives the NCCL id to
 * publish (NULL: the run has no data plane). On OK `roster` holds the shape every process got.
 * INVALID_ARGUMENT (bad job, symlinked or foreign job directory, an index held by another
 * process, an earlier run's leftovers), NOT_FOUND (no directory), TIMEOUT (naming the indices
 * never seen, or index 0 ending a failed run before this process joined), MISMATCH (naming the field and both sides), IO_ERROR.
 */
uform_status_t uform__mesh_rendezvous(const char *directory, const char *job, double timeout_seconds,
                                      const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                      uform__mesh_roster_t *roster, const char *verb);

/** Tests only: called at two steps of the rendezvous to widen the windows in which a failed run
 *  ends while a latecomer joins: "facts" (an index other than 0, between reading the run file and
 *  writing its facts), "taken" (the same, between reading the roster and removing its facts) and
 *  "clean-up" (index 0, before it removes the job's files). NULL in production. */
extern void (*_Atomic uform__test_mesh_step)(const char *directory, const char *job, uint64_t index,
                                             const char *step);

#endif
