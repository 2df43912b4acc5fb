/**
 * @file uform/mesh.h
 * @brief The multi-process mesh: processes training one model meet through a shared directory.
 */
#ifndef UFORM_MESH_H
#define UFORM_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "uform/executor.h"
#include "uform/export.h"
#include "uform/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque: one process's place among the processes of a run. */
typedef struct uform_mesh_t uform_mesh_t;

/** How a mesh's NVLink domains reduce. */
typedef enum uform_multimem_tier_t {
    UFORM_MULTIMEM_TIER_SWITCH_REDUCED = 0, /**< the NVLink switch reduces through multicast memory */
    UFORM_MULTIMEM_TIER_PEER_READ = 1       /**< members read peers in a fixed order */
} uform_multimem_tier_t;

/**
 * Where this process sits among the processes training one model, and how they meet.
 * Initialise with UFORM_MESH_OPTIONS_INIT so `struct_size` tells the library the layout.
 */
typedef struct uform_mesh_options_t {
    size_t struct_size;              /**< sizeof(uform_mesh_options_t) */
    size_t host_domain_index;        /**< this process's index among host_domain_count */
    size_t host_domain_count;        /**< processes in the run; 0 means 1 (no peers) */
    size_t gpus_per_multimem_domain; /**< GPUs one NVLink multicast domain spans; 0 derives */
    const char *directory;           /**< borrowed; the directory every host sees; required with peers */
    const char *job;                 /**< borrowed; the run's unique plain name; required with peers */
    double timeout_seconds;          /**< bound on every wait for a peer; 0 means 120 */
    /** borrowed, may be NULL: the caller's cancel flag. Nonzero (set from any thread, or from a
     *  signal handler) makes the bootstrap return INTERRUPTED within 50 ms of any wait: this
     *  process's files are taken back and the others answer INTERRUPTED naming it, as of a
     *  process that died: at once, but for index 0 while a process has yet to arrive, which waits
     *  a grace more (a tenth of the timeout, 1 to 10 s) so that a latecomer still reads the
     *  outcome before the directory goes. Where the run's outcome was written first (the cancel
     *  came as the run ended), this process answers that outcome, as the others do. Limit: a follower
     *  cancelled before index 0's run file is there knows no run to tell: it answers INTERRUPTED
     *  alone and leaves no trace, and index 0 waits its timeout for it ("never arrived"). An
     *  options struct of the older size (without it) is read without it. Set it as
     *  uform_call_t.cancel says: with an atomic store. */
    const volatile int *cancel;
} uform_mesh_options_t;

#define UFORM_MESH_OPTIONS_INIT {sizeof(uform_mesh_options_t), 0, 0, 0, NULL, NULL, 0.0, NULL}

/** What a mesh reports about itself. */
typedef struct uform_mesh_description_t {
    size_t gpus_per_host_domain;      /**< GPUs one process drives */
    size_t gpus_per_multimem_domain;  /**< GPUs one NVLink domain spans */
    size_t gpus_per_colocated_domain; /**< GPUs in the whole run */
    size_t host_domain_index;         /**< this process's index */
    size_t first_gpu_index;           /**< run-wide index of this process's first GPU */
    uint32_t multimem_tier;           /**< a uform_multimem_tier_t */
    uint32_t gpu_class;               /**< a uform_gpu_class_t, 0 for none */
} uform_mesh_description_t;

