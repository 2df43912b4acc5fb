/* Runs the processes of a mesh for a test: each is a fork()ed child of the test (before the
 * test touched any GPU), with the CUDA driver test double describing its GPUs, its own VRAM
 * executor, and one uform_mesh_bootstrap; it reports its status, its description and its last
 * error through a pipe. Real processes, a real directory (mkdtemp), never a real GPU. */
#ifndef UFORM_TEST_MESH_PROCESSES_H
#define UFORM_TEST_MESH_PROCESSES_H

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mesh/mesh_rendezvous.h"
#include "test.h"

typedef struct member_t {
    /* what the process is told */
    size_t index, count, gpus, multimem;
    double timeout;
    const char *job;
    bool stall;      /* sleeps instead of joining (to be killed: a peer that dies) */
    const char *device_line; /* the double's line for each GPU; NULL: an H100 of 64 MiB */
    const char *nccl_library; /* the NCCL it loads; NULL: mesh_nccl_library */
    const char *nccl_config;  /* UFORM_NCCL_DOUBLE_CONFIG for it; NULL: none */
    /* at the rendezvous's step `at` (uform__test_mesh_step: "facts", "taken" or "clean-up"),
     * waits until the job directory's file `until` exists (or, with a leading '!', no longer
     * exists) or index 0 removed its run file, for at most 10 s; `at` NULL: no wait */
    struct {
        const char *at, *until;
    } holds[2];
    /* at the rendezvous's step `signal_at`, writes mesh_directory/mark.<job> and waits (at most
     * 20 s) for mesh_directory/go.<job>: the test sends it a real signal there (member_signal) */
    const char *signal_at;
    /* index 0 only: at its step "published", damages the roster ("truncate", "corrupt": one
     * bit in its middle, "nonce": one bit of its nonce, or "version": another format's) and
     * then writes mesh_directory/damaged.<job>; "outcome": at its step "deciding", puts an
     * unreadable file at the outcome's name instead */
    const char *damage;
    double delay;        /* seconds it sleeps before it joins */
    double cancel_after; /* > 0: a SIGALRM handler sets its options' cancel flag this long after it starts */
    long realtime_skew;  /* seconds its CLOCK_REALTIME is off, where the test interposes it */
    /* what it answers */
    uform_status_t status;
    uform_mesh_description_t description;
    char message[1024];
    pid_t pid;
    int pipe;
} member_t;

static char mesh_directory[256];
/* The directory members meet in, where it is not mesh_directory (a test of long paths). */
static const char *mesh_directory_override;
/* The NCCL library every member loads: none by default (a machine without NCCL). */
static const char *mesh_nccl_library = "/nonexistent/libnccl.so.2";

static inline void make_mesh_directory(void) {
    snprintf(mesh_directory, sizeof mesh_directory, "/tmp/uform-mesh-test-XXXXXX");
    CHECK(mkdtemp(mesh_directory) != NULL);
}

static const member_t *member_self; /* in a member's process: its own entry */
/* In a member's process: its realtime_skew, for a test that interposes clock_gettime. */
static long member_realtime_skew;
static volatile int member_cancel;

static void member_cancel_now(int signal) {
    (void)signal;
    member_cancel = 1;
}

static inline void member_wait(const char *directory, const char *job, const char *until);

/* The rendezvous's test hook (uform__test_mesh_step): holds this member as it says. */
static inline void member_damage(const char *directory, const char *job) {
    char path[1024], text[4096] = "";
    snprintf(path, sizeof path, "%s/%s/roster", directory, job);
    FILE *file = fopen(path, "r");
    size_t length = file ? fread(text, 1, sizeof text - 1, file) : 0;
    if (file) fclose(file);
    text[length] = 0;
    char *nonce = strstr(text, "\nnonce=");
    if (!strcmp(member_self->damage, "truncate")) length /= 2;
    else if (!strcmp(member_self->damage, "corrupt")) text[length / 2] ^= 0x01;
    else if (!strcmp(member_self->damage, "nonce") && nonce) nonce[7] ^= 0x01; /* its first digit */
    else if (!strncmp(text, "uform-mesh-roster ", 18)) text[18]++; /* the next format version */
    /* In place at once (a rename), as uform writes its files: a reader never sees it half
     * rewritten, which would be a second damage (an empty roster) and a verdict of its own. */
    char temporary[1100];
    snprintf(temporary, sizeof temporary, "%s.damaged.tmp", path);
    file = fopen(temporary, "w");
    if (file) {
        fwrite(text, 1, length, file);
        fclose(file);
        rename(temporary, path);
    }
    snprintf(path, sizeof path, "%s/damaged.%s", directory, job);
    file = fopen(path, "w");
    if (file) fclose(file);
}

