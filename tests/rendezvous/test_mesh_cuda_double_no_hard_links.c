/* A file system without hard links (object-store FUSE mounts, some SMB): link and linkat answer
 * EPERM in every process of the run, as an LD_PRELOAD'd library would make them (here the test
 * executable defines them, which interposes them the same way for the static library it links).
 * Every process falls back to exclusive create plus rename: a run forms, a refused run answers
 * one outcome, an index claimed twice is still refused, and nothing is left in the directory.
 * A writer killed between claiming the outcome and renaming its file onto it (the test's renameat
 * kills index 1 there, once its own facts failed to land: fsync answering EIO, so that it proposes
 * the run's verdict) leaves its verdict in the claim: both survivors answer it. */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include "mesh_processes.h"

static int refused;        /* inherited by every member (fork) */
static int fail_fsync;     /* in a member: its next fsync answers EIO */
static int die_publishing; /* in a member: killed as it renames a file onto "outcome" */

/* wasm32 builds compile this test but never run it (it loads the CUDA double: scripts/test-wasm),
 * and Emscripten has no raw linkat system call to forward to. */
#ifndef __EMSCRIPTEN__
int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags) {
    if (refused) {
        errno = EPERM;
        return -1;
    }
    return (int)syscall(SYS_linkat, olddirfd, oldpath, newdirfd, newpath, flags);
}

int link(const char *oldpath, const char *newpath) { return linkat(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0); }

int fsync(int fd) {
    if (fail_fsync) {
        fail_fsync = 0;
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    if (die_publishing && !strcmp(newpath, "outcome")) raise(SIGKILL); /* its claim is made, its file not renamed */
#ifdef SYS_renameat
    return (int)syscall(SYS_renameat, olddirfd, oldpath, newdirfd, newpath);
#else /* riscv64 has only renameat2 */
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, 0);
#endif
}
#endif

/* The rendezvous's step hook: index 1, once it has read the run file, fails its facts and dies
 * publishing the verdict it proposes for that. */
static void doomed_proposer(const char *directory, const char *job, uint64_t index, const char *step) {
    (void)directory, (void)job;
    if (index == 1 && !strcmp(step, "facts")) fail_fsync = die_publishing = 1;
}

static member_t members[4];

int main(void) {
    make_mesh_directory();
    char probe[512], target[512];
    snprintf(probe, sizeof probe, "%s/probe", mesh_directory);
    snprintf(target, sizeof target, "%s/probe.link", mesh_directory);
    FILE *file = fopen(probe, "w");
    CHECK(file != NULL);
    fclose(file);
    refused = 1;
    CHECK(link(probe, target) != 0 && errno == EPERM); /* the interposition holds */
    CHECK(unlink(probe) == 0);

    members_fill(members, 3, "formed", 2, 5);
    members_start(members, 3);
    members_finish(members, 3);
    for (size_t i = 0; i < 3; i++) {
        CHECK_OK(members[i].status);
        CHECK_EQ_INT(members[i].description.gpus_per_colocated_domain, 6);
    }
    CHECK(job_gone("formed"));

    members_fill(members, 3, "refused", 1, 5);
    members[2].gpus = 2;
    members_start(members, 3);
    members_finish(members, 3);
    for (size_t i = 0; i < 3; i++) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_MISMATCH);
        CHECK(!strcmp(members[i].message, members[0].message));
    }
    CHECK(job_gone("refused"));

    /* Two processes claim index 1 (index 2 never comes): the claim file is still exclusive. */
    members_fill(members, 3, "twice", 1, 2);
    members[2].index = 1;
    members_start(members, 3);
    members_finish(members, 3);
    CHECK(members[1].status == UFORM_STATUS_INVALID_ARGUMENT || members[2].status == UFORM_STATUS_INVALID_ARGUMENT);
    const member_t *loser = members[1].status == UFORM_STATUS_INVALID_ARGUMENT ? &members[1] : &members[2];
    CHECK_MESSAGE(*loser, "index 1 is already held");
    CHECK_STATUS(members[0].status, UFORM_STATUS_TIMEOUT);
    CHECK(job_gone("twice"));

    uform__test_mesh_step = doomed_proposer;
    members_fill(members, 3, "claim-killed", 1, 2);
    members_start(members, 3);
    members_finish(members, 3);
    uform__test_mesh_step = NULL;
    CHECK(members[1].status == (uform_status_t)-1); /* killed */
    for (size_t i = 0; i < 3; i += 2) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_IO_ERROR);
        CHECK_MESSAGE(members[i], "index 1 (host");
        CHECK_MESSAGE(members[i], "cannot publish its facts");
    }
    CHECK(!strcmp(members[0].message, members[2].message));
    char left[1024];
    job_left("claim-killed", left, sizeof left);
    if (left[0]) TEST_FAIL_("claim-killed: left in the job directory: %s", left);
    CHECK(job_gone("claim-killed")); /* the killed writer's temporary file too */

    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
