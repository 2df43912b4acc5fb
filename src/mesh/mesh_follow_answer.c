/* How a follower (mesh_follow.c) answers the run's outcome and leaves the job directory
 * (mesh_follow.h): once it has its answer it removes what it wrote, and the last one out of a run
 * index 0 has left removes the rest. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "mesh/mesh_follow.h"
#include "platform/platform.h"

/* True once index 0 has removed the run file (it removes it first when it ends the run). */
bool uform__follow_run_is_over(const follower_t *f) { return uform__mesh_probe(f->s->job_fd, "run") == 0; }

/* Whether any process's file is left in the job directory: a directory read, only on the way
 * out of a run index 0 has already left. */
static bool others_remain(const follower_t *f) {
    int fd = dup(f->s->job_fd);
    DIR *directory = fd >= 0 ? fdopendir(fd) : NULL;
    if (!directory) {
        if (fd >= 0) close(fd);
        return true; /* unknown: leave the rest to another */
    }
    bool remain = false;
    for (struct dirent *entry; !remain && (entry = readdir(directory));)
        remain = (!strncmp(entry->d_name, "facts.", 6) || !strncmp(entry->d_name, "took.", 5)) &&
                 !strstr(entry->d_name, ".claim");
    closedir(directory);
    return remain;
}

/* Removes the file this process still holds and, if index 0 has left (or is provably dead: of
 * this host, boot and pid namespace, its pid gone) and no other process's file is left, what
 * index 0 kept for the latecomers: the roster, the outcome, the directory. */
void uform__follow_leave(follower_t *f) {
    if (f->owned) uform__mesh_remove(f->s->job_fd, f->owned);
    if (f->owned == f->took) uform__mesh_remove(f->s->job_fd, f->facts); /* its claim, without hard links */
    f->owned = NULL;
    bool lead_gone = !uform__follow_run_is_over(f) && uform__mesh_holder_gone(f->run_text, f->mine);
    if ((!uform__follow_run_is_over(f) && !lead_gone) || others_remain(f)) return;
    if (lead_gone) uform__mesh_remove(f->s->job_fd, "run");
    uform__mesh_remove(f->s->job_fd, "roster");
    uform__mesh_remove(f->s->job_fd, "outcome");
    uform__mesh_remove_temporaries(f->s->job_fd);
    uform__mesh_remove_job(f->s->directory, f->s->job, f->s->job_fd);
}

/* Answers an outcome read (`read`: 1 read, 0 absent, -1 unreadable with `message` saying why),
 * then leaves. */
uform_status_t uform__follow_answer_read(follower_t *f, int read, uform_status_t status, const char *message) {
    uform__follow_leave(f);
    if (read != 1) return uform__fail(UFORM_STATUS_IO_ERROR, "%s", read < 0 ? message : "outcome vanished");
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", message);
    /* OK is decided only once every process acknowledged the roster, this one included: an OK it
     * never acknowledged is not this process's run. */
    if (!f->has_roster)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: %s: the run formed without this process (index %llu): use a new job name", f->s->verb,
                           f->s->job, (unsigned long long)f->mine->index);
    return UFORM_STATUS_OK;
}

/* Answers the run's outcome (the file exists), then leaves. */
uform_status_t uform__follow_answer(follower_t *f) {
    uform_status_t status = UFORM_STATUS_OK;
    char message[UFORM_MESH_MESSAGE_MAX + 1];
    int read = uform__mesh_read_outcome(f->s, &status, message, sizeof message);
    return uform__follow_answer_read(f, read, status, message);
}

/* Proposes an outcome (printf-style message) and answers the one the run has. When there is none
 * to read (this process could not write its proposal: a file system failing now, perhaps only for
 * a moment), it keeps reading until its deadline, and at least a grace: another process's
 * proposal, or index 0's verdict, may still come, and that is the run's answer. Only then does
 * it answer its own proposal, alone. */
uform_status_t uform__follow_propose(follower_t *f, uform_status_t status, const char *format, ...) {
    uform__mesh_session_t *s = f->s;
    char message[UFORM_MESH_MESSAGE_MAX + 1], said[UFORM_MESH_MESSAGE_MAX + 1];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    uform_status_t decided = uform__mesh_decide(s, f->mine->index, status, message, message, sizeof message);
    uform__mesh_step(s, f->mine->index, "proposed");
    uint64_t grace_ns = (uint64_t)(uform__mesh_grace_seconds(s->timeout_seconds) * 1e9), step = 0;
    uint64_t deadline = uform__now_ns() + grace_ns;
    if (deadline < s->deadline_ns) deadline = s->deadline_ns;
    for (;;) {
        uform_status_t answered = UFORM_STATUS_OK;
        int read = uform__mesh_read_outcome(s, &answered, said, sizeof said);
        if (read != 0) return uform__follow_answer_read(f, read, answered, said);
        uform_status_t waited = uform__mesh_wait(s, deadline, &step);
        if (waited == UFORM_STATUS_INTERRUPTED) return uform__follow_interrupted(f);
        if (waited != UFORM_STATUS_OK) break;
    }
    uform__follow_leave(f); /* no outcome could be written or read: this process alone knows its answer */
    return decided == UFORM_STATUS_OK ? UFORM_STATUS_OK : uform__fail(decided, "%s", message);
}

/* This process was cancelled: it tells the others at once (an outcome they all answer, as for a
 * process that died, only sooner), takes its files back and answers INTERRUPTED itself. Where the
 * run's outcome was written before its proposal (the cancel came as the run ended), that outcome
 * is everyone's answer, this process's too. */
uform_status_t uform__follow_interrupted(follower_t *f) {
    char message[UFORM_MESH_MESSAGE_MAX + 1], decided[UFORM_MESH_MESSAGE_MAX + 1];
    snprintf(message, sizeof message, "%s: %s: index %llu (host %s, pid %llu) was interrupted while the run met",
             f->s->verb, f->s->job, (unsigned long long)f->mine->index, f->mine->host,
             (unsigned long long)f->mine->pid);
    uform_status_t status =
        uform__mesh_decide(f->s, f->mine->index, UFORM_STATUS_INTERRUPTED, message, decided, sizeof decided);
    if (status != UFORM_STATUS_INTERRUPTED || strcmp(decided, message))
        return uform__follow_answer_read(f, 1, status, decided);
    uform__follow_leave(f);
    return uform__fail(UFORM_STATUS_INTERRUPTED, "%s", message);
}

/* Index 0 ended the run (removed its run file). Its outcome, where it is still there; otherwise
 * this process came too late to read it. */
uform_status_t uform__follow_ended(follower_t *f, bool joined) {
    /* One read, no probe first: index 0 removes the outcome a moment after its run file, and a
     * probe then a read could see it and then miss it. */
    uform_status_t status = UFORM_STATUS_OK;
    char message[UFORM_MESH_MESSAGE_MAX + 1];
    int read = uform__mesh_read_outcome(f->s, &status, message, sizeof message);
    if (read != 0) return uform__follow_answer_read(f, read, status, message);
    uform__follow_leave(f);
    return uform__fail(UFORM_STATUS_TIMEOUT,
                       "%s: %s: index 0 (%s) ended the run before this process %s: it failed or gave up (its message "
                       "says why); start again under a new job name",
                       f->s->verb, f->s->job, f->run_holder, joined ? "took its verdict" : "joined");
}