static inline void member_hold(const char *directory, const char *job, uint64_t index, const char *step) {
    (void)index;
    if (member_self->damage && !strcmp(member_self->damage, "outcome")) {
        if (!strcmp(step, "deciding")) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s/outcome", directory, job);
            FILE *file = fopen(path, "w");
            if (file) {
                fputs("damaged\n", file);
                fclose(file);
            }
        }
    } else if (member_self->damage && !strcmp(step, "published"))
        member_damage(directory, job);
    if (member_self->signal_at && !strcmp(step, member_self->signal_at)) {
        char mark[1024], go[1024];
        struct stat info;
        snprintf(mark, sizeof mark, "%s/mark.%s", directory, job);
        snprintf(go, sizeof go, "%s/go.%s", directory, job);
        FILE *file = fopen(mark, "w");
        if (file) fclose(file);
        for (int waited_ms = 0; lstat(go, &info) != 0 && waited_ms < 20000; waited_ms++) usleep(1000);
    }
    for (size_t h = 0; h < sizeof member_self->holds / sizeof *member_self->holds; h++)
        if (member_self->holds[h].at && !strcmp(step, member_self->holds[h].at))
            member_wait(directory, job, member_self->holds[h].until);
}

static inline void member_wait(const char *directory, const char *job, const char *until) {
    bool gone = until[0] == '!';
    char path[1024], run[1024];
    struct stat info;
    snprintf(path, sizeof path, "%s/%s/%s", directory, job, until + gone);
    snprintf(run, sizeof run, "%s/%s/run", directory, job);
    /* Whatever it waits for, index 0 ending the run (its run file gone) ends the wait too. */
    for (int waited_ms = 0; (lstat(path, &info) == 0) == gone && lstat(run, &info) == 0 && waited_ms < 10000;
         waited_ms++)
        usleep(1000);
}

static inline void member_run(member_t *m) {
    char config[2048] = "";
    for (size_t g = 0; g < m->gpus; g++) {
        strcat(config, m->device_line ? m->device_line : "device cc=9.0 memory=64M");
        strcat(config, "\n");
    }
    setenv("UFORM_CUDA_LIBRARY", UFORM_TEST_CUDA_DOUBLE, 1);
    setenv("UFORM_CUDA_DOUBLE_CONFIG", config, 1);
    setenv("UFORM_NCCL_LIBRARY", m->nccl_library ? m->nccl_library : mesh_nccl_library, 1);
    if (m->nccl_config) setenv("UFORM_NCCL_DOUBLE_CONFIG", m->nccl_config, 1);
    else unsetenv("UFORM_NCCL_DOUBLE_CONFIG");
    if (m->stall)
        for (;;) pause();
    member_self = m;
    member_realtime_skew = m->realtime_skew;
    if (m->delay > 0) usleep((useconds_t)(m->delay * 1e6));
    if (m->holds[0].at || m->signal_at || m->damage) uform__test_mesh_step = member_hold;
    uform_executor_t *executor = NULL;
    m->status = uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                        &executor);
    uform_mesh_t *mesh = NULL;
    if (m->status == UFORM_STATUS_OK) {
        uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
        options.host_domain_index = m->index;
        options.host_domain_count = m->count;
        options.gpus_per_multimem_domain = m->multimem;
        options.directory = mesh_directory_override ? mesh_directory_override : mesh_directory;
        options.job = m->job;
        options.timeout_seconds = m->timeout;
        options.cancel = &member_cancel;
        if (m->cancel_after > 0) {
            signal(SIGALRM, member_cancel_now);
            struct itimerval when = {{0, 0}, {(time_t)m->cancel_after, (suseconds_t)((m->cancel_after - (double)(time_t)m->cancel_after) * 1e6)}};
            setitimer(ITIMER_REAL, &when, NULL);
        }
        m->status = uform_mesh_bootstrap(executor, &options, &mesh);
    }
    snprintf(m->message, sizeof m->message, "%s", uform_last_error());
    if (mesh) uform_mesh_describe(mesh, &m->description);
    uform_mesh_free(mesh);
    uform_executor_free(executor);
}

/** Starts every member as a child process. */
static inline void members_start(member_t *members, size_t n) {
    fflush(NULL);
    for (size_t i = 0; i < n; i++) {
        int fds[2];
        CHECK(pipe(fds) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            member_run(&members[i]);
            ssize_t written = write(fds[1], &members[i], sizeof members[i]);
            _exit(written == (ssize_t)sizeof members[i] ? 0 : 3);
        }
        close(fds[1]);
        members[i].pid = pid;
        members[i].pipe = fds[0];
    }
}

/** Collects one member's answer (a killed one gets status -1). */
static inline void member_finish(member_t *m) {
    member_t answer;
    ssize_t got = read(m->pipe, &answer, sizeof answer);
    close(m->pipe);
    int status = 0;
    waitpid(m->pid, &status, 0);
    if (got == (ssize_t)sizeof answer) {
        m->status = answer.status;
        m->description = answer.description;
        memcpy(m->message, answer.message, sizeof answer.message);
    } else {
        m->status = (uform_status_t)-1;
    }
}

