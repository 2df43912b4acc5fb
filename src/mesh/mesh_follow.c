/* Every other index's side of the rendezvous (mesh_rendezvous.h): find the run index 0 made,
 * publish this process's facts, take the roster, check it, acknowledge it (facts.<i> renamed
 * took.<i>), then answer the run's outcome. Whatever happens, this process removes what it wrote
 * once it has its answer, and the last one out of a run index 0 has left removes the rest. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "mesh/mesh_follow.h"
#include "platform/platform.h"

/* Whether the job directory, as this process first finds it (a look before any wait of its own),
 * holds a roster: a run that formed before this process called the rendezvous, so not its run.
 * Index 0 writes the roster only once every index's facts are in, this index's too: this is an
 * earlier run's directory (a crashed run under the same job name, as a launcher requeuing under
 * $SLURM_JOB_ID makes) or someone else holds this index. The new run's index 0 finds the
 * directory there too and refuses it (mkdirat's EEXIST), so this process answers index 0's
 * refusal word for word (uform__mesh_refuse_existing): every process of the new run answers the
 * same. One process's own order of events, not a clock. An outcome without a roster proves less
 * (a refusal by a process that started sooner, which stragglers answer too): it is noted for
 * outcome_is_leftover. The leftovers stay: removing them would let a process of the new run that
 * comes later find no directory and wait for an index 0 that never makes one. `f->run_text`
 * receives the run file ("" when there is none) for the message. */
static bool formed_before_arrival(follower_t *f) {
    uform__mesh_session_t *s = f->s;
    f->outcome_first = uform__mesh_outcome_exists(s);
    if (uform__mesh_probe(s->job_fd, "roster") != 1) return false;
    if (uform__mesh_read(s->job_fd, "run", f->run_text, s->verb) != UFORM_STATUS_OK) f->run_text[0] = 0;
    return true;
}

/* Whether the job directory's owner is the one its index 0 recorded in the run file: the
 * directory index 0 made (on NFS with root_squash or all_squash, nobody's rather than its euid's).
 * One whose owner is another is not that index 0's (another user's, planted under the job name):
 * nothing in it is trusted, and index 0 of this run, finding it there, refuses it. A run file
 * without the record (an index 0 of a uform before it) was written by a process that refused any
 * directory not its euid's: the owner must then be this process's euid, as before. The check
 * trusts no more than the file system's owners do: a user who can write both the directory and
 * its run file can make them agree. */
static bool owner_is_recorded(const follower_t *f, unsigned owner) {
    uint64_t recorded = 0;
    if (!uform__mesh_field_number(f->run_text, "owner", &recorded)) recorded = (unsigned)geteuid();
    return recorded == owner;
}

/* Opens the job directory and reads its run file, waiting for index 0 to make them. A directory
 * removed under this process (an earlier run of the same name ending) is opened again: a new
 * one of that name is this run's. An I/O error opening or reading them is asked again until the
 * deadline (on NFS it may pass): until it has the run file this process knows no run to tell.
 * The directory must be its index 0's (owner_is_recorded). */
