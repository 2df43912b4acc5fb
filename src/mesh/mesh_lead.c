/* Index 0's side of the rendezvous (mesh_rendezvous.h): make the job directory, publish the run
 * file, gather every process's facts, judge them, publish the roster, wait for every process to
 * acknowledge it, propose the outcome, wait for every process to read it, clean up. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/memory.h"
#include "mesh/mesh_session.h"
#include "platform/platform.h"

/* What index 0 knows of each index while it runs. */
typedef struct lead_t {
    uform__mesh_session_t *s;
    const uform__mesh_facts_t *mine;
    uint64_t count;
    bool *seen;         /* its facts were read */
    bool *acknowledged; /* its facts were renamed took.<i> */
    bool *departed;     /* neither facts.<i> nor took.<i> is left: it read the outcome and left */
} lead_t;

/* Whether the outcome exists (a process decided the run ahead of index 0). */
static bool decided(const lead_t *l) { return uform__mesh_outcome_exists(l->s); }

/* A job directory that exists already: never joined (an earlier run's leftovers, or a second
 * index 0). Names whoever its run file says made it. */
static uform_status_t refuse_existing(const uform__mesh_session_t *s) {
    int fd = -1;
    bool existed = false;
    char text[UFORM_MESH_FILE_MAX] = "";
    if (uform__mesh_open_job(s->directory, s->job, false, &existed, &fd, NULL, s->verb) == UFORM_STATUS_OK && fd >= 0) {
        if (uform__mesh_read(fd, "run", text, s->verb) != UFORM_STATUS_OK) text[0] = 0;
        close(fd);
    }
    return uform__mesh_refuse_existing(s, text);
}

/* Gathers facts.1 .. facts.<count-1>: each round opens the paths still missing, one read per
 * process in all. Stops at the first refusal (a disagreement, another run's file), at the
 * deadline, or when a process has decided the outcome (*early). */
static uform_status_t gather(lead_t *l, uform__mesh_roster_t *roster, bool *early, char *message, size_t capacity) {
    uform__mesh_session_t *s = l->s;
    uint64_t count = l->count, missing = count - 1, step = 0;
    char text[UFORM_MESH_FILE_MAX], where[UFORM_MESH_PATH_MAX];
    while (missing) {
        for (uint64_t i = 1; i < count; i++) {
            if (l->seen[i]) continue;
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
                unsigned version = 0;
                uform__mesh_path(s, name, where, sizeof where);
                if (sscanf(text, "uform-mesh-facts %u\n", &version) == 1 && version != UFORM_MESH_FORMAT) {
                    snprintf(message, capacity,
                             "%s: facts format version %u, this process reads version %d (run one uform version "
                             "everywhere): %s",
                             s->verb, version, UFORM_MESH_FORMAT, where);
                    return UFORM_STATUS_MISMATCH;
                }
                snprintf(message, capacity, "%s: facts malformed: %s", s->verb, where);
                return UFORM_STATUS_IO_ERROR;
            }
            if (strcmp(nonce, s->nonce)) {
                snprintf(message, capacity, "%s: another run's process joined %s: index %llu (host %s, pid %llu)",
                         s->verb, s->job, (unsigned long long)i, theirs.host, (unsigned long long)theirs.pid);
                return UFORM_STATUS_INVALID_ARGUMENT;
            }
            l->seen[i] = true;
            missing--;
            uform_status_t agree = uform__mesh_compare(s, l->mine, &theirs, message, capacity);
            if (agree != UFORM_STATUS_OK) return agree;
            roster->all_multicast &= theirs.multicast;
        }
        if (missing && decided(l)) {
            *early = true;
            return UFORM_STATUS_OK;
        }
        if (missing) {
            uform_status_t waited = uform__mesh_wait(s, s->deadline_ns, &step);
            if (waited == UFORM_STATUS_INTERRUPTED) {
                snprintf(message, capacity, "%s", uform_last_error());
                return waited;
            }
            if (waited != UFORM_STATUS_OK) {
                char who[256];
                uform__mesh_list_missing(l->seen, count, who, sizeof who);
                snprintf(message, capacity, "%s: %s: index %s never arrived within %g s", s->verb, s->job, who,
                         s->timeout_seconds);
                return UFORM_STATUS_TIMEOUT;
            }
        }
    }
    return UFORM_STATUS_OK;
}

/* Waits for every process to acknowledge the roster (its facts renamed took.<i>), until this
 * process's deadline or a grace from now, whichever is later (the roster may have come at the
 * deadline), or until a process decides the outcome. Answers in `silent` those that never
 * acknowledged ("" if none). */
