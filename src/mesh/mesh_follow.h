/* Internal: a follower's state (mesh_follow.c joins, mesh_follow_answer.c answers and leaves). */
#ifndef UFORM_MESH_FOLLOW_H
#define UFORM_MESH_FOLLOW_H

#include <stdbool.h>

#include "mesh/mesh_session.h"

typedef struct follower_t {
    uform__mesh_session_t *s;
    const uform__mesh_facts_t *mine;
    char facts[32], took[32]; /* this index's two names */
    const char *owned;        /* which of them this process wrote and still holds, or NULL */
    bool has_roster;          /* it read and checked the roster: an OK outcome can be its answer */
    bool outcome_first;       /* the outcome was there when it first found the job directory */
    char run_text[UFORM_MESH_FILE_MAX];
    char run_holder[300]; /* index 0, in words */
} follower_t;

/** True once index 0 has removed the run file (it removes it first when it ends the run). */
bool uform__follow_run_is_over(const follower_t *f);
/** Removes the file this process still holds and, if it is the last one out of a run index 0 has
 *  left (or is provably dead), the rest and the directory. */
void uform__follow_leave(follower_t *f);
/** Answers an outcome read (`read`: 1 read, 0 absent, -1 unreadable with `message` saying why),
 *  then leaves. */
uform_status_t uform__follow_answer_read(follower_t *f, int read, uform_status_t status, const char *message);
/** Answers the run's outcome (the file exists), then leaves. */
uform_status_t uform__follow_answer(follower_t *f);
/** Proposes an outcome (printf-style message) and answers the one the run has. */
uform_status_t uform__follow_propose(follower_t *f, uform_status_t status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/** This process was cancelled: tells the others at once and takes its files back. */
uform_status_t uform__follow_interrupted(follower_t *f);
/** Index 0 ended the run (removed its run file): its outcome where it is still there. */
uform_status_t uform__follow_ended(follower_t *f, bool joined);

#endif