static uform_status_t read_run(follower_t *f) {
    uform__mesh_session_t *s = f->s;
    uint64_t step = 0, foreign_until = 0;
    unsigned owner = 0;
    char where[UFORM_MESH_PATH_MAX], failure[UFORM_MESH_MESSAGE_MAX + 1] = "";
    for (bool first_look = true;; first_look = false) {
        uform_status_t status = UFORM_STATUS_NOT_FOUND;
        if (s->job_fd < 0) {
            bool existed = false;
            status = uform__mesh_open_job(s->directory, s->job, false, &existed, &s->job_fd, &owner, s->verb);
            if (status != UFORM_STATUS_OK && status != UFORM_STATUS_IO_ERROR) return status;
        }
        if (first_look && s->job_fd >= 0 && formed_before_arrival(f))
            return uform__mesh_refuse_existing(s, f->run_text);
        if (s->job_fd >= 0) {
            status = uform__mesh_read(s->job_fd, "run", f->run_text, s->verb);
            if (status == UFORM_STATUS_OK)
                return owner_is_recorded(f, owner) ? status : uform__mesh_refuse_existing(s, f->run_text);
            if (status == UFORM_STATUS_NOT_FOUND && owner != (unsigned)geteuid()) {
                /* Not this user's and no run file to say whose: index 0 writes its run file just
                 * after making the directory, so one still missing a grace later is not its. */
                uint64_t now = uform__now_ns();
                uint64_t grace_ns = (uint64_t)(uform__mesh_grace_seconds(s->timeout_seconds) * 1e9);
                if (!foreign_until) foreign_until = now + grace_ns;
                if (now >= foreign_until) return uform__mesh_refuse_existing(s, NULL);
            }
            if (status == UFORM_STATUS_NOT_FOUND && uform__mesh_job_removed(s->job_fd)) {
                close(s->job_fd);
                s->job_fd = -1;
                foreign_until = 0; /* a new directory of that name is judged afresh */
            }
        }
        if (status == UFORM_STATUS_IO_ERROR) snprintf(failure, sizeof failure, "%s", uform_last_error());
        uform_status_t waited = uform__mesh_wait(s, s->deadline_ns, &step);
        if (waited == UFORM_STATUS_INTERRUPTED) return waited;
        if (waited != UFORM_STATUS_OK) {
            if (failure[0])
                return uform__fail(UFORM_STATUS_IO_ERROR, "%s (asked again for %g s)", failure, s->timeout_seconds);
            uform__mesh_path(s, NULL, where, sizeof where);
            return s->job_fd < 0
                       ? uform__fail(UFORM_STATUS_TIMEOUT, "%s: %s: index 0 never arrived within %g s (no %s)", s->verb,
                                     s->job, s->timeout_seconds, where)
                       : uform__fail(UFORM_STATUS_TIMEOUT, "%s: %s: index 0 wrote no run file within %g s in %s",
                                     s->verb, s->job, s->timeout_seconds, where);
        }
    }
}

/* How long ago index 0 wrote its run file, by the file system's clock (on NFS the server's, the
 * one clock every host of a run shares): the run file's age when this process's facts were
 * written. False when either time cannot be read. */
static bool run_age_ns(const follower_t *f, int64_t *age_ns) {
    int64_t run_ns = 0, facts_ns = 0;
    if (!uform__mesh_mtime_ns(f->s->job_fd, "run", &run_ns) || !uform__mesh_mtime_ns(f->s->job_fd, f->facts, &facts_ns))
        return false;
    *age_ns = facts_ns > run_ns ? facts_ns - run_ns : 0;
    return true;
}

/* Whether the run file is an earlier run's leftovers: written longer before this process's
 * facts than index 0 can still be waiting (its timeout plus twice the grace). */
static bool run_is_stale(const follower_t *f) {
    uint64_t timeout_ms = 0;
    int64_t age_ns = 0;
    if (!uform__mesh_field_number(f->run_text, "timeout_ms", &timeout_ms) || !run_age_ns(f, &age_ns)) return false;
    double timeout = (double)timeout_ms / 1e3;
    return (double)age_ns / 1e9 > timeout + 2 * uform__mesh_grace_seconds(timeout);
}

/* An earlier run's job directory, found once this process's facts are in: it takes them back and
 * answers what the new run's index 0 answers. Only its own file: the rest stays, even where that
 * run's index 0 is provably dead, so that every process of the new run finds what index 0 found
 * and answers the same (formed_before_arrival). */
static uform_status_t refuse_leftovers(follower_t *f) {
    uform__mesh_remove(f->s->job_fd, f->facts);
    f->owned = NULL;
    return uform__mesh_refuse_existing(f->s, f->run_text);
}

/* The file system's clock now (on NFS the server's): the modification time of a probe file this
 * process creates in the job directory and removes at once (a temporary's name: a process killed
 * in between leaves what the last one out removes). False when it cannot be written. */
