/* Internal: what the two sides of the rendezvous (mesh_rendezvous.h tells the protocol) share.
 *   mesh_rendezvous.c  the entry point, the session's clocks and grace, the test hook
 *   mesh_records.c     the files' formats: run and facts, the roster, refusals in words
 *   mesh_holder.c      whether a file's writer is provably gone (host, boot, pid namespace)
 *   mesh_lead.c        index 0: gathers, judges, publishes the roster, cleans up
 *   mesh_follow.c      every other index: joins, takes the roster, acknowledges it
 *   mesh_follow_answer.c  how it answers the outcome and leaves (mesh_follow.h) */
#ifndef UFORM_MESH_SESSION_H
#define UFORM_MESH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mesh/mesh_files.h"
#include "mesh/mesh_rendezvous.h"

/** A run's nonce: 16 random bytes in hex, in every file of the run. */
#define UFORM_MESH_NONCE_HEX 32

/** One process's side of one rendezvous. */
typedef struct uform__mesh_session_t {
    const char *directory, *job, *verb;
    const char *host; /* this process's host name (its facts') */
    double timeout_seconds;
    const volatile int *cancel; /* the caller's cancel flag (nonzero: stop), or NULL */
    uint64_t deadline_ns; /* uform__now_ns() time at which this process stops waiting */
    int job_fd;           /* the job directory, or -1 */
    char nonce[UFORM_MESH_NONCE_HEX + 1];
} uform__mesh_session_t;

/* ---- mesh_rendezvous.c ---- */

/**
 * One pause of a wait: sleeps the next step of a bounded backoff (0.1 ms doubling to 50 ms, so
 * every wait looks at the cancel flag at least every 50 ms). OK after a pause; TIMEOUT, without
 * sleeping, once `deadline_ns` (uform__now_ns time) has passed; INTERRUPTED (its message set)
 * when the caller's cancel flag is set.
 */
uform_status_t uform__mesh_wait(const uform__mesh_session_t *s, uint64_t deadline_ns, uint64_t *step_ns);
/** Calls the test hook (uform__test_mesh_step) if one is set. */
void uform__mesh_step(const uform__mesh_session_t *s, uint64_t index, const char *step);
/** How much longer than its timeout one side waits for the other's last step: a tenth of the
 *  timeout, 1 to 10 s. */
double uform__mesh_grace_seconds(double timeout_seconds);
/** `directory/job/name` for a message, shortened in the middle ("/very/lo...ng/path") to at
 *  most 160 bytes, so that the reason that follows it always fits the last error. `name` may be
 *  NULL (the job directory itself). */
void uform__mesh_path(const uform__mesh_session_t *s, const char *name, char *out, size_t capacity);
/** INVALID_ARGUMENT: the job directory exists already, an earlier run's (or a second index 0's),
 *  naming who its run file `run_text` (may be NULL or "": none) says made it. Index 0 answers it
 *  when its directory exists, a follower when it finds an earlier run's there: one message, so
 *  that every process of the new run answers the same. */
uform_status_t uform__mesh_refuse_existing(const uform__mesh_session_t *s, const char *run_text);
/** "facts.<i>" (a process's facts) and "took.<i>" (the same file once it has the roster). */
void uform__mesh_facts_name(uint64_t index, char *name, size_t capacity);
void uform__mesh_took_name(uint64_t index, char *name, size_t capacity);

/* ---- mesh_records.c ---- */

void uform__mesh_make_nonce(char *nonce);
/** The facts' lines under `header`: "facts" for a process's own file, "run" for index 0's run
 *  file (index 0's facts, then its deadline and timeout). */
void uform__mesh_format_facts(char *text, const char *header, const char *nonce, const uform__mesh_facts_t *facts);
bool uform__mesh_parse_facts(const char *text, const char *header, char *nonce, uform__mesh_facts_t *facts);
/** Who holds a file, in words ("host H, pid P"), for a refusal; `nonce` (or NULL) tells an
 *  earlier run's file apart. */
