/* Every other index's side of the rendezvous (mesh_rendezvous.h): find the run index 0 made,
 * publish this process's facts, take the roster, acknowledge it (facts.<i> renamed took.<i>).
 * Whatever happens, this process removes what it wrote once the run has ended without it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "mesh/mesh_session.h"
#include "platform/platform.h"

typedef struct follower_t {
    uform__mesh_session_t *s;
    const uform__mesh_facts_t *mine;
    char facts[32], took[32]; /* this index's two names */
    const char *owned;        /* which of them this process wrote and still holds, or NULL */
    char run_text[UFORM_MESH_FILE_MAX];
    char run_holder[300]; /* index 0, in words */
} follower_t;

/* True once index 0 has removed the run file (it removes it first when it ends the run). */
static bool run_is_over(const follower_t *f) { return uform__mesh_probe(f->s->job_fd, "run") == 0; }

/* Removes the file this process still holds and, if the run has ended, the job directory:
 * index 0 could not while that file was in it. */
static void leave(follower_t *f) {
    if (f->owned) uform__mesh_remove(f->s->job_fd, f->owned);
    f->owned = NULL;
    if (run_is_over(f)) uform__mesh_remove_job(f->s->directory, f->s->job, f->s->job_fd);
}

/* Index 0 ended the run (a refusal or its timeout) without this process's acknowledgement. */
static uform_status_t ended_without_us(follower_t *f, bool joined) {
    leave(f);
    return uform__fail(UFORM_STATUS_TIMEOUT,
                       "%s: %s: index 0 (%s) ended the run before this process %s: it failed or gave up (its message "
                       "says why); start again under a new job name",
                       f->s->verb, f->s->job, f->run_holder, joined ? "took its verdict" : "joined");
}

/* Opens the job directory and reads its run file, waiting for index 0 to make them. A directory
 * removed under this process (an earlier run of the same name ending) is opened again: a new
 * one of that name is this run's. */
static uform_status_t read_run(follower_t *f) {
    uform__mesh_session_t *s = f->s;
    uint64_t step = 0;
    for (;;) {
        if (s->job_fd < 0) {
            bool existed = false;
            uform_status_t status = uform__mesh_open_job(s->directory, s->job, false, &existed, &s->job_fd, s->verb);
            if (status != UFORM_STATUS_OK) return status;
        }
        if (s->job_fd >= 0) {
            uform_status_t status = uform__mesh_read(s->job_fd, "run", f->run_text, s->verb);
            if (status != UFORM_STATUS_NOT_FOUND) return status;
            if (uform__mesh_job_removed(s->job_fd)) {
                close(s->job_fd);
                s->job_fd = -1;
            }
        }
        if (!uform__mesh_backoff(s->deadline_ns, &step))
            return s->job_fd < 0 ? uform__fail(UFORM_STATUS_TIMEOUT, "%s: %s: index 0 never arrived within %g s (no %s/%s)",
                                               s->verb, s->job, s->timeout_seconds, s->directory, s->job)
                                 : uform__fail(UFORM_STATUS_TIMEOUT,
                                               "%s: %s: index 0 made %s/%s but wrote no run file within %g s", s->verb,
                                               s->job, s->directory, s->job, s->timeout_seconds);
    }
}

/* Whether the run file is an earlier run's leftovers, judged by the file system's clock (on NFS
 * the server's, the one clock every host shares): it was written longer before this process's
 * facts than index 0 can still be waiting (its timeout plus twice the grace). */
static bool run_is_stale(const follower_t *f, double *age_seconds) {
    uint64_t timeout_ms = 0;
    int64_t run_ns = 0, facts_ns = 0;
    if (!uform__mesh_field_number(f->run_text, "timeout_ms", &timeout_ms) ||
        !uform__mesh_mtime_ns(f->s->job_fd, "run", &run_ns) || !uform__mesh_mtime_ns(f->s->job_fd, f->facts, &facts_ns))
        return false;
    double timeout = (double)timeout_ms / 1e3;
    *age_seconds = (double)(facts_ns - run_ns) / 1e9;
    return *age_seconds > timeout + 2 * uform__mesh_grace_seconds(timeout);
}

