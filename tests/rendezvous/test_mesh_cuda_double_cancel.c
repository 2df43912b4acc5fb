/* A C caller cancels a bootstrap through options->cancel, set from a signal handler (SIGALRM,
 * 0.5 s in): every wait looks at it at least every 50 ms. Index 0 waiting for a peer answers
 * INTERRUPTED at once and removes the job directory; a follower waiting for the roster answers
 * INTERRUPTED and index 0 learns it as of a dead process, at once, answering INTERRUPTED naming
 * it, long before its 30 s timeout. Nothing is left: the same job name forms again. */
#include <time.h>

#include "mesh_processes.h"

static member_t members[3];

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int main(void) {
    make_mesh_directory();
    members_fill(members, 2, "lead-cancelled", 1, 30);
    members[0].cancel_after = 0.5;
    double start = now_seconds();
    members_start(members, 1);
    members_finish(members, 1);
    double elapsed = now_seconds() - start;
    CHECK_STATUS(members[0].status, UFORM_STATUS_INTERRUPTED);
    CHECK_MESSAGE(members[0], "index 0 (host");
    CHECK_MESSAGE(members[0], "was interrupted");
    if (elapsed > 2.5) TEST_FAIL_("cancelled at 0.5 s, answered at %.2f s", elapsed);
    CHECK(job_gone("lead-cancelled"));

    members_fill(members, 3, "follower-cancelled", 1, 30);
    members[1].cancel_after = 0.5; /* index 2 never comes: index 1 waits for the roster */
    start = now_seconds();
    members_start(members, 2);
    members_finish(members, 2);
    elapsed = now_seconds() - start;
    for (size_t i = 0; i < 2; i++) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_INTERRUPTED);
        CHECK_MESSAGE(members[i], "index 1 (host");
    }
    CHECK(!strcmp(members[0].message, members[1].message));
    if (elapsed > 5) TEST_FAIL_("cancelled at 0.5 s, the run answered at %.2f s", elapsed);
    CHECK(job_gone("follower-cancelled"));

    members_fill(members, 2, "lead-cancelled", 1, 30); /* the name is free again */
    members_start(members, 2);
    members_finish(members, 2);
    CHECK_OK(members[0].status);
    CHECK_OK(members[1].status);
    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