void uform__mesh_describe_holder(const char *text, const char *nonce, char *out, size_t capacity);
/** The first field on which `theirs` disagrees with `ours` (index 0's): MISMATCH and `message`. */
uform_status_t uform__mesh_compare(const uform__mesh_session_t *s, const uform__mesh_facts_t *ours,
                                   const uform__mesh_facts_t *theirs, char *message, size_t capacity);
/** "3, 5, 9 and 12 more": the indices 1.. whose `done` flag is false. */
void uform__mesh_list_missing(const bool *done, uint64_t count, char *out, size_t capacity);
/** The files' format version: the first line of every file is "uform-mesh-<kind> <version>".
 *  Version 3's facts and run file name the writer's boot id and pid namespace. */
#define UFORM_MESH_FORMAT 3
/** The outcome's own version: its layout is version 2's, so a process of a uform that writes
 *  version 2 still reads the verdict (a MISMATCH naming both versions) that ends a mixed run. */
#define UFORM_MESH_OUTCOME_FORMAT 2
/** Publishes the roster (the run's shape), sealed with its checksum. */
uform_status_t uform__mesh_write_roster(const uform__mesh_session_t *s, const uform__mesh_roster_t *roster);
/** Reads the roster `text`: OK with the shape; MISMATCH naming both format versions when another
 *  uform wrote it; IO_ERROR naming the file when it is truncated, damaged (its checksum) or
 *  malformed; INVALID_ARGUMENT when it is another run's. */
uform_status_t uform__mesh_read_roster(const uform__mesh_session_t *s, const char *text, uform__mesh_roster_t *roster);
/** Whether roster `text` is whole and of this format version (its checksum holds): only then do
 *  its fields say whose it is. */
bool uform__mesh_roster_intact(const char *text);

/* ---- the outcome: one file, written once, that every process answers ---- */

/** The longest outcome message (it must fit uform_last_error()). */
#define UFORM_MESH_MESSAGE_MAX 480
/**
 * Proposes the run's outcome: `status` with its one-line `message` ("" for OK), written as the
 * file `outcome` exclusively, by index `by`. Whoever writes it first decides for everyone: the
 * answer (status, and message into `out`, `capacity` bytes, may alias `message`) is what the
 * file holds, this proposal or an earlier one. When the file can be neither written nor read,
 * the answer is the proposal itself (then only this process knows it).
 */
uform_status_t uform__mesh_decide(const uform__mesh_session_t *s, uint64_t by, uform_status_t status,
                                  const char *message, char *out, size_t capacity);
/** Reads the outcome: 1 with its status and message, 0 when there is none yet, -1 when it cannot
 *  be read or checked (IO_ERROR's message naming the file in `message`). */
int uform__mesh_read_outcome(const uform__mesh_session_t *s, uform_status_t *status, char *message, size_t capacity);
/** Whether the outcome exists: its file, or (without hard links) a whole copy in its claim. */
bool uform__mesh_outcome_exists(const uform__mesh_session_t *s);
/* ---- mesh_holder.c ---- */

/** Whether the holder of a file (its text: host, pid, boot, pidns) is provably gone: a process of
 *  `mine`'s host, boot and pid namespace whose pid no longer exists. Anything else (another host,
 *  another container's pid space, a field missing or unreadable on either side) is not provably
 *  dead, and is waited for as a live one. */
bool uform__mesh_holder_gone(const char *text, const uform__mesh_facts_t *mine);

/* ---- mesh_lead.c and mesh_follow.c ---- */

uform_status_t uform__mesh_lead(uform__mesh_session_t *s, const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                uform__mesh_roster_t *roster);
uform_status_t uform__mesh_follow(uform__mesh_session_t *s, const uform__mesh_facts_t *mine,
                                  uform__mesh_roster_t *roster);

#endif
