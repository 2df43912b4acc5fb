/* A file system without hard links (object-store FUSE mounts, some SMB): link and linkat answer
 * EPERM in every process of the run, as an LD_PRELOAD'd library would make them (here the test
 * executable defines them, which interposes them the same way for the static library it links).
 * Every process falls back to exclusive create plus rename: a run forms, a refused run answers
 * one outcome, an index claimed twice is still refused, and nothing is left in the directory. */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include "mesh_processes.h"

static int refused; /* inherited by every member (fork) */

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
#endif

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

    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
