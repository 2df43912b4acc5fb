/* The rendezvous's records (mesh_session.h): every file is `key=value` lines behind a first line
 * naming its kind and format version ("uform-mesh-facts 3", "uform-mesh-run 3",
 * "uform-mesh-roster 3", "uform-mesh-outcome 2"), small enough to be written and read whole. The
 * roster and the outcome, which every process acts on, end in a checksum of what precedes it. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/error.h"
#include "mesh/mesh_session.h"
#include "platform/platform.h"

void uform__mesh_make_nonce(char *nonce) {
    uint8_t bytes[UFORM_MESH_NONCE_HEX / 2];
#if defined(__EMSCRIPTEN__)
    if (getentropy(bytes, sizeof bytes) != 0) { /* no getrandom in Emscripten's libc */
#else
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) {
#endif
        uint64_t mixed = uform__now_ns() ^ ((uint64_t)getpid() << 32);
        for (size_t i = 0; i < sizeof bytes; i++, mixed = mixed * 6364136223846793005ull + 1442695040888963407ull)
            bytes[i] = (uint8_t)(mixed >> 56);
    }
    for (size_t i = 0; i < sizeof bytes; i++) snprintf(nonce + 2 * i, 3, "%02x", bytes[i]);
}

static void hex_encode(const uint8_t *bytes, size_t count, char *out) {
    for (size_t i = 0; i < count; i++) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

static bool hex_decode(const char *text, uint8_t *bytes, size_t count) {
    if (strlen(text) != 2 * count) return false;
    for (size_t i = 0; i < count; i++) {
        unsigned value;
        if (sscanf(text + 2 * i, "%2x", &value) != 1) return false;
        bytes[i] = (uint8_t)value;
    }
    return true;
}

/* A message as one line: the roster carries it to every process. */
static void one_line(char *text) {
    for (; *text; text++)
        if (*text == '\n' || *text == '\r') *text = ' ';
}

/* ---- facts ---- */

/* The facts' lines under `header`: "facts" for a process's own file, "run" for index 0's run
 * file (the same lines: index 0's facts, read by everyone). */
void uform__mesh_format_facts(char *text, const char *header, const char *nonce, const uform__mesh_facts_t *f) {
    snprintf(text, UFORM_MESH_FILE_MAX,
             "uform-mesh-%s %d\nnonce=%s\nindex=%llu\ncount=%llu\ngpus=%llu\ngpu_class=%llu\nmultimem=%llu\n"
             "multicast=%d\nnccl=%llu\nhost=%s\npid=%llu\nboot=%s\npidns=%s\n",
             header, UFORM_MESH_FORMAT, nonce, (unsigned long long)f->index, (unsigned long long)f->count, (unsigned long long)f->gpus,
             (unsigned long long)f->gpu_class, (unsigned long long)f->multimem, f->multicast ? 1 : 0,
             (unsigned long long)f->nccl, f->host, (unsigned long long)f->pid, f->boot, f->pidns);
}

bool uform__mesh_parse_facts(const char *text, const char *header, char *nonce, uform__mesh_facts_t *f) {
    uint64_t multicast = 0;
    char expected[32];
    snprintf(expected, sizeof expected, "uform-mesh-%s %d\n", header, UFORM_MESH_FORMAT);
    memset(f, 0, sizeof *f);
    return !strncmp(text, expected, strlen(expected)) && uform__mesh_field(text, "nonce", nonce, UFORM_MESH_NONCE_HEX + 1) &&
           uform__mesh_field_number(text, "index", &f->index) && uform__mesh_field_number(text, "count", &f->count) &&
           uform__mesh_field_number(text, "gpus", &f->gpus) &&
           uform__mesh_field_number(text, "gpu_class", &f->gpu_class) &&
           uform__mesh_field_number(text, "multimem", &f->multimem) &&
           uform__mesh_field_number(text, "multicast", &multicast) && uform__mesh_field_number(text, "nccl", &f->nccl) &&
           uform__mesh_field(text, "host", f->host, sizeof f->host) && uform__mesh_field_number(text, "pid", &f->pid) &&
           uform__mesh_field(text, "boot", f->boot, sizeof f->boot) &&
           uform__mesh_field(text, "pidns", f->pidns, sizeof f->pidns) && ((f->multicast = multicast != 0), true);
}

/* Who holds a file, in words, for a refusal. */
void uform__mesh_describe_holder(const char *text, const char *nonce, char *out, size_t capacity) {
    char holder_nonce[UFORM_MESH_NONCE_HEX + 1] = "", host[128] = "?";
    uint64_t pid = 0;
    uform__mesh_field(text, "nonce", holder_nonce, sizeof holder_nonce);
    uform__mesh_field(text, "host", host, sizeof host);
    uform__mesh_field_number(text, "pid", &pid);
    snprintf(out, capacity, "host %s, pid %llu%s", host, (unsigned long long)pid,
             nonce && strcmp(holder_nonce, nonce) ? ", of an earlier run (leftovers: use a new job name)" : "");
}

/* The first field on which `theirs` disagrees with `ours` (index 0's), as MISMATCH. */
uform_status_t uform__mesh_compare(const uform__mesh_session_t *s, const uform__mesh_facts_t *ours,
                                   const uform__mesh_facts_t *theirs, char *message, size_t capacity) {
    static const struct {
        const char *what;
        size_t offset;
    } fields[] = {
        {"processes in the run (host_domain_count)", offsetof(uform__mesh_facts_t, count)},
        {"GPUs per process", offsetof(uform__mesh_facts_t, gpus)},
        {"GPU class", offsetof(uform__mesh_facts_t, gpu_class)},
        {"NVLink multicast extent (gpus_per_multimem_domain)", offsetof(uform__mesh_facts_t, multimem)},
    };
    if (ours->nccl && !theirs->nccl) {
        /* Index 0 publishes an NCCL id: a process without NCCL would leave the run's collectives
         * hanging. (Without NCCL at index 0 nobody gets a data plane, whatever the others have.) */
        snprintf(message, capacity,
                 "%s: %s disagree on the data plane: index 0 (host %s) has NCCL, index %llu (host %s) has no "
                 "libnccl.so.2 (install it there, or name it with UFORM_NCCL_LIBRARY)",
                 s->verb, s->job, ours->host, (unsigned long long)theirs->index, theirs->host);
        return UFORM_STATUS_MISMATCH;
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        uint64_t a = *(const uint64_t *)((const char *)ours + fields[i].offset);
        uint64_t b = *(const uint64_t *)((const char *)theirs + fields[i].offset);
        if (a == b) continue;
        if (fields[i].offset == offsetof(uform__mesh_facts_t, gpu_class))
            snprintf(message, capacity, "%s: %s disagree on the %s: index 0 (host %s) has %s, index %llu (host %s) has %s",
                     s->verb, s->job, fields[i].what, ours->host, uform_gpu_class_name((uform_gpu_class_t)a),
                     (unsigned long long)theirs->index, theirs->host, uform_gpu_class_name((uform_gpu_class_t)b));
        else
            snprintf(message, capacity, "%s: %s disagree on the %s: index 0 (host %s) says %llu, index %llu (host %s) says %llu",
                     s->verb, s->job, fields[i].what, ours->host, (unsigned long long)a,
                     (unsigned long long)theirs->index, theirs->host, (unsigned long long)b);
        return UFORM_STATUS_MISMATCH;
    }
    return UFORM_STATUS_OK;
}

/* "3, 5, 9 and 12 more": the indices whose flag is still `missing`. */
void uform__mesh_list_missing(const bool *done, uint64_t count, char *out, size_t capacity) {
    size_t used = 0, listed = 0, left = 0;
    out[0] = 0;
    for (uint64_t i = 1; i < count; i++) {
        if (done[i]) continue;
        if (listed < 16 && used < capacity) {
            used += (size_t)snprintf(out + used, capacity - used, "%s%llu", listed ? ", " : "", (unsigned long long)i);
            listed++;
        } else {
            left++;
        }
    }
    if (left && used < capacity) snprintf(out + used, capacity - used, " and %zu more", left);
}


/* ---- sealing: a checksum line closes the file; a file without it is truncated or damaged ---- */

/* FNV-1a, 64 bits: no cryptography, a check that the bytes are the ones written. */
static uint64_t checksum(const char *text, size_t length) {
    uint64_t hash = 14695981039346656037ull;
    for (size_t i = 0; i < length; i++) hash = (hash ^ (uint8_t)text[i]) * 1099511628211ull;
    return hash;
}

static void seal(char *text, size_t capacity) {
    size_t length = strlen(text);
    snprintf(text + length, capacity - length, "checksum=%016llx\n", (unsigned long long)checksum(text, length));
}

/* True when `text` ends in the checksum of everything before its last line. */
static bool sealed(const char *text) {
    const char *line = NULL; /* the last "checksum=" line (a message is one line: none inside) */
    for (const char *p = strstr(text, "\nchecksum="); p; p = strstr(p + 1, "\nchecksum=")) line = p + 1;
    if (!line) return false;
    char expected[32];
    snprintf(expected, sizeof expected, "checksum=%016llx\n",
             (unsigned long long)checksum(text, (size_t)(line - text)));
    return strcmp(line, expected) == 0;
}

/* The version in a first line "uform-mesh-<kind> <version>": -1 when the line is not one. */
static long format_version(const char *text, const char *kind) {
    char prefix[32];
    int length = snprintf(prefix, sizeof prefix, "uform-mesh-%s ", kind);
    if (strncmp(text, prefix, (size_t)length)) return -1;
    char *end = NULL;
    long version = strtol(text + length, &end, 10);
    return end && *end == '\n' && end != text + length ? version : -1;
}

/* ---- paths in messages ---- */

void uform__mesh_path(const uform__mesh_session_t *s, const char *name, char *out, size_t capacity) {
    char whole[8192];
    snprintf(whole, sizeof whole, "%s/%s%s%s", s->directory, s->job, name ? "/" : "", name ? name : "");
    uform__mesh_short(whole, out, capacity);
}

/* ---- the roster ---- */

uform_status_t uform__mesh_write_roster(const uform__mesh_session_t *s, const uform__mesh_roster_t *roster) {
    char text[UFORM_MESH_FILE_MAX], id[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1] = "none", where[UFORM_MESH_PATH_MAX];
    if (roster->has_nccl_id) hex_encode(roster->nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES, id);
    snprintf(text, sizeof text,
             "uform-mesh-roster %d\nnonce=%s\ncount=%llu\ngpus=%llu\ngpu_class=%llu\nmultimem=%llu\nmulticast=%d\n"
             "nccl=%s\n",
             UFORM_MESH_FORMAT, s->nonce, (unsigned long long)roster->count, (unsigned long long)roster->gpus,
             (unsigned long long)roster->gpu_class, (unsigned long long)roster->multimem,
             roster->all_multicast ? 1 : 0, id);
    seal(text, sizeof text);
    bool taken = false;
    char holder[UFORM_MESH_FILE_MAX];
    uform_status_t written = uform__mesh_write_new(s->job_fd, "roster", text, &taken, holder, s->verb);
    if (written == UFORM_STATUS_OK && taken) {
        uform__mesh_path(s, "roster", where, sizeof where);
        return uform__fail(UFORM_STATUS_IO_ERROR, "%s: roster appeared under index 0: %s", s->verb, where);
    }
    return written;
}

bool uform__mesh_roster_intact(const char *text) {
    return format_version(text, "roster") == UFORM_MESH_FORMAT && sealed(text);
}

uform_status_t uform__mesh_read_roster(const uform__mesh_session_t *s, const char *text, uform__mesh_roster_t *roster) {
    char nonce[UFORM_MESH_NONCE_HEX + 1] = "", id[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1] = "", where[UFORM_MESH_PATH_MAX];
    uint64_t multicast = 0;
    memset(roster, 0, sizeof *roster);
    uform__mesh_path(s, "roster", where, sizeof where);
    long version = format_version(text, "roster");
    if (version >= 0 && version != UFORM_MESH_FORMAT)
        return uform__fail(UFORM_STATUS_MISMATCH,
                           "%s: roster format version %ld, this process reads version %d (another uform wrote "
                           "it: run one uform version everywhere): %s",
                           s->verb, version, UFORM_MESH_FORMAT, where);
    if (version < 0 || !sealed(text))
        return uform__fail(UFORM_STATUS_IO_ERROR, "%s: roster unreadable (truncated or damaged: its checksum fails): %s",
                           s->verb, where);
    bool ok = uform__mesh_field(text, "nonce", nonce, sizeof nonce) &&
              uform__mesh_field_number(text, "count", &roster->count) &&
              uform__mesh_field_number(text, "gpus", &roster->gpus) &&
              uform__mesh_field_number(text, "gpu_class", &roster->gpu_class) &&
              uform__mesh_field_number(text, "multimem", &roster->multimem) &&
              uform__mesh_field_number(text, "multicast", &multicast) && uform__mesh_field(text, "nccl", id, sizeof id);
    if (!ok) return uform__fail(UFORM_STATUS_IO_ERROR, "%s: roster malformed: %s", s->verb, where);
    if (strcmp(nonce, s->nonce))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: roster belongs to another run (leftovers: use a new job name): %s", s->verb, where);
    roster->all_multicast = multicast != 0;
    roster->has_nccl_id = strcmp(id, "none") && hex_decode(id, roster->nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES);
    return UFORM_STATUS_OK;
}

/* ---- the outcome ---- */

static int parse_outcome(const uform__mesh_session_t *s, const char *text, uform_status_t *status, char *message,
                         size_t capacity) {
    char where[UFORM_MESH_PATH_MAX], nonce[UFORM_MESH_NONCE_HEX + 1] = "", said[UFORM_MESH_MESSAGE_MAX + 1] = "";
    uint64_t value = 0;
    uform__mesh_path(s, "outcome", where, sizeof where);
    long version = format_version(text, "outcome");
    if (version != UFORM_MESH_OUTCOME_FORMAT || !sealed(text) ||
        !uform__mesh_field(text, "nonce", nonce, sizeof nonce) ||
        !uform__mesh_field_number(text, "status", &value) ||
        (!uform__mesh_field(text, "message", said, sizeof said) && !strstr(text, "\nmessage=\n"))) {
        snprintf(message, capacity, "%s: outcome unreadable (truncated, damaged or of another format): %s", s->verb,
                 where);
        return -1;
    }
    if (strcmp(nonce, s->nonce)) {
        snprintf(message, capacity, "%s: outcome belongs to another run (leftovers: use a new job name): %s", s->verb,
                 where);
        return -1;
    }
    *status = (uform_status_t)value;
    snprintf(message, capacity, "%s", said);
    return 1;
}

int uform__mesh_read_outcome(const uform__mesh_session_t *s, uform_status_t *status, char *message, size_t capacity) {
    char text[UFORM_MESH_FILE_MAX], said[UFORM_MESH_MESSAGE_MAX + 1];
    uform_status_t read = uform__mesh_read(s->job_fd, "outcome", text, s->verb);
    if (read == UFORM_STATUS_OK) return parse_outcome(s, text, status, message, capacity);
    if (read != UFORM_STATUS_NOT_FOUND) {
        snprintf(message, capacity, "%s", uform_last_error());
        return -1;
    }
    /* No outcome file: the claim's copy, where a writer without hard links claimed the name and
     * has not renamed its file onto it (it died there, or is about to). Only a whole, sealed copy
     * of this run counts; an empty or partial one is "not yet". */
    uform_status_t claimed = UFORM_STATUS_OK;
    if (uform__mesh_read(s->job_fd, "outcome.claim", text, s->verb) != UFORM_STATUS_OK ||
        parse_outcome(s, text, &claimed, said, sizeof said) != 1)
        return 0;
    *status = claimed;
    snprintf(message, capacity, "%s", said);
    return 1;
}

bool uform__mesh_outcome_exists(const uform__mesh_session_t *s) {
    if (uform__mesh_probe(s->job_fd, "outcome") == 1) return true;
    uform_status_t status = UFORM_STATUS_OK;
    char message[UFORM_MESH_MESSAGE_MAX + 1];
    return uform__mesh_probe(s->job_fd, "outcome.claim") == 1 &&
           uform__mesh_read_outcome(s, &status, message, sizeof message) == 1;
}

uform_status_t uform__mesh_decide(const uform__mesh_session_t *s, uint64_t by, uform_status_t status,
                                  const char *message, char *out, size_t capacity) {
    char text[UFORM_MESH_FILE_MAX], line[UFORM_MESH_MESSAGE_MAX + 1], holder[UFORM_MESH_FILE_MAX];
    snprintf(line, sizeof line, "%s", status == UFORM_STATUS_OK || !message ? "" : message);
    one_line(line);
    snprintf(text, sizeof text, "uform-mesh-outcome %d\nnonce=%s\nby=%llu\nstatus=%d\nmessage=%s\n",
             UFORM_MESH_OUTCOME_FORMAT, s->nonce, (unsigned long long)by, (int)status, line);
    seal(text, sizeof text);
    bool taken = false;
    uform_status_t written = uform__mesh_write_new(s->job_fd, "outcome", text, &taken, holder, s->verb);
    if (written == UFORM_STATUS_OK && !taken) {
        if (capacity) snprintf(out, capacity, "%s", line);
        return status;
    }
    /* Someone decided first (or the file cannot be written: then read whatever is there). A name
     * taken with nothing readable yet is a writer between its claim and its text (without hard
     * links): it gets a grace to finish before this process falls back on its own proposal. */
    uform_status_t decided = status;
    char said[UFORM_MESH_MESSAGE_MAX + 1] = "";
    int read = taken && parse_outcome(s, holder, &decided, said, sizeof said) == 1
                   ? 1
                   : uform__mesh_read_outcome(s, &decided, said, sizeof said);
    uint64_t deadline = uform__now_ns() + (uint64_t)(uform__mesh_grace_seconds(s->timeout_seconds) * 1e9), step = 0;
    while (taken && read == 0 && uform__mesh_wait(s, deadline, &step) == UFORM_STATUS_OK)
        read = uform__mesh_read_outcome(s, &decided, said, sizeof said);
    if (read == 1) {
        if (capacity) snprintf(out, capacity, "%s", said);
        return decided;
    }
    /* No outcome this process can read: a failure it proposed stays its answer (the others
     * fail too: none answers OK without reading an OK outcome), but OK does not: the others
     * cannot read it, and this process going on alone would split the run. */
    if (status == UFORM_STATUS_OK) {
        char reason[UFORM_MESH_MESSAGE_MAX + 1];
        snprintf(reason, sizeof reason, "%s", written != UFORM_STATUS_OK ? uform_last_error() : said);
        if (capacity)
            snprintf(out, capacity, "%s: %s: the run's outcome cannot be published or read, so no process answers OK (%s)",
                     s->verb, s->job, reason[0] ? reason : "no outcome");
        return written != UFORM_STATUS_OK ? written : UFORM_STATUS_IO_ERROR;
    }
    if (capacity) snprintf(out, capacity, "%s", line);
    return status;
}
