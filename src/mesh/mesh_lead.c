/* Index 0's side of the rendezvous (mesh_rendezvous.h): make the job directory, publish the run
 * file, gather every process's facts, judge them, publish the roster, wait for every process to
 * acknowledge it, clean up. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/memory.h"
#include "mesh/mesh_session.h"
#include "platform/platform.h"

/* Removes the job's files and directory (index 0, at the end). The run file goes first: a
 * process that acknowledges later, or arrives later, finds it gone and removes its own file and
 * the directory (mesh_follow.c), so whichever side unlinks last also removes the directory.
 * `acknowledged[i]` says which name index i's facts have now (took.<i> or facts.<i>); NULL: no
 * process wrote any. */
static void clean_up(const uform__mesh_session_t *s, uint64_t count, const bool *acknowledged) {
    uform__mesh_remove(s->job_fd, "run");
    for (uint64_t i = 1; acknowledged && i < count; i++) {
        char name[32];
        if (acknowledged[i]) {
            uform__mesh_took_name(i, name, sizeof name);
        } else {
            uform__mesh_facts_name(i, name, sizeof name); /* seen but silent, or a latecomer */
            uform__mesh_remove(s->job_fd, name);
            uform__mesh_took_name(i, name, sizeof name); /* one that acknowledged after the last look */
        }
        uform__mesh_remove(s->job_fd, name);
    }
    uform__mesh_remove(s->job_fd, "roster");
    uform__mesh_remove_job(s->directory, s->job, s->job_fd);
}

/* A job directory that exists already: never joined (an earlier run's leftovers, or a second
 * index 0). Names whoever its run file says made it. */
static uform_status_t refuse_existing(const uform__mesh_session_t *s) {
    int fd = -1;
    bool existed = false;
    char text[UFORM_MESH_FILE_MAX] = "", holder[300] = "nobody's run file";
    if (uform__mesh_open_job(s->directory, s->job, false, &existed, &fd, s->verb) == UFORM_STATUS_OK && fd >= 0) {
        if (uform__mesh_read(fd, "run", text, s->verb) == UFORM_STATUS_OK)
            uform__mesh_describe_holder(text, NULL, holder, sizeof holder);
        close(fd);
    }
    return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                       "%s: %s/%s exists already (run file: %s): another process claims index 0, or an earlier run "
                       "left it behind; a run needs a job name of its own",
                       s->verb, s->directory, s->job, holder);
}

/* Gathers facts.1 .. facts.<count-1>: each round opens the paths still missing, one read per
 * process in all. Stops at the first refusal (a disagreement, another run's file) or at the
 * deadline; `seen[i]` says whose facts were read. */
static uform_status_t gather(const uform__mesh_session_t *s, const uform__mesh_facts_t *mine, bool *seen,
                             uform__mesh_roster_t *roster, char *message, size_t capacity) {
    uint64_t count = mine->count, missing = count - 1, step = 0;
    char text[UFORM_MESH_FILE_MAX];
    while (missing) {
        for (uint64_t i = 1; i < count; i++) {
            if (seen[i]) continue;
            char name[32], nonce[UFORM_MESH_NONCE_HEX + 1];
            uform__mesh_facts_name(i, name, sizeof name);
            uform_status_t read = uform__mesh_read(s->job_fd, name, text, s->verb);
            if (read == UFORM_STATUS_NOT_FOUND) continue;
            uform__mesh_facts_t theirs;
            if (read != UFORM_STATUS_OK) {
                snprintf(message, capacity, "%s", uform_last_error());
                return read;
            }
            if (!uform__mesh_parse_facts(text, "facts", nonce, &theirs) || theirs.index != i) {
                snprintf(message, capacity, "%s: %s/%s/%s is malformed", s->verb, s->directory, s->job, name);
                return UFORM_STATUS_IO_ERROR;
            }
            if (strcmp(nonce, s->nonce)) {
                snprintf(message, capacity, "%s: index %llu (host %s, pid %llu) joined another run of %s", s->verb,
                         (unsigned long long)i, theirs.host, (unsigned long long)theirs.pid, s->job);
                return UFORM_STATUS_INVALID_ARGUMENT;
            }
            seen[i] = true;
            missing--;
            uform_status_t agree = uform__mesh_compare(s, mine, &theirs, message, capacity);
            if (agree != UFORM_STATUS_OK) return agree;
            roster->all_multicast &= theirs.multicast;
        }
        if (missing && !uform__mesh_backoff(s->deadline_ns, &step)) {
            char who[512];
            uform__mesh_list_missing(seen, count, who, sizeof who);
            snprintf(message, capacity, "%s: %s: index %s never arrived within %g s", s->verb, s->job, who,
                     s->timeout_seconds);
            return UFORM_STATUS_TIMEOUT;
        }
    }
    return UFORM_STATUS_OK;
}

/* Waits for every process to acknowledge the roster (its facts renamed took.<i>). After a
 * success, until this process's deadline or a grace from now, whichever is later (the roster
 * may have come at the deadline); after a refusal, a grace, in which processes still on their
 * way may arrive and take the verdict too; after a timeout, only those seen are waited for.
 * Answers in `silent` the processes seen that never acknowledged ("" if none). */
