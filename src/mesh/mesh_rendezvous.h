/* Internal: the processes of a run meet in directory/job/. Index 0 makes the job directory
 * (it must not exist: a name is one run's) and writes `run` (the run's nonce and timeout); every
 * other index writes `facts.<i>` (claimed exclusively); index 0 reads them all, checks they
 * agree, and writes one `roster` (sealed with a checksum) that every other process reads and
 * checks, then acknowledges by renaming its facts `took.<i>`. Once every one has, index 0
 * proposes the outcome: O(n) file reads for the whole run.
 *
 * One outcome. The file `outcome` is written once, exclusively (link, or exclusive create and
 * rename), and every process, index 0 included, answers what it holds: status and message. Index
 * 0 proposes it (OK, a refusal at the first disagreement, or a timeout naming who never arrived
 * or never acknowledged); a process that gives up waiting for index 0, cannot read or check the
 * roster, or is cancelled proposes it too, and whichever proposal is written first is the run's.
 * So a process that dies or stalls at any step cannot split the run: no process answers before
 * the outcome exists, and there is only one.
 *
 * Leaving. A process that has its answer removes its own file. Index 0 waits a grace (a tenth of
 * the timeout, 1 to 10 s) for them to, then removes the run file (the run has ended), and the
 * rest unless a process that has not read the outcome yet still holds a file: then the outcome
 * stays for it, and the last one out removes it and the directory. Only a process of index 0's
 * host, boot and pid namespace whose pid is gone is known dead: its file goes at once (a pid
 * means nothing in another container's pid namespace, even under the same host name). A process that finds the run file
 * gone and no outcome says the run ended without it. A run file older than its timeout plus twice
 * the grace by the file system's clock (the one every host shares) is an earlier run's. No
 * decision compares two hosts' clocks. Every wait is bounded by the timeout and looks at the
 * cancel flag at least every 50 ms. */
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
    /* Where that pid means something: the kernel's boot id (/proc/sys/kernel/random/boot_id) and
     * the pid namespace ("pid:[4026531836]", /proc/self/ns/pid); "" where they cannot be read.
     * Containers of one host name (host network, --uts=host) each have their own pid space. */
    char boot[40];
    char pidns[40];
} uform__mesh_facts_t;

/** This process's boot id and pid namespace into `f` (mesh_holder.c), "" where unread. */
void uform__mesh_identity(uform__mesh_facts_t *f);

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
 * `cancel` (may be NULL): nonzero stops every wait within 50 ms with INTERRUPTED.
 * INVALID_ARGUMENT (bad job, symlinked or foreign job directory, an index held by another
 * process, an earlier run's leftovers), NOT_FOUND (no directory), TIMEOUT (naming the indices
 * never seen, or index 0 ending a failed run before this process joined), MISMATCH (naming the field and both sides), IO_ERROR.
 */
uform_status_t uform__mesh_rendezvous(const char *directory, const char *job, double timeout_seconds,
                                      const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                      uform__mesh_roster_t *roster, const volatile int *cancel, const char *verb);

/** Tests only: called at each step of the rendezvous, to hold, stop or kill a process there.
 *  Index 0: "gathered" (every facts file read, or the gather given up), "published" (the roster
 *  written), "deciding" (before the outcome), "decided" (after it), "clean-up" (before it removes
 *  the job's files). Every other index: "facts" (the run file read, its facts not written yet),
 *  "published" (facts written), "taken" (the roster read and checked, not acknowledged yet),
 *  "acknowledged" (took.<i> made, the outcome not read yet), "proposed" (after it proposed an
 *  outcome). NULL in production. */
extern void (*_Atomic uform__test_mesh_step)(const char *directory, const char *job, uint64_t index,
                                             const char *step);

#endif