static uform_status_t await_acknowledgements(lead_t *l, char *silent, size_t capacity) {
    uform__mesh_session_t *s = l->s;
    uint64_t deadline = uform__now_ns() + (uint64_t)(uform__mesh_grace_seconds(s->timeout_seconds) * 1e9);
    if (deadline < s->deadline_ns) deadline = s->deadline_ns;
    uint64_t step = 0;
    silent[0] = 0;
    for (bool last_look = false;;) {
        uint64_t missing = 0;
        for (uint64_t i = 1; i < l->count; i++) {
            if (l->acknowledged[i]) continue;
            char name[32];
            uform__mesh_took_name(i, name, sizeof name);
            l->acknowledged[i] = uform__mesh_probe(s->job_fd, name) == 1;
            missing += !l->acknowledged[i];
        }
        if (!missing || last_look || decided(l)) break;
        uform_status_t waited = uform__mesh_wait(s, deadline, &step);
        if (waited == UFORM_STATUS_INTERRUPTED) return waited;
        last_look = waited != UFORM_STATUS_OK; /* one more look once the time is up */
    }
    uform__mesh_list_missing(l->acknowledged, l->count, silent, capacity);
    return UFORM_STATUS_OK;
}

/* Index i's file (facts.<i> or took.<i>), into `name`; false when it has neither (it left). */
static bool holds_file(const lead_t *l, uint64_t i, char *name, size_t capacity) {
    uform__mesh_took_name(i, name, capacity);
    if (uform__mesh_probe(l->s->job_fd, name) != 0) return true; /* present, or unknown: ask later */
    uform__mesh_facts_name(i, name, capacity);
    return uform__mesh_probe(l->s->job_fd, name) != 0;
}

/* After the outcome: waits, for a grace at most, until every process that wrote a file has read
 * the outcome and removed it. After a refusal or a timeout, the whole grace unless all have
 * come and gone: processes still on their way may arrive and read the outcome too. */
static void await_departures(lead_t *l) {
    uform__mesh_session_t *s = l->s;
    uint64_t deadline = uform__now_ns() + (uint64_t)(uform__mesh_grace_seconds(s->timeout_seconds) * 1e9);
    uint64_t step = 0;
    for (;;) {
        uint64_t pending = 0;
        for (uint64_t i = 1; i < l->count; i++) {
            if (l->departed[i]) continue;
            char name[32];
            bool present = holds_file(l, i, name, sizeof name);
            if (present) l->seen[i] = true;
            l->departed[i] = l->seen[i] && !present;
            pending += !l->departed[i];
        }
        if (!pending) return;
        if (uform__mesh_wait(s, deadline, &step) != UFORM_STATUS_OK) return; /* a cancel ends it too */
    }
}

/* Removes the job's files and directory, the run file first: a process that comes later finds it
 * gone and knows the run has ended. A file whose process has not read the outcome yet stays, with
 * the outcome, for it (it removes them, and the directory, once it has): only a process of this
 * host known to be gone loses its file. NULL `l->departed`: nobody wrote any file. */
static void clean_up(lead_t *l) {
    uform__mesh_session_t *s = l->s;
    uform__mesh_remove(s->job_fd, "run");
    bool kept = false;
    for (uint64_t i = 1; l->departed && i < l->count; i++) {
        if (l->departed[i]) continue;
        char name[32], text[UFORM_MESH_FILE_MAX];
        for (int which = 0; which < 2; which++) {
            if (which == 0)
                uform__mesh_took_name(i, name, sizeof name);
            else
                uform__mesh_facts_name(i, name, sizeof name);
            if (uform__mesh_read(s->job_fd, name, text, s->verb) != UFORM_STATUS_OK) continue;
            if (!uform__mesh_holder_gone(text, l->mine)) {
                kept = true;
                continue;
            }
            uform__mesh_remove(s->job_fd, name);
            uform__mesh_facts_name(i, name, sizeof name); /* and its claim, without hard links */
            uform__mesh_remove(s->job_fd, name);
        }
    }
    uform__fail(UFORM_STATUS_OK, "%s", ""); /* the reads above leave no error behind */
    if (kept) return;
    uform__mesh_remove(s->job_fd, "roster");
    uform__mesh_remove(s->job_fd, "outcome");
    uform__mesh_remove_temporaries(s->job_fd);
    uform__mesh_remove_job(s->directory, s->job, s->job_fd);
}

static void lead_free(lead_t *l) {
    uform__deallocate(l->seen);
    uform__deallocate(l->acknowledged);
    uform__deallocate(l->departed);
}