static void await_acknowledgements(const uform__mesh_session_t *s, uint64_t count, uform_status_t verdict,
                                   const bool *seen, bool *acknowledged, char *silent, size_t capacity) {
    uint64_t deadline = uform__now_ns() + (uint64_t)(uform__mesh_grace_seconds(s->timeout_seconds) * 1e9);
    if (verdict == UFORM_STATUS_OK && deadline < s->deadline_ns) deadline = s->deadline_ns;
    uint64_t step = 0;
    for (bool last_look = false;;) {
        uint64_t missing = 0;
        for (uint64_t i = 1; i < count; i++) {
            if (acknowledged[i] || (verdict == UFORM_STATUS_TIMEOUT && !seen[i])) continue;
            char name[32];
            uform__mesh_took_name(i, name, sizeof name);
            acknowledged[i] = uform__mesh_probe(s->job_fd, name) == 1;
            missing += !acknowledged[i];
        }
        if (!missing || last_look) break;
        last_look = !uform__mesh_backoff(deadline, &step); /* one more look once the time is up */
    }
    /* Only a process that was seen and never acknowledged is the run's error (it died?); one
     * still on its way simply missed the verdict. */
    bool *quiet_or_absent = uform__allocate_zeroed(count, sizeof *quiet_or_absent);
    if (!quiet_or_absent) {
        snprintf(silent, capacity, "some (out of memory to name them)");
        return;
    }
    for (uint64_t i = 0; i < count; i++) quiet_or_absent[i] = i == 0 || acknowledged[i] || !seen[i];
    uform__mesh_list_missing(quiet_or_absent, count, silent, capacity);
    uform__deallocate(quiet_or_absent);
}

uform_status_t uform__mesh_lead(uform__mesh_session_t *s, const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                uform__mesh_roster_t *roster) {
    bool existed = false;
    uform_status_t status = uform__mesh_open_job(s->directory, s->job, true, &existed, &s->job_fd, s->verb);
    if (status != UFORM_STATUS_OK) return status;
    if (existed) return refuse_existing(s);

    uint64_t count = mine->count;
    bool *seen = uform__allocate_zeroed(count, sizeof *seen);
    bool *acknowledged = uform__allocate_zeroed(count, sizeof *acknowledged);
    if (!seen || !acknowledged) {
        uform__deallocate(seen);
        uform__deallocate(acknowledged);
        clean_up(s, 0, NULL);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: %llu processes", s->verb, (unsigned long long)count);
    }

    /* The run file: index 0's facts, and when it gives up waiting, as wall-clock time and as a
     * timeout: processes start at different moments, and each waits for the roster until index
     * 0's deadline (plus grace) as well as its own. */
    uform__mesh_make_nonce(s->nonce);
    char text[UFORM_MESH_FILE_MAX], holder[UFORM_MESH_FILE_MAX];
    uform__mesh_format_facts(text, "run", s->nonce, mine);
    size_t length = strlen(text);
    snprintf(text + length, sizeof text - length, "deadline_ms=%llu\ntimeout_ms=%llu\n",
             (unsigned long long)(uform__mesh_wall_ms() + (uint64_t)(s->timeout_seconds * 1e3)),
             (unsigned long long)(s->timeout_seconds * 1e3));
    bool taken = false;
    status = uform__mesh_write_new(s->job_fd, "run", text, &taken, holder, s->verb);
    if (status == UFORM_STATUS_OK && taken)
        status = uform__fail(UFORM_STATUS_IO_ERROR, "%s: %s/%s/run appeared under index 0", s->verb, s->directory,
                             s->job);
    if (status != UFORM_STATUS_OK) {
        uform__deallocate(seen);
        uform__deallocate(acknowledged);
        clean_up(s, 0, NULL);
        return status;
    }

    seen[0] = acknowledged[0] = true;
    roster->count = count;
    roster->gpus = mine->gpus;
    roster->gpu_class = mine->gpu_class;
    roster->multimem = mine->multimem;
    roster->all_multicast = mine->multicast;
    roster->has_nccl_id = nccl_id != NULL;
    if (nccl_id) memcpy(roster->nccl_id, nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES);

    char message[1024] = "", silent[512] = "";
    status = gather(s, mine, seen, roster, message, sizeof message);
    uform_status_t published = uform__mesh_write_roster(s, status, message, roster);
    if (published == UFORM_STATUS_OK) {
        await_acknowledgements(s, count, status, seen, acknowledged, silent, sizeof silent);
    } else {
        /* Nobody will read a verdict: end the run at once (the others find the run file gone). */
        status = published;
        snprintf(message, sizeof message, "%s", uform_last_error());
    }
    uform__mesh_step(s, 0, "clean-up");
    clean_up(s, count, acknowledged);
    uform__deallocate(seen);
    uform__deallocate(acknowledged);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", message);
    if (silent[0])
        return uform__fail(UFORM_STATUS_TIMEOUT, "%s: %s: index %s never took the roster within %g s (died?)", s->verb,
                           s->job, silent, s->timeout_seconds);
    return UFORM_STATUS_OK;
}