static bool file_system_now_ns(const follower_t *f, int64_t *ns) {
    char name[96];
    snprintf(name, sizeof name, ".probe.%llu.%ld.tmp", (unsigned long long)f->mine->index, (long)getpid());
    int fd = openat(f->s->job_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    close(fd);
    bool known = uform__mesh_mtime_ns(f->s->job_fd, name, ns);
    unlinkat(f->s->job_fd, name, 0);
    return known;
}

/* Whether an outcome that was there before this process first looked is an earlier run's: older,
 * by the file system's clock, than the grace index 0 gives stragglers after it (then it cleans
 * up). Two times of one clock, the file system's, never two hosts'. Within that grace it is this
 * run's verdict, which a straggler answers like every other process. Asked before this process
 * proposes anything: a proposal would answer that outcome (the first one stands). */
static bool outcome_is_leftover(const follower_t *f) {
    int64_t outcome_ns = 0, now_ns = 0;
    uint64_t timeout_ms = 0;
    if (!f->outcome_first) return false;
    if (!uform__mesh_mtime_ns(f->s->job_fd, "outcome", &outcome_ns) &&
        !uform__mesh_mtime_ns(f->s->job_fd, "outcome.claim", &outcome_ns))
        return false;
    if (!file_system_now_ns(f, &now_ns)) return false;
    double timeout = uform__mesh_field_number(f->run_text, "timeout_ms", &timeout_ms) ? (double)timeout_ms / 1e3
                                                                                      : f->s->timeout_seconds;
    return (double)(now_ns - outcome_ns) / 1e9 > uform__mesh_grace_seconds(timeout);
}

/* After this process's facts are in: an outcome already there is this run's (answered by the
 * caller; uform__mesh_follow asked outcome_is_leftover first); a roster of another run, or
 * written before these facts (by the file system's clock), is leftovers or a run that formed
 * without this index. A took.<i> is a process that has taken
 * the roster in this index's place (the facts.<i> it renamed is how these facts got in).
 * A roster that is not intact (damaged, truncated, another format's) names no run: its nonce
 * may be the damaged part. It may be this run's, written and damaged since these facts went in,
 * so it is left to the roster's own read after this, whose verdict (IO_ERROR or MISMATCH) this
 * process proposes like every other one; calling it leftovers here answered INVALID_ARGUMENT
 * alone (test_mesh_cuda_double_roster, its "checking" hold). */
static uform_status_t check_after_publishing(follower_t *f) {
    uform__mesh_session_t *s = f->s;
    char text[UFORM_MESH_FILE_MAX], nonce[UFORM_MESH_NONCE_HEX + 1] = "", who[300], where[UFORM_MESH_PATH_MAX];
    int64_t roster_ns = 0, facts_ns = 0;
    if (uform__mesh_read(s->job_fd, f->took, text, s->verb) == UFORM_STATUS_OK) {
        uform__mesh_describe_holder(text, s->nonce, who, sizeof who);
        uform__follow_leave(f);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %s: index %llu is already held by %s", s->verb, s->job,
                           (unsigned long long)f->mine->index, who);
    }
    if (uform__mesh_outcome_exists(s)) return UFORM_STATUS_OK;
    if (uform__mesh_read(s->job_fd, "roster", text, s->verb) != UFORM_STATUS_OK) return UFORM_STATUS_OK;
    uform__mesh_path(s, NULL, where, sizeof where);
    if (uform__mesh_roster_intact(text) &&
        (!uform__mesh_field(text, "nonce", nonce, sizeof nonce) || strcmp(nonce, s->nonce))) {
        uform__follow_leave(f);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: an earlier run's roster is in the job directory (leftovers; use a new job name): %s "
                           "(run file: %s)",
                           s->verb, where, f->run_holder);
    }
    if (uform__mesh_mtime_ns(s->job_fd, "roster", &roster_ns) && uform__mesh_mtime_ns(s->job_fd, f->facts, &facts_ns) &&
        roster_ns < facts_ns) {
        uform__follow_leave(f);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: the run formed before this process arrived (a roster older than its facts: an earlier "
                           "run's leftovers, or another process as index %llu; use a new job name): %s (run file: %s)",
                           s->verb, (unsigned long long)f->mine->index, where, f->run_holder);
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
    if (status != UFORM_STATUS_OK) {
        if (uform__follow_run_is_over(f)) return uform__follow_ended(f, false);
        /* A failure here is this process's alone (a full disk, a transient NFS error, no file
         * descriptor left): the run's verdict, so every process answers it. */
        return uform__follow_propose(f, status, "%s: %s: index %llu (host %s, pid %llu) cannot publish its facts: %s",
                                     s->verb, s->job, (unsigned long long)f->mine->index, f->mine->host,
                                     (unsigned long long)f->mine->pid, uform_last_error());
    }
    if (taken) {
        uform__mesh_describe_holder(holder, s->nonce, who, sizeof who);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %s: index %llu is already held by %s", s->verb, s->job,
                           (unsigned long long)f->mine->index, who);
    }
    f->owned = f->facts;
    if (run_is_stale(f)) return refuse_leftovers(f);
    uform__mesh_step(s, f->mine->index, "checking"); /* a test holds it here while index 0 goes on */
    return check_after_publishing(f);
}

