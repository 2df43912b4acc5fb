/* The rendezvous's records (mesh_session.h): every file is `key=value` lines behind a first line
 * naming its kind and format version ("uform-mesh-facts 1", "uform-mesh-run 1",
 * "uform-mesh-roster 1"), small enough to be written and read whole. */
#include <stddef.h>
#include <stdio.h>
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
             "uform-mesh-%s 1\nnonce=%s\nindex=%llu\ncount=%llu\ngpus=%llu\ngpu_class=%llu\nmultimem=%llu\n"
             "multicast=%d\nnccl=%llu\nhost=%s\npid=%llu\n",
             header, nonce, (unsigned long long)f->index, (unsigned long long)f->count, (unsigned long long)f->gpus,
             (unsigned long long)f->gpu_class, (unsigned long long)f->multimem, f->multicast ? 1 : 0,
             (unsigned long long)f->nccl, f->host, (unsigned long long)f->pid);
}

bool uform__mesh_parse_facts(const char *text, const char *header, char *nonce, uform__mesh_facts_t *f) {
    uint64_t multicast = 0;
    char expected[32];
    snprintf(expected, sizeof expected, "uform-mesh-%s 1\n", header);
    memset(f, 0, sizeof *f);
    return !strncmp(text, expected, strlen(expected)) && uform__mesh_field(text, "nonce", nonce, UFORM_MESH_NONCE_HEX + 1) &&
           uform__mesh_field_number(text, "index", &f->index) && uform__mesh_field_number(text, "count", &f->count) &&
           uform__mesh_field_number(text, "gpus", &f->gpus) &&
           uform__mesh_field_number(text, "gpu_class", &f->gpu_class) &&
           uform__mesh_field_number(text, "multimem", &f->multimem) &&
           uform__mesh_field_number(text, "multicast", &multicast) && uform__mesh_field_number(text, "nccl", &f->nccl) &&
           uform__mesh_field(text, "host", f->host, sizeof f->host) && uform__mesh_field_number(text, "pid", &f->pid) &&
           ((f->multicast = multicast != 0), true);
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


uform_status_t uform__mesh_write_roster(const uform__mesh_session_t *s, uform_status_t status, const char *message,
                                        const uform__mesh_roster_t *roster) {
    char text[UFORM_MESH_FILE_MAX], id[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1] = "none", line[1024];
    if (roster->has_nccl_id) hex_encode(roster->nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES, id);
    snprintf(line, sizeof line, "%s", message ? message : "");
    one_line(line);
    snprintf(text, sizeof text,
             "uform-mesh-roster 1\nnonce=%s\nstatus=%d\nmessage=%s\ncount=%llu\ngpus=%llu\ngpu_class=%llu\n"
             "multimem=%llu\nmulticast=%d\nnccl=%s\n",
             s->nonce, (int)status, line, (unsigned long long)roster->count, (unsigned long long)roster->gpus,
             (unsigned long long)roster->gpu_class, (unsigned long long)roster->multimem, roster->all_multicast ? 1 : 0,
             id);
    bool taken = false;
    char holder[UFORM_MESH_FILE_MAX];
    uform_status_t written = uform__mesh_write_new(s->job_fd, "roster", text, &taken, holder, s->verb);
    if (written == UFORM_STATUS_OK && taken)
        return uform__fail(UFORM_STATUS_IO_ERROR, "%s: %s/%s/roster appeared under index 0", s->verb, s->directory,
                           s->job);
    return written;
}

uform_status_t uform__mesh_read_roster(const uform__mesh_session_t *s, const char *text, uform__mesh_roster_t *roster) {
    char nonce[UFORM_MESH_NONCE_HEX + 1] = "", message[1024] = "", id[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1] = "";
    uint64_t status = 0, multicast = 0;
    memset(roster, 0, sizeof *roster);
    bool ok = !strncmp(text, "uform-mesh-roster 1\n", 20) && uform__mesh_field(text, "nonce", nonce, sizeof nonce) &&
              uform__mesh_field_number(text, "status", &status) &&
              uform__mesh_field(text, "message", message, sizeof message) &&
              uform__mesh_field_number(text, "count", &roster->count) &&
              uform__mesh_field_number(text, "gpus", &roster->gpus) &&
              uform__mesh_field_number(text, "gpu_class", &roster->gpu_class) &&
              uform__mesh_field_number(text, "multimem", &roster->multimem) &&
              uform__mesh_field_number(text, "multicast", &multicast) && uform__mesh_field(text, "nccl", id, sizeof id);
    if (!ok) return uform__fail(UFORM_STATUS_IO_ERROR, "%s: %s/%s/roster is malformed", s->verb, s->directory, s->job);
    if (strcmp(nonce, s->nonce))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: %s/%s/roster belongs to another run (leftovers: use a new job name)", s->verb,
                           s->directory, s->job);
    if (status != UFORM_STATUS_OK) return uform__fail((uform_status_t)status, "%s (from index 0)", message);
    roster->all_multicast = multicast != 0;
    roster->has_nccl_id = strcmp(id, "none") && hex_decode(id, roster->nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES);
    return UFORM_STATUS_OK;
}

