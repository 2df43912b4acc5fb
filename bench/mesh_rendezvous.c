/*
 * `uform bench --mesh`: how long n processes take to meet through a shared directory, with
 * uform's rendezvous (index 0 gathers every process's facts and publishes one roster: about 3n
 * file reads for the whole run) beside the bare baseline where every process writes its facts
 * and then reads everyone's (n^2 reads). Real processes (fork), a real directory (under $TMPDIR
 * or /tmp), the same whole-file writes on both sides; no GPU: the rendezvous is called directly
 * with made-up facts, as the GPU part of bootstrap is not what is measured. Wall time from the
 * moment all processes are released until the last one has what it needs; median of 3.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "mesh/mesh_files.h"
#include "mesh/mesh_rendezvous.h"
#include "modes.h"

/* The baseline: write my facts, then open every other process's until all are read. */
static int naive_member(const char *directory, const char *job, size_t index, size_t count) {
    bool existed = false;
    int fd = -1;
    uint64_t deadline = (uint64_t)((bench_now_seconds() + 120) * 1e9), step = 0;
    /* Index 0 makes the directory here too, so both sides pay for the same mkdir. */
    if (uform__mesh_open_job(directory, job, index == 0, &existed, &fd, NULL, "bench") != UFORM_STATUS_OK) return 1;
    while (fd < 0) {
        if (!uform__mesh_backoff(deadline, &step)) return 1;
        if (uform__mesh_open_job(directory, job, false, &existed, &fd, NULL, "bench") != UFORM_STATUS_OK) return 1;
    }
    char name[32], text[UFORM_MESH_FILE_MAX], holder[UFORM_MESH_FILE_MAX];
    snprintf(name, sizeof name, "facts.%zu", index);
    snprintf(text, sizeof text, "uform-mesh-facts 1\nindex=%zu\ncount=%zu\ngpus=8\nhost=bench\n", index, count);
    bool taken = false;
    if (uform__mesh_write_new(fd, name, text, &taken, holder, "bench") != UFORM_STATUS_OK || taken) return 1;
    bool *read = calloc(count, 1);
    size_t left = count;
    step = 0;
    while (left) {
        for (size_t i = 0; i < count; i++) {
            if (read[i]) continue;
            snprintf(name, sizeof name, "facts.%zu", i);
            if (uform__mesh_read(fd, name, text, "bench") == UFORM_STATUS_OK) {
                read[i] = true;
                left--;
            }
        }
        if (left && !uform__mesh_backoff(deadline, &step)) return 1;
    }
    free(read);
    close(fd);
    return 0;
}

static int uform_member(const char *directory, const char *job, size_t index, size_t count) {
    uform__mesh_facts_t mine = {.index = index, .count = count, .gpus = 8, .gpu_class = 3, .multimem = 8, .pid = 1};
    snprintf(mine.host, sizeof mine.host, "bench");
    uform__mesh_roster_t roster;
    return uform__mesh_rendezvous(directory, job, 120, &mine, NULL, &roster, NULL, "bench") == UFORM_STATUS_OK ? 0 : 1;
}

/* Seconds for `count` processes to meet with one method; negative on failure. */
static double one_run(const char *directory, const char *job, size_t count, int naive) {
    int gate[2];
    if (pipe(gate) != 0) return -1;
    pid_t *children = calloc(count, sizeof *children);
    fflush(NULL);
    for (size_t i = 0; i < count; i++) {
        children[i] = fork();
        if (children[i] == 0) {
            char byte;
            close(gate[1]);
            if (read(gate[0], &byte, 1) < 0) _exit(2); /* released all at once: EOF */
            _exit(naive ? naive_member(directory, job, i, count) : uform_member(directory, job, i, count));
        }
    }
    close(gate[0]);
    double start = bench_now_seconds();
    close(gate[1]);
    int failed = 0;
    for (size_t i = 0; i < count; i++) {
        int status = 0;
        waitpid(children[i], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    double seconds = bench_now_seconds() - start;
    free(children);
    if (naive) { /* the baseline leaves its files: clear them for the next run */
        char command[600];
        snprintf(command, sizeof command, "rm -rf '%s/%s'", directory, job);
        if (system(command) != 0) failed = 1;
    }
    return failed ? -1 : seconds;
}

int bench_mesh_run(options_t const *o) {
    const char *base = getenv("TMPDIR");
    char directory[512];
    snprintf(directory, sizeof directory, "%s/uform-bench-mesh-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(directory)) {
        printf("mesh: cannot make a directory under %s\n", base && *base ? base : "/tmp");
        return 1;
    }
    static const size_t counts[] = {2, 8, 64, 256};
    int rounds = o->quick ? 1 : 3, failed = 0;
    printf("mesh rendezvous: processes meeting in %s, wall time until all have what they need, median of %d\n",
           directory, rounds);
    printf("%-10s %16s %22s %10s\n", "processes", "uform (roster)", "everyone reads all", "ratio");
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        double ours[3], theirs[3];
        for (int r = 0; r < rounds; r++) {
            char job[64];
            snprintf(job, sizeof job, "uform-%zu-%d", counts[c], r);
            ours[r] = one_run(directory, job, counts[c], 0);
            snprintf(job, sizeof job, "naive-%zu-%d", counts[c], r);
            theirs[r] = one_run(directory, job, counts[c], 1);
            failed |= ours[r] < 0 || theirs[r] < 0;
        }
        double a = bench_median(ours, (size_t)rounds), b = bench_median(theirs, (size_t)rounds);
        char ta[32], tb[32], ratio[32];
        bench_format_time(ta, sizeof ta, a * 1e9);
        bench_format_time(tb, sizeof tb, b * 1e9);
        bench_format_ratio(ratio, sizeof ratio, a, b);
        printf("%-10zu %16s %22s %10s\n", counts[c], ta, tb, ratio);
    }
    rmdir(directory);
    return failed;
}