/* A run file this process cannot use (another format version, or malformed): the run's verdict,
 * proposed under the run's nonce where the file has one, so that index 0 and every other process
 * answer it too (the outcome's layout is the same in every version that has one). A file without
 * a nonce names no run to tell: this process answers alone. */
static uform_status_t refuse_run(follower_t *f) {
    uform__mesh_session_t *s = f->s;
    char where[UFORM_MESH_PATH_MAX], message[UFORM_MESH_MESSAGE_MAX + 1];
    uform__mesh_path(s, "run", where, sizeof where);
    unsigned version = 0;
    uform_status_t status = UFORM_STATUS_IO_ERROR;
    if (sscanf(f->run_text, "uform-mesh-run %u\n", &version) == 1 && version != UFORM_MESH_FORMAT) {
        status = UFORM_STATUS_MISMATCH;
        snprintf(message, sizeof message,
                 "%s: run file format version %u, index %llu (host %s) reads version %d (run one uform version "
                 "everywhere): %s",
                 s->verb, version, (unsigned long long)f->mine->index, f->mine->host, UFORM_MESH_FORMAT, where);
    } else {
        snprintf(message, sizeof message, "%s: run file malformed (index %llu, host %s read it): %s", s->verb,
                 (unsigned long long)f->mine->index, f->mine->host, where);
    }
    uform__mesh_describe_holder(f->run_text, NULL, f->run_holder, sizeof f->run_holder);
    if (!uform__mesh_field(f->run_text, "nonce", s->nonce, sizeof s->nonce) || strlen(s->nonce) != UFORM_MESH_NONCE_HEX)
        return uform__fail(status, "%s", message);
    return uform__follow_propose(f, status, "%s", message);
}

/* Until when this process waits for the roster: its own deadline, or index 0's if that is later
 * (index 0 started earlier and waits longer), plus the grace. Index 0's deadline comes from the
 * file system's clock alone: its timeout less the run file's age. */