/* After this process's facts are in: a roster already there is this run's refusal (taken below,
 * like any verdict), or an earlier run's, or, written before these facts (by the file system's
 * clock), a run that formed without this index. A took.<i> is a process that has taken the
 * roster in this index's place (the facts.<i> it renamed is how these facts got in). */
static uform_status_t check_after_publishing(follower_t *f) {
    uform__mesh_session_t *s = f->s;
    char text[UFORM_MESH_FILE_MAX], nonce[UFORM_MESH_NONCE_HEX + 1] = "", who[300];
    uint64_t status = 0;
    int64_t roster_ns = 0, facts_ns = 0;
    if (uform__mesh_read(s->job_fd, f->took, text, s->verb) == UFORM_STATUS_OK) {
        uform__mesh_describe_holder(text, s->nonce, who, sizeof who);
        leave(f);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %s: index %llu is already held by %s", s->verb, s->job,
                           (unsigned long long)f->mine->index, who);
    }
    if (uform__mesh_read(s->job_fd, "roster", text, s->verb) != UFORM_STATUS_OK) return UFORM_STATUS_OK;
    if (!uform__mesh_field(text, "nonce", nonce, sizeof nonce) || strcmp(nonce, s->nonce)) {
        leave(f);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: %s/%s holds an earlier run's roster (run file: %s): leftovers; use a new job name",
                           s->verb, s->directory, s->job, f->run_holder);
    }
    if (uform__mesh_field_number(text, "status", &status) && status == UFORM_STATUS_OK &&
        uform__mesh_mtime_ns(s->job_fd, "roster", &roster_ns) && uform__mesh_mtime_ns(s->job_fd, f->facts, &facts_ns) &&
        roster_ns < facts_ns) {
        leave(f);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: %s/%s holds a roster written before this process arrived (run file: %s): an earlier "
                           "run's leftovers, or this run formed with another process as index %llu; use a new job name",
                           s->verb, s->directory, s->job, f->run_holder, (unsigned long long)f->mine->index);
    }
    return UFORM_STATUS_OK;
}

/* Publishes this process's facts, exclusively: its index may be someone else's. */
static uform_status_t publish_facts(follower_t *f) {
    uform__mesh_session_t *s = f->s;
    char text[UFORM_MESH_FILE_MAX], holder[UFORM_MESH_FILE_MAX], who[300];
    if (uform__mesh_probe(s->job_fd, f->took) == 1) { /* it has taken the roster already */
        if (uform__mesh_read(s->job_fd, f->took, holder, s->verb) != UFORM_STATUS_OK) holder[0] = 0;
        uform__mesh_describe_holder(holder, s->nonce, who, sizeof who);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %s: index %llu is already held by %s", s->verb, s->job,
                           (unsigned long long)f->mine->index, who);
    }
    uform__mesh_format_facts(text, "facts", s->nonce, f->mine);
    bool taken = false;
    uform_status_t status = uform__mesh_write_new(s->job_fd, f->facts, text, &taken, holder, s->verb);
    if (status != UFORM_STATUS_OK) return run_is_over(f) ? ended_without_us(f, false) : status;
    if (taken) {
        uform__mesh_describe_holder(holder, s->nonce, who, sizeof who);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %s: index %llu is already held by %s", s->verb, s->job,
                           (unsigned long long)f->mine->index, who);
    }
    f->owned = f->facts;
    double age = 0;
    if (run_is_stale(f, &age)) {
        leave(f);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: %s/%s is an earlier run's (run file: %s, %.0f s old, past its index 0's timeout): "
                           "leftovers; use a new job name",
                           s->verb, s->directory, s->job, f->run_holder, age);
    }
    return check_after_publishing(f);
}

/* Until when this process waits for the roster: its own deadline, or index 0's if that is
 * later (index 0 started later), bounded by index 0's timeout from now, plus the grace: index
 * 0 publishes a timeout's roster at its deadline, and every process should read who never came. */
