/* Meshes that must not form, against the CUDA driver test double, in real processes over a real
 * directory; each refusal has a clear status and names what is wrong:
 *   disagreeing GPU counts per process, processes in the run, GPU classes, multicast extents (MISMATCH, both
 *   sides named); two processes claiming one index (the second learns who holds it); an index
 *   past the run; a peer killed before it joined (everyone else times out naming it, and the run
 *   restarted under a new job name forms); bad job names; a missing or non-directory directory;
 *   a job directory that is a symbolic link, or owned by another user; an earlier run's
 *   leftovers under the same job name. */
#include <fcntl.h>
#include <time.h>

#include "mesh_processes.h"

static member_t members[8];

static void run(size_t n) {
    members_start(members, n);
    members_finish(members, n);
}

int main(void) {
    const char *emulator = getenv("UFORM_TEST_EMULATOR");
    if (emulator && *emulator) {
        printf("SKIPPED under %s: these refusals are judged by timeouts of 2 to 30 s across several "
               "processes, too tight for an emulator shared with other tests; they run natively\n",
               emulator);
        return 77;
    }
    make_mesh_directory();
    char path[1024], other[1024];

    /* Processes driving different numbers of GPUs: one description cannot hold both. */
    members_fill(members, 3, "gpus-differ", 2, 30);
    members[2].gpus = 3;
    run(3);
    for (size_t i = 0; i < 3; i++) {
        if (members[i].status != UFORM_STATUS_MISMATCH)
            TEST_FAIL_("index %zu: %s: %s", i, uform_status_name(members[i].status), members[i].message);
        CHECK_MESSAGE(members[i], "GPUs per process");
        CHECK_MESSAGE(members[i], "says 2");
        CHECK_MESSAGE(members[i], "index 2");
        CHECK_MESSAGE(members[i], "says 3");
    }
    CHECK(job_gone("gpus-differ"));

    /* Index 0 has NCCL (it publishes an id), index 2 has none: its collectives would hang the
     * run, so nobody forms. */
    members_fill(members, 3, "nccl-differs", 1, 30);
    members[0].nccl_library = members[1].nccl_library = UFORM_TEST_NCCL_DOUBLE;
    run(3);
    for (size_t i = 0; i < 3; i++) {
        if (members[i].status != UFORM_STATUS_MISMATCH)
            TEST_FAIL_("index %zu: %s: %s", i, uform_status_name(members[i].status), members[i].message);
        CHECK_MESSAGE(members[i], "data plane");
        CHECK_MESSAGE(members[i], "index 2");
    }
    CHECK(job_gone("nccl-differs"));
    /* Without NCCL at index 0 nobody has a data plane, whatever the others have: it forms. */
    members_fill(members, 2, "nccl-elsewhere", 1, 30);
    members[1].nccl_library = UFORM_TEST_NCCL_DOUBLE;
    run(2);
    CHECK_OK(members[0].status);
    CHECK_OK(members[1].status);

    /* A process that counts a different run size, inside and past index 0's count. */
    members_fill(members, 3, "count-differs", 1, 30);
    members[1].count = 4;
    run(3);
    CHECK_STATUS(members[0].status, UFORM_STATUS_MISMATCH);
    CHECK_MESSAGE(members[0], "processes in the run");
    CHECK_STATUS(members[1].status, UFORM_STATUS_MISMATCH);
    members_fill(members, 2, "past-the-count", 1, 3);
    members[1].index = 2;
    members[1].count = 3;
    run(2);
    /* The process past the count proposes its verdict: index 0 answers it too, at once. */
    for (size_t i = 0; i < 2; i++) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_MISMATCH);
        CHECK_MESSAGE(members[i], "index 0 (host");
        CHECK_MESSAGE(members[i], "index 2 (host");
    }
    CHECK(!strcmp(members[0].message, members[1].message));
    CHECK(job_gone("past-the-count"));

    /* Disagreeing GPU classes: Hopper on index 0, Ampere on index 1. */
    members_fill(members, 2, "class-differs", 1, 30);
    members[1].device_line = "device cc=8.0 memory=64M";
    run(2);
    for (size_t i = 0; i < 2; i++) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_MISMATCH);
        CHECK_MESSAGE(members[i], "GPU class");
        CHECK_MESSAGE(members[i], "nvidia_hopper");
        CHECK_MESSAGE(members[i], "nvidia_ampere");
    }

    /* Disagreeing multicast extents. */
    members_fill(members, 2, "extent-differs", 4, 30); /* 8 GPUs: room for both extents */
    members[0].multimem = 4;
    members[1].multimem = 8;
    run(2);
    for (size_t i = 0; i < 2; i++) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_MISMATCH);
        CHECK_MESSAGE(members[i], "multicast extent");
    }

    /* Two processes claim index 1; index 2 never comes. The second learns who holds index 1. */
    members_fill(members, 3, "twice", 1, 3);
    members[2].index = 1;
    run(3);
    uform_status_t a = members[1].status, b = members[2].status;
    member_t *loser = a == UFORM_STATUS_INVALID_ARGUMENT ? &members[1] : &members[2];
    CHECK(a == UFORM_STATUS_INVALID_ARGUMENT || b == UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(*loser, "index 1 is already held by host");
    char holder_pid[32];
    snprintf(holder_pid, sizeof holder_pid, "pid %d", (int)(loser == &members[1] ? members[2].pid : members[1].pid));
    CHECK_MESSAGE(*loser, holder_pid);
    CHECK_STATUS(members[0].status, UFORM_STATUS_TIMEOUT);
    CHECK_MESSAGE(members[0], "index 2 never arrived");

    /* A peer that dies before joining: the others time out naming it... */
    members_fill(members, 4, "peer-dies", 1, 2);
    members[3].stall = true;
    members_start(members, 4);
    usleep(100 * 1000);
    kill(members[3].pid, SIGKILL);
    members_finish(members, 4);
    for (size_t i = 0; i < 3; i++) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_TIMEOUT);
        CHECK_MESSAGE(members[i], "index 3 never arrived");
    }
    CHECK(job_gone("peer-dies")); /* index 0 cleaned up after the others read its verdict */
    /* ...and the run restarted under a new job name forms. */
    members_fill(members, 4, "peer-dies.retry", 1, 30);
    run(4);
    for (size_t i = 0; i < 4; i++) CHECK_OK(members[i].status);

    /* Bad job names, a missing directory, a directory that is a file, an index past the run. */
    static const char *const bad_jobs[] = {"", ".", "..", "a/b", "../escape", "sp ace", "tab\t"};
    for (size_t j = 0; j < sizeof bad_jobs / sizeof *bad_jobs; j++) {
        members_fill(members, 2, bad_jobs[j], 1, 2);
        run(1);
        CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_MESSAGE(members[0], "not a plain name");
    }
    char long_name[200];
    memset(long_name, 'x', 129);
    long_name[129] = 0;
    members_fill(members, 2, long_name, 1, 2);
    run(1);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    char saved[256];
    snprintf(saved, sizeof saved, "%s", mesh_directory);
    snprintf(mesh_directory, sizeof mesh_directory, "%.200s/missing", saved);
    members_fill(members, 2, "job", 1, 2);
    run(1);
    CHECK_STATUS(members[0].status, UFORM_STATUS_NOT_FOUND);
    snprintf(path, sizeof path, "%s/a-file", saved);
    write_file(path, "not a directory");
    snprintf(mesh_directory, sizeof mesh_directory, "%.240s", path);
    run(1);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "is not a directory");
    snprintf(mesh_directory, sizeof mesh_directory, "%s", saved);
    unlink(path);
    members_fill(members, 2, "job", 1, 2);
    members[0].index = 2;
    run(1);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "outside a run of 2");

    /* A job directory that is a symbolic link: index 0 will not make it, index 1 will not use it. */
    snprintf(other, sizeof other, "%s/elsewhere", mesh_directory);
    CHECK(mkdir(other, 0700) == 0);
    snprintf(path, sizeof path, "%s/linked", mesh_directory);
    CHECK(symlink(other, path) == 0);
    members_fill(members, 2, "linked", 1, 2);
    run(2);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "exists already");
    CHECK_STATUS(members[1].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[1], "a symbolic link");
    CHECK(unlink(path) == 0);
    CHECK(rmdir(other) == 0); /* nothing was written through the link */

    /* An earlier run's leftovers: its run file and roster. Index 0 refuses to reuse the name;
     * a later index refuses the old roster, in index 0's words. */
    snprintf(path, sizeof path, "%s/stale", mesh_directory);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(other, sizeof other, "%s/stale/run", mesh_directory);
    char run_file[512];
    run_file_text(run_file, sizeof run_file, 2, "crashed-host", 2000, "");
    write_file(other, run_file);
    /* written an hour ago: far past its index 0's timeout (2 s) */
    struct timespec an_hour_ago[2];
    clock_gettime(CLOCK_REALTIME, &an_hour_ago[0]);
    an_hour_ago[0].tv_sec -= 3600;
    an_hour_ago[1] = an_hour_ago[0];
    CHECK(utimensat(AT_FDCWD, other, an_hour_ago, 0) == 0);
    snprintf(other, sizeof other, "%s/stale/roster", mesh_directory);
    write_file(other, "uform-mesh-roster 3\nnonce=0123456789abcdef0123456789abcdef\nstatus=0\nmessage=\ncount=2\n"
                      "gpus=1\ngpu_class=3\nmultimem=1\nmulticast=0\nnccl=none\n");
    members_fill(members, 2, "stale", 1, 2);
    run(2);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "crashed-host");
    CHECK_MESSAGE(members[0], "earlier");
    CHECK_STATUS(members[1].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(!strcmp(members[1].message, members[0].message));

    /* An earlier run whose index 0 died while gathering: a run file, no roster. A process of a
     * new run under that name says so at once (its file system's clock puts the run file past
     * that index 0's timeout), instead of waiting its own 30 s for a roster. */
    snprintf(path, sizeof path, "%s/run-only", mesh_directory);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(other, sizeof other, "%s/run-only/run", mesh_directory);
    write_file(other, run_file); /* the same run file */
    CHECK(utimensat(AT_FDCWD, other, an_hour_ago, 0) == 0);
    members_fill(members, 2, "run-only", 1, 30);
    struct timespec started, ended;
    clock_gettime(CLOCK_MONOTONIC, &started);
    members_start(&members[1], 1);
    members_finish(&members[1], 1);
    clock_gettime(CLOCK_MONOTONIC, &ended);
    CHECK_STATUS(members[1].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[1], "job directory exists already"); /* what index 0 answers */
    CHECK_MESSAGE(members[1], "earlier run");
    CHECK_MESSAGE(members[1], "crashed-host");
    CHECK(ended.tv_sec - started.tv_sec < 20);
    snprintf(other, sizeof other, "%s/run-only/facts.1", mesh_directory);
    CHECK(access(other, F_OK) != 0); /* it took its facts back */

    /* A job directory owned by another user, there before the run (only root can make one
     * here). */
    if (geteuid() == 0) {
        snprintf(path, sizeof path, "%s/foreign", mesh_directory);
        CHECK(mkdir(path, 0700) == 0);
        CHECK(chown(path, 1, 1) == 0);
        members_fill(members, 2, "foreign", 1, 2);
        run(2);
        /* Not index 0's (it found the directory there): every process answers its refusal. */
        CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_MESSAGE(members[0], "exists already");
        CHECK_STATUS(members[1].status, UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(!strcmp(members[1].message, members[0].message));
        char left[1024];
        job_left("foreign", left, sizeof left);
        CHECK(!strcmp(left, "")); /* nothing written into it */
    } else {
        printf("not root: the foreign-owner case needs a directory of another user; skipped\n");
    }
    remove_mesh_directory();
    TEST_DONE();
}