/** Collects every member's answer (a killed one gets status -1). */
static inline void members_finish(member_t *members, size_t n) {
    for (size_t i = 0; i < n; i++) member_finish(&members[i]);
}

/** Waits (at most 20 s) until the member with `signal_at` is at its step, sends it `signal`
 *  (a real one, from this process), and lets its hook go on. SIGSTOP: waits until it stopped. */
static inline void member_signal(member_t *m, int signal) {
    char mark[1024], go[1024];
    struct stat info;
    snprintf(mark, sizeof mark, "%s/mark.%s", mesh_directory, m->job);
    snprintf(go, sizeof go, "%s/go.%s", mesh_directory, m->job);
    for (int waited_ms = 0; lstat(mark, &info) != 0 && waited_ms < 20000; waited_ms++) usleep(1000);
    if (lstat(mark, &info) != 0) TEST_FAIL_("index %zu never reached step %s", m->index, m->signal_at);
    CHECK(kill(m->pid, signal) == 0);
    if (signal == SIGSTOP) {
        int status = 0;
        CHECK(waitpid(m->pid, &status, WUNTRACED) == m->pid && WIFSTOPPED(status));
    }
    FILE *file = fopen(go, "w");
    if (file) fclose(file);
    unlink(mark);
}

/** What is left of `directory/job`, its entries' names sorted and joined by spaces ("" when the
 *  directory is gone or empty), dot files (a killed writer's temporary file) included. */
static inline void job_left(const char *job, char *out, size_t capacity) {
    char path[1024], names[64][256];
    size_t count = 0;
    snprintf(path, sizeof path, "%s/%s", mesh_directory, job);
    out[0] = 0;
    DIR *directory = opendir(path);
    if (!directory) return;
    for (struct dirent *entry; (entry = readdir(directory)) && count < 64;)
        if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
            snprintf(names[count++], sizeof names[0], "%s", entry->d_name);
    closedir(directory);
    qsort(names, count, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (size_t i = 0; i < count; i++) {
        size_t used = strlen(out);
        snprintf(out + used, capacity - used, "%s%.255s", i ? " " : "", names[i]);
    }
}

/** A run of `n` members with the same facts, indices 0..n-1. */
static inline void members_fill(member_t *members, size_t n, const char *job, size_t gpus, double timeout) {
    for (size_t i = 0; i < n; i++)
        members[i] = (member_t){.index = i, .count = n, .gpus = gpus, .timeout = timeout, .job = job};
}

static inline int remove_entry(const char *path, const struct stat *info, int type, struct FTW *walk) {
    (void)info, (void)type, (void)walk;
    return remove(path);
}

/** Removes the test's directory and whatever a failed check left in it (never following links). */
static inline void remove_mesh_directory(void) { nftw(mesh_directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/** Removes one directory of the test's and what is in it. */
static inline void remove_mesh_directory_entry(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/** True when `directory/job` is gone (the run cleaned up). */
static inline bool job_gone(const char *job) {
    char path[1024];
    struct stat info;
    snprintf(path, sizeof path, "%s/%s", mesh_directory, job);
    return lstat(path, &info) != 0 && errno == ENOENT;
}

/** A run of `n` processes (one GPU each, 30 s timeout) under `job` forms: every process answers
 *  OK, and the run's directory is gone afterwards. */
static inline void check_run_forms(member_t *members, size_t n, const char *job) {
    members_fill(members, n, job, 1, 30);
    members_start(members, n);
    members_finish(members, n);
    for (size_t i = 0; i < n; i++) CHECK_OK(members[i].status);
    CHECK(job_gone(job));
}

/** Writes `text` to `path`: a file planted where a run looks, not written by uform. */
static inline void write_file(const char *path, const char *text) {
    FILE *file = fopen(path, "w");
    CHECK(file != NULL);
    fputs(text, file);
    fclose(file);
}

/** Into `out`: the run file (format 3) an index 0 on `host`, pid 4242, with no boot id or pid
 *  namespace, writes for a run of `count` with a `timeout_ms` timeout, followed by `extra`
 *  ("" or more lines): an earlier, crashed or planted run's. One copy of the format, for the
 *  tests that plant one. */
static inline void run_file_text(char *out, size_t capacity, size_t count, const char *host, unsigned timeout_ms,
                                 const char *extra) {
    snprintf(out, capacity,
             "uform-mesh-run 3\nnonce=0123456789abcdef0123456789abcdef\nindex=0\ncount=%zu\ngpus=1\n"
             "gpu_class=3\nmultimem=1\nmulticast=0\nnccl=0\nhost=%s\npid=4242\nboot=\npidns=\n"
             "timeout_ms=%u\n%s",
             count, host, timeout_ms, extra);
}

#define CHECK_MESSAGE(member, text)                                                                \
    do {                                                                                           \
        if (!strstr((member).message, text))                                                       \
            TEST_FAIL_("index %zu's message \"%s\" does not name \"%s\"", (member).index, (member).message, text); \
    } while (0)

#endif
