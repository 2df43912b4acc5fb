/* Internal: what the two sides of the rendezvous (mesh_rendezvous.h tells the protocol) share.
 *   mesh_rendezvous.c  the entry point, the session's clocks and grace, the test hook
 *   mesh_records.c     the files' formats: run and facts, the roster, refusals in words
 *   mesh_lead.c        index 0: gathers, judges, publishes the roster, cleans up
 *   mesh_follow.c      every other index: joins, takes the roster, acknowledges it */
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
    double timeout_seconds;
    uint64_t deadline_ns; /* uform__now_ns() time at which this process stops waiting */
    int job_fd;           /* the job directory, or -1 */
    char nonce[UFORM_MESH_NONCE_HEX + 1];
} uform__mesh_session_t;

/* ---- mesh_rendezvous.c ---- */

/** Calls the test hook (uform__test_mesh_step) if one is set. */
void uform__mesh_step(const uform__mesh_session_t *s, uint64_t index, const char *step);
/** How much longer than its timeout one side waits for the other's last step: a tenth of the
 *  timeout, 1 to 10 s. */
double uform__mesh_grace_seconds(double timeout_seconds);
/** Milliseconds since the epoch: the clock index 0's deadline is written in. */
uint64_t uform__mesh_wall_ms(void);
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
/** Publishes the roster: the shape, or the refusal `status` with its one-line `message`. */
uform_status_t uform__mesh_write_roster(const uform__mesh_session_t *s, uform_status_t status, const char *message,
                                        const uform__mesh_roster_t *roster);
/** Reads the roster `text`: OK with the shape, or the verdict's status and message ("(from
 *  index 0)"); INVALID_ARGUMENT when it is another run's, IO_ERROR when malformed. */
uform_status_t uform__mesh_read_roster(const uform__mesh_session_t *s, const char *text, uform__mesh_roster_t *roster);

/* ---- mesh_lead.c and mesh_follow.c ---- */

uform_status_t uform__mesh_lead(uform__mesh_session_t *s, const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                uform__mesh_roster_t *roster);
uform_status_t uform__mesh_follow(uform__mesh_session_t *s, const uform__mesh_facts_t *mine,
                                  uform__mesh_roster_t *roster);

#endif