uform_status_t uform__mesh_lead(uform__mesh_session_t *s, const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                uform__mesh_roster_t *roster) {
    bool existed = false;
    unsigned owner = 0;
    uform_status_t status = uform__mesh_open_job(s->directory, s->job, true, &existed, &s->job_fd, &owner, s->verb);
    if (status != UFORM_STATUS_OK) return status;
    if (existed) return refuse_existing(s);

    lead_t l = {.s = s, .mine = mine, .count = mine->count};
    l.seen = uform__allocate_zeroed(l.count, sizeof *l.seen);
    l.acknowledged = uform__allocate_zeroed(l.count, sizeof *l.acknowledged);
    bool *departed = uform__allocate_zeroed(l.count, sizeof *departed);
    if (!l.seen || !l.acknowledged || !departed) {
        lead_free(&l);
        uform__deallocate(departed);
        clean_up(&l);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: %llu processes", s->verb, (unsigned long long)l.count);
    }

    /* The run file: index 0's facts and its timeout. A process that arrives later learns from the
     * file system's clock (the run file's age) how much longer index 0 waits: never from a
     * comparison of two hosts' clocks. */
    uform__mesh_make_nonce(s->nonce);
    char text[UFORM_MESH_FILE_MAX], holder[UFORM_MESH_FILE_MAX], where[UFORM_MESH_PATH_MAX];
    uform__mesh_format_facts(text, "run", s->nonce, mine);
    size_t length = strlen(text);
    /* And the job directory's owner: this process made it (mkdirat succeeded), so whoever the file
     * system says owns it (on NFS with root_squash or all_squash, nobody, not this euid) is the
     * owner a follower must find, or the directory is not this index 0's. */
    snprintf(text + length, sizeof text - length, "timeout_ms=%llu\nowner=%u\n",
             (unsigned long long)(s->timeout_seconds * 1e3), owner);
    bool taken = false;
    status = uform__mesh_write_new(s->job_fd, "run", text, &taken, holder, s->verb);
    if (status == UFORM_STATUS_OK && taken) {
        uform__mesh_path(s, "run", where, sizeof where);
        status = uform__fail(UFORM_STATUS_IO_ERROR, "%s: run file appeared under index 0: %s", s->verb, where);
    }
    if (status != UFORM_STATUS_OK) {
        lead_free(&l);
        uform__deallocate(departed);
        clean_up(&l);
        return status;
    }

    l.seen[0] = l.acknowledged[0] = departed[0] = true;
    roster->count = l.count;
    roster->gpus = mine->gpus;
    roster->gpu_class = mine->gpu_class;
    roster->multimem = mine->multimem;
    roster->all_multicast = mine->multicast;
    roster->has_nccl_id = nccl_id != NULL;
    if (nccl_id) memcpy(roster->nccl_id, nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES);

    char message[UFORM_MESH_MESSAGE_MAX + 1] = "", silent[256] = "";
    bool early = false;
    status = gather(&l, roster, &early, message, sizeof message);
    uform__mesh_step(s, 0, "gathered");
    if (status == UFORM_STATUS_OK && !early) {
        status = uform__mesh_write_roster(s, roster);
        if (status == UFORM_STATUS_OK) {
            uform__mesh_step(s, 0, "published");
            status = await_acknowledgements(&l, silent, sizeof silent);
        }
        if (status != UFORM_STATUS_OK)
            snprintf(message, sizeof message, "%s", uform_last_error());
        else if (silent[0])
            status = UFORM_STATUS_TIMEOUT,
            snprintf(message, sizeof message, "%s: %s: index %s never took the roster within %g s (died?)", s->verb,
                     s->job, silent, s->timeout_seconds);
    }
    /* The outcome every process answers: this one, or the one a process proposed first (a
     * cancelled index 0 answers that one too, as the others do). */
    uform__mesh_step(s, 0, "deciding");
    if (status == UFORM_STATUS_INTERRUPTED)
        snprintf(message, sizeof message, "%s: %s: index 0 (host %s, pid %llu) was interrupted while the run met",
                 s->verb, s->job, mine->host, (unsigned long long)mine->pid);
    status = uform__mesh_decide(s, 0, status, message, message, sizeof message);
    uform__mesh_step(s, 0, "decided");
    l.departed = departed;
    await_departures(&l);
    uform__mesh_step(s, 0, "clean-up");
    clean_up(&l);
    lead_free(&l);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", message);
    return UFORM_STATUS_OK;
}