static uint64_t roster_deadline(const follower_t *f) {
    uint64_t grace_ns = (uint64_t)(uform__mesh_grace_seconds(f->s->timeout_seconds) * 1e9);
    uint64_t deadline = f->s->deadline_ns + grace_ns, timeout_ms = 0;
    int64_t age_ns = 0;
    if (uform__mesh_field_number(f->run_text, "timeout_ms", &timeout_ms) && run_age_ns(f, &age_ns) &&
        (int64_t)(timeout_ms * 1000000u) > age_ns) {
        uint64_t lead = uform__now_ns() + (timeout_ms * 1000000u - (uint64_t)age_ns) + grace_ns;
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
    if (outcome_is_leftover(&f)) return uform__mesh_refuse_existing(s, f.run_text); /* it wrote nothing */
    uform__mesh_facts_t run;
    if (!uform__mesh_parse_facts(f.run_text, "run", s->nonce, &run)) return refuse_run(&f);
    uform__mesh_describe_holder(f.run_text, NULL, f.run_holder, sizeof f.run_holder);
    if (mine->index >= run.count)
        return uform__follow_propose(
            &f, UFORM_STATUS_MISMATCH,
            "%s: %s disagree on the processes in the run (host_domain_count): index 0 (host %s) says %llu, "
            "index %llu (host %s) says %llu",
            s->verb, s->job, run.host, (unsigned long long)run.count, (unsigned long long)mine->index, mine->host,
            (unsigned long long)mine->count);

    uform__mesh_step(s, mine->index, "facts");
    if (uform__follow_run_is_over(&f)) return uform__follow_ended(&f, false);
    status = publish_facts(&f);
    if (status != UFORM_STATUS_OK) return status;
    uform__mesh_step(s, mine->index, "published");

    /* The roster, or an outcome decided before it (a refusal, a timeout, a process's verdict). */
    char text[UFORM_MESH_FILE_MAX];
    uint64_t deadline = roster_deadline(&f), step = 0;
    for (;;) {
        if (uform__mesh_outcome_exists(s)) return uform__follow_answer(&f);
        status = uform__mesh_read(s->job_fd, "roster", text, s->verb);
        if (status == UFORM_STATUS_OK) break;
        if (status == UFORM_STATUS_NOT_FOUND && uform__follow_run_is_over(&f)) return uform__follow_ended(&f, true);
        if (status != UFORM_STATUS_NOT_FOUND) return uform__follow_propose(&f, status, "%s", uform_last_error());
        uform_status_t waited = uform__mesh_wait(s, deadline, &step);
        if (waited == UFORM_STATUS_INTERRUPTED) return uform__follow_interrupted(&f);
        if (waited != UFORM_STATUS_OK)
            return uform__follow_propose(
                &f, UFORM_STATUS_TIMEOUT,
                "%s: %s: no roster from index 0 (%s) within %g s: it still misses some process, or died", s->verb,
                s->job, f.run_holder, s->timeout_seconds);
    }
    /* Acknowledge only what was read and checked: a roster this process cannot use is its
     * verdict, and the run's. */
    status = uform__mesh_read_roster(s, text, roster);
    if (status != UFORM_STATUS_OK) return uform__follow_propose(&f, status, "%s", uform_last_error());
    f.has_roster = true;
    uform__mesh_step(s, mine->index, "taken");
    if (renameat(s->job_fd, f.facts, s->job_fd, f.took) != 0) {
        int error = errno;
        if (uform__follow_run_is_over(&f)) return uform__follow_ended(&f, true);
        return uform__follow_propose(&f, UFORM_STATUS_IO_ERROR,
                                     "%s: index %llu cannot acknowledge the roster (rename %s to %s): %s", s->verb,
                                     (unsigned long long)mine->index, f.facts, f.took, strerror(error));
    }
    f.owned = f.took;
    uform__mesh_step(s, mine->index, "acknowledged");

    /* The outcome: index 0 proposes it once every process has acknowledged, or at the end of
     * its wait for them, at the latest a grace after this process's roster deadline. */
    uint64_t grace_ns = (uint64_t)(uform__mesh_grace_seconds(s->timeout_seconds) * 1e9), now = uform__now_ns();
    deadline = (deadline > now + grace_ns ? deadline : now + grace_ns) + grace_ns;
    step = 0;
    for (;;) {
        if (uform__mesh_outcome_exists(s)) return uform__follow_answer(&f);
        if (uform__follow_run_is_over(&f)) return uform__follow_ended(&f, true);
        uform_status_t waited = uform__mesh_wait(s, deadline, &step);
        if (waited == UFORM_STATUS_INTERRUPTED) return uform__follow_interrupted(&f);
        if (waited != UFORM_STATUS_OK)
            return uform__follow_propose(
                &f, UFORM_STATUS_TIMEOUT,
                "%s: %s: no outcome from index 0 (%s) within %g s of the roster: it died or stalled", s->verb, s->job,
                f.run_holder, s->timeout_seconds);
    }
}