static uint64_t roster_deadline(const follower_t *f) {
    uint64_t grace_ns = (uint64_t)(uform__mesh_grace_seconds(f->s->timeout_seconds) * 1e9);
    uint64_t deadline = f->s->deadline_ns + grace_ns;
    uint64_t lead_deadline_ms = 0, timeout_ms = 0, now_ms = uform__mesh_wall_ms();
    if (uform__mesh_field_number(f->run_text, "deadline_ms", &lead_deadline_ms) && lead_deadline_ms > now_ms) {
        uint64_t wait_ms = lead_deadline_ms - now_ms;
        /* Index 0's clock may be ahead of ours: it cannot be waiting longer than its timeout. */
        if (uform__mesh_field_number(f->run_text, "timeout_ms", &timeout_ms) && wait_ms > timeout_ms)
            wait_ms = timeout_ms;
        uint64_t lead = uform__now_ns() + wait_ms * 1000000u + grace_ns;
        if (lead > deadline) deadline = lead;
    }
    return deadline;
}

uform_status_t uform__mesh_follow(uform__mesh_session_t *s, const uform__mesh_facts_t *mine,
                                  uform__mesh_roster_t *roster) {
    follower_t f = {.s = s, .mine = mine};
    uform__mesh_facts_name(mine->index, f.facts, sizeof f.facts);
    uform__mesh_took_name(mine->index, f.took, sizeof f.took);
    uform_status_t status = read_run(&f);
    if (status != UFORM_STATUS_OK) return status;
    uform__mesh_facts_t run;
    if (!uform__mesh_parse_facts(f.run_text, "run", s->nonce, &run))
        return uform__fail(UFORM_STATUS_IO_ERROR, "%s: %s/%s/run is malformed", s->verb, s->directory, s->job);
    uform__mesh_describe_holder(f.run_text, NULL, f.run_holder, sizeof f.run_holder);
    if (mine->index >= run.count)
        return uform__fail(UFORM_STATUS_MISMATCH,
                           "%s: %s disagree on the processes in the run (host_domain_count): index 0 (host %s) says "
                           "%llu, index %llu (host %s) says %llu",
                           s->verb, s->job, run.host, (unsigned long long)run.count, (unsigned long long)mine->index,
                           mine->host, (unsigned long long)mine->count);

    uform__mesh_step(s, mine->index, "facts");
    if (run_is_over(&f)) return ended_without_us(&f, false);
    status = publish_facts(&f);
    if (status != UFORM_STATUS_OK) return status;

    char text[UFORM_MESH_FILE_MAX];
    uint64_t deadline = roster_deadline(&f), step = 0;
    for (;;) {
        status = uform__mesh_read(s->job_fd, "roster", text, s->verb);
        if (status == UFORM_STATUS_OK) break;
        if (status == UFORM_STATUS_NOT_FOUND && run_is_over(&f)) return ended_without_us(&f, true);
        if (status != UFORM_STATUS_NOT_FOUND) {
            leave(&f);
            return status;
        }
        if (!uform__mesh_backoff(deadline, &step)) {
            leave(&f);
            return uform__fail(UFORM_STATUS_TIMEOUT,
                               "%s: %s: no roster from index 0 (%s) within %g s: it still misses some process, or died",
                               s->verb, s->job, f.run_holder, s->timeout_seconds);
        }
    }
    status = uform__mesh_read_roster(s, text, roster);
    uform__mesh_step(s, mine->index, "taken");
    /* The acknowledgement: index 0 waits for took.<i>. A verdict keeps its own message even if
     * this fails (index 0 may have ended the run and removed facts.<i> meanwhile). */
    bool acknowledged = renameat(s->job_fd, f.facts, s->job_fd, f.took) == 0;
    int error = errno;
    if (acknowledged) {
        f.owned = f.took;
    } else if (status == UFORM_STATUS_OK) {
        /* index 0 will not count this process: neither may it */
        status = run_is_over(&f) ? ended_without_us(&f, true)
                                 : uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot rename %s to %s",
                                                     s->verb, f.facts, f.took);
    }
    /* Index 0 removes took.<i> itself once it has seen it. One taken at index 0's last moment
     * may find it gone already: then the last one out removes the directory. */
    if (!acknowledged || run_is_over(&f)) leave(&f);
    return status;
}
