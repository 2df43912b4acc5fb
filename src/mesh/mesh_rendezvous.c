/* The rendezvous (mesh_rendezvous.h): index 0 gathers, everyone else reads one roster. Files are
 * `key=value` lines behind a first line naming their kind and format version. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/memory.h"
#include "mesh/mesh_files.h"
#include "mesh/mesh_rendezvous.h"
#include "platform/platform.h"

#define NONCE_HEX 32

void (*_Atomic uform__test_mesh_step)(const char *directory, const char *job, uint64_t index, const char *step);

typedef struct session_t {
    const char *directory, *job, *verb;
    double timeout_seconds;
    uint64_t deadline_ns;
    int job_fd;
    char nonce[NONCE_HEX + 1];
} session_t;

static void test_step(const session_t *s, uint64_t index, const char *step) {
    void (*hook)(const char *, const char *, uint64_t, const char *) =
        atomic_load_explicit(&uform__test_mesh_step, memory_order_relaxed);
    if (hook) hook(s->directory, s->job, index, step); /* static storage: NULL in production */
}

static void make_nonce(char *nonce) {
    uint8_t bytes[NONCE_HEX / 2];
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
static void format_facts(char *text, const char *header, const char *nonce, const uform__mesh_facts_t *f) {
    snprintf(text, UFORM_MESH_FILE_MAX,
             "uform-mesh-%s 1\nnonce=%s\nindex=%llu\ncount=%llu\ngpus=%llu\ngpu_class=%llu\nmultimem=%llu\n"
             "multicast=%d\nhost=%s\npid=%llu\n",
             header, nonce, (unsigned long long)f->index, (unsigned long long)f->count, (unsigned long long)f->gpus,
             (unsigned long long)f->gpu_class, (unsigned long long)f->multimem, f->multicast ? 1 : 0, f->host,
             (unsigned long long)f->pid);
}

static bool parse_facts(const char *text, const char *header, char *nonce, uform__mesh_facts_t *f) {
    uint64_t multicast = 0;
    char expected[32];
    snprintf(expected, sizeof expected, "uform-mesh-%s 1\n", header);
    memset(f, 0, sizeof *f);
    return !strncmp(text, expected, strlen(expected)) && uform__mesh_field(text, "nonce", nonce, NONCE_HEX + 1) &&
           uform__mesh_field_number(text, "index", &f->index) && uform__mesh_field_number(text, "count", &f->count) &&
           uform__mesh_field_number(text, "gpus", &f->gpus) &&
           uform__mesh_field_number(text, "gpu_class", &f->gpu_class) &&
           uform__mesh_field_number(text, "multimem", &f->multimem) &&
           uform__mesh_field_number(text, "multicast", &multicast) &&
           uform__mesh_field(text, "host", f->host, sizeof f->host) && uform__mesh_field_number(text, "pid", &f->pid) &&
           ((f->multicast = multicast != 0), true);
}

/* Who holds a file, in words, for a refusal. */
static void describe_holder(const char *text, const char *nonce, char *out, size_t capacity) {
    char holder_nonce[NONCE_HEX + 1] = "", host[128] = "?";
    uint64_t pid = 0;
    uform__mesh_field(text, "nonce", holder_nonce, sizeof holder_nonce);
    uform__mesh_field(text, "host", host, sizeof host);
    uform__mesh_field_number(text, "pid", &pid);
    snprintf(out, capacity, "host %s, pid %llu%s", host, (unsigned long long)pid,
             nonce && strcmp(holder_nonce, nonce) ? ", of an earlier run (leftovers: use a new job name)" : "");
}

/* The first field on which `theirs` disagrees with `ours` (index 0's), as MISMATCH. */
static uform_status_t compare(const session_t *s, const uform__mesh_facts_t *ours, const uform__mesh_facts_t *theirs,
                              char *message, size_t capacity) {
    static const struct {
        const char *what;
        size_t offset;
    } fields[] = {
        {"processes in the run (host_domain_count)", offsetof(uform__mesh_facts_t, count)},
        {"GPUs per process", offsetof(uform__mesh_facts_t, gpus)},
        {"GPU class", offsetof(uform__mesh_facts_t, gpu_class)},
        {"NVLink multicast extent (gpus_per_multimem_domain)", offsetof(uform__mesh_facts_t, multimem)},
    };
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
static void list_missing(const bool *done, uint64_t count, char *out, size_t capacity) {
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

/* ---- the roster ---- */

/* Milliseconds since the epoch: the one clock processes on different hosts share (roughly). */
static uint64_t wall_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
}

/* How much longer than its own timeout one side waits for the other's last step (a tenth of the
 * timeout, 1 to 10 s): index 0 publishes a timeout's roster at the deadline, and the others need
 * a moment to read it, so that every process can name who never arrived. */
static double grace_seconds(double timeout) { return timeout / 10 < 1 ? 1 : timeout / 10 > 10 ? 10 : timeout / 10; }


static void write_roster(const session_t *s, uform_status_t status, const char *message,
                         const uform__mesh_roster_t *roster) {
    char text[UFORM_MESH_FILE_MAX], id[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1] = "none", line[1024];
    if (roster->has_nccl_id) hex_encode(roster->nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES, id);
    snprintf(line, sizeof line, "%s", message ? message : "");
    one_line(line);
    snprintf(text, sizeof text,
             "uform-mesh-roster 1\nnonce=%s\nstatus=%d\nmessage=%s\nwritten_ms=%llu\ncount=%llu\ngpus=%llu\n"
             "gpu_class=%llu\nmultimem=%llu\nmulticast=%d\nnccl=%s\n",
             s->nonce, (int)status, line, (unsigned long long)wall_ms(), (unsigned long long)roster->count, (unsigned long long)roster->gpus,
             (unsigned long long)roster->gpu_class, (unsigned long long)roster->multimem, roster->all_multicast ? 1 : 0,
             id);
    bool taken = false;
    char holder[UFORM_MESH_FILE_MAX];
    uform__mesh_write_new(s->job_fd, "roster", text, &taken, holder, s->verb); /* peers time out if it fails */
}

static uform_status_t read_roster(const session_t *s, const char *text, uform__mesh_roster_t *roster) {
    char nonce[NONCE_HEX + 1] = "", message[1024] = "", id[2 * UFORM_NCCL_UNIQUE_ID_BYTES + 1] = "";
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

/* ---- index 0 ---- */

static void facts_name(uint64_t index, char *name, size_t capacity) {
    snprintf(name, capacity, "facts.%llu", (unsigned long long)index);
}

static void took_name(uint64_t index, char *name, size_t capacity) {
    snprintf(name, capacity, "took.%llu", (unsigned long long)index);
}

/* Removes the job's files and directory once nobody needs them (index 0, at the end), with the
 * took.<i> of indices 1 to `took` - 1. The run file goes first: a process that renames its
 * facts later sees it gone and removes its own (mesh_leave_ended_run), so whichever of the two
 * unlinks last also removes the directory. */
static void clean_up(const session_t *s, uint64_t took) {
    uform__mesh_remove(s->job_fd, "run");
    for (uint64_t i = 1; i < took; i++) {
        char name[32];
        took_name(i, name, sizeof name);
        uform__mesh_remove(s->job_fd, name);
    }
    uform__mesh_remove(s->job_fd, "roster");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->directory, s->job);
    rmdir(path); /* fails, harmlessly, if a stray file is left */
}

static uform_status_t lead(session_t *s, const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                           uform__mesh_roster_t *roster) {
    bool existed = false;
    uform_status_t status = uform__mesh_open_job(s->directory, s->job, true, &existed, &s->job_fd, s->verb);
    if (status != UFORM_STATUS_OK) return status;
    if (existed) {
        /* Never join what is there: an earlier run's leftovers, or a second index 0. */
        int fd = -1;
        char text[UFORM_MESH_FILE_MAX] = "", holder[300] = "nobody's run file";
        if (uform__mesh_open_job(s->directory, s->job, false, &existed, &fd, s->verb) == UFORM_STATUS_OK) {
            if (uform__mesh_read(fd, "run", text, s->verb) == UFORM_STATUS_OK)
                describe_holder(text, NULL, holder, sizeof holder);
            close(fd);
        }
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: %s/%s exists already (run file: %s): another process claims index 0, or an earlier "
                           "run left it behind; a run needs a job name of its own",
                           s->verb, s->directory, s->job, holder);
    }
    make_nonce(s->nonce);
    char text[UFORM_MESH_FILE_MAX], holder[UFORM_MESH_FILE_MAX];
    format_facts(text, "run", s->nonce, mine);
    /* When index 0 gives up waiting, as wall-clock time: processes start at different moments,
     * and each waits for the roster until index 0's deadline (plus grace) as well as its own. */
    size_t length = strlen(text);
    snprintf(text + length, sizeof text - length, "deadline_ms=%llu\n",
             (unsigned long long)(wall_ms() + (uint64_t)(s->timeout_seconds * 1e3)));
    bool taken = false;
    status = uform__mesh_write_new(s->job_fd, "run", text, &taken, holder, s->verb);
    if (status != UFORM_STATUS_OK || taken) {
        clean_up(s, 0);
        return status != UFORM_STATUS_OK ? status
                                         : uform__fail(UFORM_STATUS_IO_ERROR, "%s: %s/%s/run appeared under us",
                                                       s->verb, s->directory, s->job);
    }

    uint64_t count = mine->count;
    bool *seen = uform__allocate_zeroed(count, sizeof *seen);
    if (!seen) {
        clean_up(s, 0);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: %llu processes", s->verb, (unsigned long long)count);
    }
    seen[0] = true;
    roster->count = count;
    roster->gpus = mine->gpus;
    roster->gpu_class = mine->gpu_class;
    roster->multimem = mine->multimem;
    roster->all_multicast = mine->multicast;
    roster->has_nccl_id = nccl_id != NULL;
    if (nccl_id) memcpy(roster->nccl_id, nccl_id, UFORM_NCCL_UNIQUE_ID_BYTES);

    /* Gather: each round opens the paths still missing; one read per process in all. */
    char message[1024] = "";
    uint64_t missing = count - 1, step = 0;
    status = UFORM_STATUS_OK;
    while (missing && status == UFORM_STATUS_OK) {
        for (uint64_t i = 1; i < count && status == UFORM_STATUS_OK; i++) {
            if (seen[i]) continue;
            char name[32], nonce[NONCE_HEX + 1];
            facts_name(i, name, sizeof name);
            uform_status_t read = uform__mesh_read(s->job_fd, name, text, s->verb);
            if (read == UFORM_STATUS_NOT_FOUND) continue;
            uform__mesh_facts_t theirs;
            if (read != UFORM_STATUS_OK) {
                status = read;
                snprintf(message, sizeof message, "%s", uform_last_error());
            } else if (!parse_facts(text, "facts", nonce, &theirs) || theirs.index != i) {
                status = UFORM_STATUS_IO_ERROR;
                snprintf(message, sizeof message, "%s: %s/%s/%s is malformed", s->verb, s->directory, s->job, name);
            } else if (strcmp(nonce, s->nonce)) {
                status = UFORM_STATUS_INVALID_ARGUMENT;
                snprintf(message, sizeof message, "%s: index %llu (host %s, pid %llu) joined another run of %s",
                         s->verb, (unsigned long long)i, theirs.host, (unsigned long long)theirs.pid, s->job);
            } else {
                status = compare(s, mine, &theirs, message, sizeof message);
                roster->all_multicast &= theirs.multicast;
                seen[i] = true;
                missing--;
            }
        }
        if (missing && status == UFORM_STATUS_OK && !uform__mesh_backoff(s->deadline_ns, &step)) {
            char who[512];
            list_missing(seen, count, who, sizeof who);
            status = UFORM_STATUS_TIMEOUT;
            snprintf(message, sizeof message, "%s: %s: index %s never arrived within %g s", s->verb, s->job, who,
                     s->timeout_seconds);
        }
    }
    write_roster(s, status, message, roster);

    /* How a process tells index 0 it has the roster: after a success it removes its facts (every
     * process was seen); after a refusal it renames them took.<i>, so that index 0 can tell one
     * that came and went from one that never came. A gather refused at its first disagreement
     * stops before some processes arrived: they get a grace (a tenth of the timeout, 1 to 10 s)
     * to arrive and take the verdict, and later ones find the run file gone and say so. After a
     * timeout, the processes never seen are not waited for. The roster may have come at the
     * deadline: those seen get the same grace as they give index 0. */
    bool verdict = status != UFORM_STATUS_OK;
    uint64_t ack_deadline = uform__now_ns() + (uint64_t)(grace_seconds(s->timeout_seconds) * 1e9);
    if (!verdict && ack_deadline < s->deadline_ns) ack_deadline = s->deadline_ns;
    bool *done = uform__allocate_zeroed(count, sizeof *done);
    missing = 0;
    for (uint64_t i = 1; done && i < count; i++) {
        done[i] = status == UFORM_STATUS_TIMEOUT && !seen[i];
        missing += !done[i];
    }
    step = 0;
    char gone_late[512] = "";
    while (missing) {
        for (uint64_t i = 1; i < count; i++) {
            if (done[i]) continue;
            char name[32];
            (verdict ? took_name : facts_name)(i, name, sizeof name);
            if (uform__mesh_exists(s->job_fd, name) == verdict) done[i] = true, missing--;
        }
        if (missing && !uform__mesh_backoff(ack_deadline, &step)) {
            /* Only a process that was seen and never took the roster is an error of the run's
             * (it died?); a straggler still on its way simply missed the verdict. */
            for (uint64_t i = 1; i < count; i++) done[i] = done[i] || !seen[i];
            done[0] = true;
            list_missing(done, count, gone_late, sizeof gone_late);
            break;
        }
    }
    uform__deallocate(done);
    uform__deallocate(seen);
    test_step(s, 0, "clean-up");
    /* A success some process never acknowledged keeps its files: that process may still read the
     * roster. A refusal is cleaned up regardless: a latecomer finds the run file gone. */
    if (verdict || !gone_late[0]) clean_up(s, verdict ? count : 0);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", message);
    if (gone_late[0])
        return uform__fail(UFORM_STATUS_TIMEOUT, "%s: %s: index %s never took the roster within %g s (died?)", s->verb,
                           s->job, gone_late, s->timeout_seconds);
    return UFORM_STATUS_OK;
}

/* ---- every other index ---- */

/* True when the job directory's roster is this run's failure, written recently enough that index
 * 0 may still be waiting for stragglers to take it (its grace, doubled for a slow index 0). */
static bool fresh_verdict(const session_t *s) {
    char text[UFORM_MESH_FILE_MAX], nonce[NONCE_HEX + 1] = "";
    uint64_t status = 0, written_ms = 0;
    if (uform__mesh_read(s->job_fd, "roster", text, s->verb) != UFORM_STATUS_OK) return false;
    if (!uform__mesh_field(text, "nonce", nonce, sizeof nonce) || strcmp(nonce, s->nonce)) return false;
    if (!uform__mesh_field_number(text, "status", &status) || status == UFORM_STATUS_OK) return false;
    if (!uform__mesh_field_number(text, "written_ms", &written_ms)) return false;
    return wall_ms() <= written_ms + (uint64_t)(2 * grace_seconds(s->timeout_seconds) * 1e3);
}

/* True once index 0 has removed the run file: it ended the run, and no roster is coming for this
 * process. (No other run can have made a new one meanwhile: index 0 cannot remove the job
 * directory while our facts are in it, and a new index 0 refuses a job directory that exists.) */
static bool run_is_over(const session_t *s) { return !uform__mesh_exists(s->job_fd, "run"); }

/* Once index 0 has ended the run, a process still in it removes what it wrote (its facts, or
 * their took.<i>), then the job directory: index 0 could not while those were in it. Only our
 * run's directory (the same inode): a new run cannot make its own while ours exists, and rmdir
 * fails, harmlessly, if anything is left. */
static void leave_ended_run(const session_t *s, uint64_t index) {
    char name[32], path[4096];
    facts_name(index, name, sizeof name);
    uform__mesh_remove(s->job_fd, name);
    took_name(index, name, sizeof name);
    uform__mesh_remove(s->job_fd, name);
    struct stat ours, there;
    snprintf(path, sizeof path, "%s/%s", s->directory, s->job);
    if (fstat(s->job_fd, &ours) == 0 && lstat(path, &there) == 0 && ours.st_dev == there.st_dev &&
        ours.st_ino == there.st_ino)
        rmdir(path);
}

/* This process arrived after index 0 ended a failed run: it removes what it wrote, and the job
 * directory if that left it empty. */
static uform_status_t ended_without_us(const session_t *s, uint64_t index, const char *run_holder) {
    leave_ended_run(s, index);
    return uform__fail(UFORM_STATUS_TIMEOUT,
                       "%s: %s: index 0 (%s) ended the run before this process joined: it failed or gave up (its "
                       "message says why); start again under a new job name",
                       s->verb, s->job, run_holder);
}

static uform_status_t follow(session_t *s, const uform__mesh_facts_t *mine, uform__mesh_roster_t *roster) {
    uint64_t step = 0;
    for (;;) {
        bool existed = false;
        uform_status_t status = uform__mesh_open_job(s->directory, s->job, false, &existed, &s->job_fd, s->verb);
        if (status != UFORM_STATUS_OK) return status;
        if (s->job_fd >= 0) break; /* else index 0 has not made it yet */
        if (!uform__mesh_backoff(s->deadline_ns, &step))
            return uform__fail(UFORM_STATUS_TIMEOUT, "%s: %s: index 0 never arrived within %g s (no %s/%s)", s->verb,
                               s->job, s->timeout_seconds, s->directory, s->job);
    }
    char text[UFORM_MESH_FILE_MAX], holder[UFORM_MESH_FILE_MAX], run_holder[300], run_text[UFORM_MESH_FILE_MAX];
    uform__mesh_facts_t run;
    step = 0;
    for (;;) {
        uform_status_t status = uform__mesh_read(s->job_fd, "run", text, s->verb);
        if (status == UFORM_STATUS_OK) {
            memcpy(run_text, text, sizeof run_text);
            if (!parse_facts(text, "run", s->nonce, &run))
                return uform__fail(UFORM_STATUS_IO_ERROR, "%s: %s/%s/run is malformed", s->verb, s->directory, s->job);
            break;
        }
        if (status != UFORM_STATUS_NOT_FOUND) return status;
        if (!uform__mesh_backoff(s->deadline_ns, &step))
            return uform__fail(UFORM_STATUS_TIMEOUT, "%s: %s: index 0 made %s/%s but wrote no run file within %g s",
                               s->verb, s->job, s->directory, s->job, s->timeout_seconds);
    }
    describe_holder(text, NULL, run_holder, sizeof run_holder);
    if (mine->index >= run.count)
        return uform__fail(UFORM_STATUS_MISMATCH,
                           "%s: %s disagree on the processes in the run (host_domain_count): index 0 (host %s) says "
                           "%llu, index %llu (host %s) says %llu",
                           s->verb, s->job, run.host, (unsigned long long)run.count, (unsigned long long)mine->index,
                           mine->host, (unsigned long long)mine->count);
    test_step(s, mine->index, "facts");
    /* A roster that exists before our facts do is either this run's failure verdict, published
     * while index 0 still gives stragglers a grace to take it, or an earlier run's leftovers
     * (index 0 waits for every index before a success). */
    if (run_is_over(s)) return ended_without_us(s, mine->index, run_holder);
    if (uform__mesh_exists(s->job_fd, "roster") && !fresh_verdict(s)) {
        /* index 0 removes the run file before the roster: gone now, it was this run ending */
        if (run_is_over(s)) return ended_without_us(s, mine->index, run_holder);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: %s/%s holds an earlier run's roster (run file: %s): leftovers; use a new job name",
                           s->verb, s->directory, s->job, run_holder);
    }
    char name[32];
    facts_name(mine->index, name, sizeof name);
    format_facts(text, "facts", s->nonce, mine);
    bool taken = false;
    uform_status_t status = uform__mesh_write_new(s->job_fd, name, text, &taken, holder, s->verb);
    if (status != UFORM_STATUS_OK) return run_is_over(s) ? ended_without_us(s, mine->index, run_holder) : status;
    if (taken) {
        char who[300];
        describe_holder(holder, s->nonce, who, sizeof who);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %s: index %llu is already held by %s", s->verb, s->job,
                           (unsigned long long)mine->index, who);
    }
    /* Index 0 times out at the same deadline and then publishes who never arrived: wait a little
     * longer for that roster (a tenth of the timeout, 1 to 10 s) so every process can name them. */
    uint64_t grace_ns = (uint64_t)(grace_seconds(s->timeout_seconds) * 1e9);
    uint64_t roster_deadline = s->deadline_ns + grace_ns;
    uint64_t lead_deadline_ms = 0, now_ms = wall_ms();
    if (uform__mesh_field_number(run_text, "deadline_ms", &lead_deadline_ms) && lead_deadline_ms > now_ms) {
        /* Index 0 started later than this process: wait for its verdict too (bounded by its
         * own timeout, which the run file carries, plus the grace). */
        uint64_t lead = uform__now_ns() + (lead_deadline_ms - now_ms) * 1000000u + grace_ns;
        if (lead > roster_deadline) roster_deadline = lead;
    }
    step = 0;
    for (;;) {
        status = uform__mesh_read(s->job_fd, "roster", text, s->verb);
        if (status == UFORM_STATUS_OK) break;
        if (status == UFORM_STATUS_NOT_FOUND && run_is_over(s)) return ended_without_us(s, mine->index, run_holder);
        if (status != UFORM_STATUS_NOT_FOUND || !uform__mesh_backoff(roster_deadline, &step)) {
            uform__mesh_remove(s->job_fd, name);
            if (status != UFORM_STATUS_NOT_FOUND) return status;
            return uform__fail(UFORM_STATUS_TIMEOUT,
                               "%s: %s: no roster from index 0 (%s) within %g s: it still misses some process, or "
                               "died",
                               s->verb, s->job, run_holder, s->timeout_seconds);
        }
    }
    status = read_roster(s, text, roster);
    test_step(s, mine->index, "taken");
    /* Tells index 0 this process has what it needs: after a success by removing its facts, after
     * a refusal by renaming them (see lead). A verdict taken late may find index 0 gone already. */
    if (status == UFORM_STATUS_OK) {
        uform__mesh_remove(s->job_fd, name);
    } else {
        char took[32];
        took_name(mine->index, took, sizeof took);
        renameat(s->job_fd, name, s->job_fd, took);
        if (run_is_over(s)) leave_ended_run(s, mine->index);
    }
    return status;
}

uform_status_t uform__mesh_rendezvous(const char *directory, const char *job, double timeout_seconds,
                                      const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                      uform__mesh_roster_t *roster, const char *verb) {
    if (!uform__mesh_job_name_ok(job))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: job \"%s\" is not a plain name ([A-Za-z0-9._-], 1 to 128 bytes, not . or ..)", verb,
                           job ? job : "");
    session_t s = {.directory = directory, .job = job, .verb = verb, .timeout_seconds = timeout_seconds, .job_fd = -1};
    s.deadline_ns = uform__now_ns() + (uint64_t)(timeout_seconds * 1e9);
    memset(roster, 0, sizeof *roster);
    uform_status_t status = mine->index == 0 ? lead(&s, mine, nccl_id, roster) : follow(&s, mine, roster);
    if (s.job_fd >= 0) close(s.job_fd);
    return status;
}