/**
 * Joins this process to the run's mesh over a VRAM executor whose devices are this
 * process's members. `options` may be NULL (a run of one process).
 *
 * One outcome: every process of a run that meets returns the same answer, OK with the same
 * run-wide description, or the same error status with the same message, even when one process
 * dies, stalls past the timeout or cannot read the others' files at any step. The processes meet
 * in `directory/job/`; index 0 publishes a roster, every other process checks it (format version,
 * checksum) and acknowledges it, and the answer is one file, `outcome`, written exactly once: by
 * index 0 once every acknowledgement is in (or its wait for them ends), or by the first process
 * that gives up waiting for index 0, cannot use the run file or the roster, cannot write its own
 * file, or is cancelled. No process returns before it exists: a process whose proposal could not
 * be written keeps reading for its deadline (a grace at least) and answers the outcome that
 * appears; an I/O error reading the run file, before a process knows the run, is asked again until
 * its deadline. Index 0 dying at any step: before its run file, every other process answers
 * TIMEOUT ("index 0 never arrived"); after it, the first to give up decides TIMEOUT for all ("no
 * roster from index 0", "no outcome from index 0"); after the outcome, everyone has it. Limits: a
 * process that reaches the directory only after index 0 has ended the run (it came, or woke, too
 * late to be seen) answers TIMEOUT in its own words ("ended the run before this process joined"),
 * and the others never waited for it; when the outcome file can be neither written nor read (a
 * failing file system), a process answers its own proposal; so does each, on a file system without
 * hard links, when the process that claimed the outcome died between creating its claim and
 * writing it (one killed later leaves its verdict in the claim, read by all). The whole bootstrap
 * waits at most about the timeout plus three graces (a grace is a tenth of the timeout, 1 to 10 s;
 * one more where a proposal finds no outcome to read), or, with NCCL's blocking initialisation
 * (NCCL before 2.14), unboundedly there. Files: every process removes its own; the last one out
 * removes the directory. A process is known dead only on index 0's host, boot and pid namespace
 * (its pid gone): one of another host, or of another container's pid namespace under the same host
 * name (Kubernetes hostNetwork pods, --uts=host), that dies after it was seen keeps the outcome
 * file in the job directory (nobody can tell it from a slow one), and index 0 dying after the
 * others have their answer leaves its run file, the roster and the outcome; a job name is one
 * run's, so a rerun takes a new one. A rerun under the same name over such leftovers (a launcher
 * requeuing under $SLURM_JOB_ID at once) is refused by every process of it alike:
 * INVALID_ARGUMENT, "job directory exists already", naming the directory and its run file's
 * maker. A follower knows the leftovers by a roster already there when it first looks, an outcome
 * older than index 0's grace by the file system's clock, or a run file older than that index 0's
 * timeout and two graces; only leftovers of a run file alone, younger than that, look like an
 * index 0 still gathering, and a follower then waits out its timeout (TIMEOUT) while index 0
 * refuses at once. The job directory is index 0's own (its owner, whoever the file system says
 * it is: nobody's under NFS root_squash or all_squash, is recorded in the run file); one whose
 * owner is not the recorded one, or another user's with no run file, is refused alike, as above.
 * Every deadline is this process's monotonic clock or the
 * directory's file system's clock: no two hosts' clocks are compared.
 *
 * The NCCL hand-off that follows is bounded too: with NCCL 2.14 and newer the communicators are
 * initialised non-blocking and polled against the timeout (NCCL never notices a peer that died
 * in its initialisation); on a timeout every communicator is aborted and the bootstrap answers
 * TIMEOUT naming "NCCL init" and this process's ranks that never finished. Older NCCLs block
 * until every rank has joined, without bound. The one-outcome guarantee covers the meeting: in
 * the hand-off, a process whose own initialisation fails (a device, NCCL refusing a rank)
 * answers that failure, and the others answer TIMEOUT naming "NCCL init".
 *
 * @return OK; INVALID_ARGUMENT (NULL output, a NULL or RAM executor: the mesh needs a VRAM
 *         executor, bad options); NOT_FOUND, TIMEOUT, MISMATCH, IO_ERROR while meeting peers;
 *         INTERRUPTED when cancelled (options->cancel).
 */
UFORM_API uform_status_t uform_mesh_bootstrap(uform_executor_t *executor, const uform_mesh_options_t *options,
                                              uform_mesh_t **mesh);

/** Copies the mesh's description. INVALID_ARGUMENT for NULL arguments. */
UFORM_API uform_status_t uform_mesh_describe(const uform_mesh_t *mesh, uform_mesh_description_t *description);

/**
 * The NCCL communicator (an `ncclComm_t`) of this process's device `device` (its index among the
 * executor's devices), spanning every GPU of the run: its rank is first_gpu_index + device, its
 * size gpus_per_colocated_domain. Borrowed from the mesh: valid until uform_mesh_free, which
 * destroys it; use it (collectives are NCCL's, not uform's) only while the mesh lives.
 *
 * With NCCL 2.14 and newer the communicator is NON-BLOCKING (made with ncclConfig_t.blocking = 0,
 * so that its initialisation could be bounded and aborted; NCCL keeps that mode for the
 * communicator's life). NCCL calls on it (ncclGroupEnd of a group holding its work, a collective
 * outside a group, ncclCommFinalize, ...) may then answer ncclInProgress: NCCL goes on issuing the
 * work from a thread of its own. Until ncclCommGetAsyncError(communicator, &state) gives state
 * ncclSuccess, the caller makes no other NCCL call on it (NCCL answers ncclInvalidArgument) and
 * enqueues no kernel or copy on the streams the work was given, nor frees its buffers; poll it
 * until ncclSuccess, or an error, after which the communicator is unusable. uform_mesh_free
 * aborts (ncclCommAbort) a communicator whose state is not ncclSuccess, which NCCL allows at any
 * point, and destroys the others. With older NCCLs the communicator is blocking: calls answer
 * ncclSuccess or an error, never ncclInProgress.
 * @return OK; NOT_FOUND when the mesh has no data plane (no libnccl.so.2 in this process: the
 *         message says why; the mesh itself formed); INVALID_ARGUMENT (NULL, device out of range).
 */
UFORM_API uform_status_t uform_mesh_communicator(const uform_mesh_t *mesh, size_t device, void **communicator);

/** Leaves the mesh and releases it. NULL does nothing. */
UFORM_API void uform_mesh_free(uform_mesh_t *mesh);

#ifdef __cplusplus
}
#endif

#endif /* UFORM_MESH_H */
