/* A run that fails before every process arrived: index 0 refuses at the first disagreement it
 * reads, while others are still on their way. A straggler must still learn the verdict, or learn
 * at once that the run is over, and never wait out its whole timeout or leave files behind.
 *
 * The rendezvous's hook (uform__test_mesh_step) holds index 1 between reading the run file and
 * writing its facts: the window in which index 0 publishes its verdict (first case)
 * or ends the run and removes its files (second case), or has timed out (third case). Real
 * processes, a real directory. */
#include <time.h>

#include "mesh_processes.h"

static member_t members[3];

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Index 2 drives 3 GPUs where index 0 drives 2: MISMATCH, found before index 1 arrives. */
static double run_with_index_1_held(const char *job, const char *hold_until, double timeout) {
    members_fill(members, 3, job, 2, timeout);
    members[2].gpus = 3;
    members[1].holds[0].at = "facts";
    members[1].holds[0].until = hold_until;
    double start = now_seconds();
    members_start(members, 3);
    members_finish(members, 3);
    return now_seconds() - start;
}

static void check_mismatch(const member_t *member) {
    if (member->status != UFORM_STATUS_MISMATCH)
        TEST_FAIL_("index %zu: %s: %s", member->index, uform_status_name(member->status), member->message);
    CHECK_MESSAGE(*member, "GPUs per process");
    CHECK_MESSAGE(*member, "index 2");
}

int main(void) {
    make_mesh_directory();

    /* Index 1 arrives once the verdict is out, while index 0 gives stragglers their grace:
     * it takes the verdict like everyone else (before, it called the roster an earlier run's
     * leftovers). */
    run_with_index_1_held("verdict-out", "outcome", 60);
    for (size_t i = 0; i < 3; i++) check_mismatch(&members[i]);
    for (size_t i = 1; i < 3; i++) CHECK(!strcmp(members[i].message, members[0].message));
    CHECK(job_gone("verdict-out"));

    /* Index 1 arrives as index 0 ends the run and removes its files (the run file first, the
     * outcome a moment later): it says so at once, with the verdict if it still finds it, or
     * saying the run ended without it, never waiting its whole timeout for a roster that never
     * comes. 60 s of timeout; index 0's grace for stragglers is 6 s. */
    double elapsed = run_with_index_1_held("run-over", "!run", 60);
    check_mismatch(&members[0]);
    check_mismatch(&members[2]);
    if (members[1].status == UFORM_STATUS_MISMATCH) {
        CHECK(!strcmp(members[1].message, members[0].message));
    } else {
        if (members[1].status != UFORM_STATUS_TIMEOUT)
            TEST_FAIL_("index 1: %s: %s", uform_status_name(members[1].status), members[1].message);
        CHECK_MESSAGE(members[1], "ended the run before this process joined");
        CHECK_MESSAGE(members[1], "new job name");
    }
    if (elapsed > 40) TEST_FAIL_("the run took %.1f s: index 1 waited out its timeout", elapsed);
    CHECK(job_gone("run-over"));

    /* A latecomer after index 0's own timeout (2 s; the latecomer's is 60 s): index 0 does not
     * wait for it, yet it answers TIMEOUT at once, whether it still reads the verdict or finds the
     * run over, and the last one out removes the job directory. */
    members_fill(members, 2, "too-late", 1, 2);
    members[1].timeout = 60;
    members[1].holds[0].at = "facts"; /* joins once index 0 timed out */
    members[1].holds[0].until = "outcome";
    members[1].holds[1].at = "taken"; /* keeps its facts until index 0 has ended the run */
    members[1].holds[1].until = "!run";
    members[0].holds[0].at = "clean-up"; /* ends it with the latecomer's facts in: it cannot rmdir */
    members[0].holds[0].until = "facts.1";
    double start = now_seconds();
    members_start(members, 2);
    members_finish(members, 2);
    elapsed = now_seconds() - start;
    CHECK_STATUS(members[0].status, UFORM_STATUS_TIMEOUT);
    CHECK_MESSAGE(members[0], "index 1 never arrived");
    CHECK_STATUS(members[1].status, UFORM_STATUS_TIMEOUT);
    /* Its verdict, or (when index 0 removed the roster between index 1's facts and its read, as
     * a slow emulator lets happen) the run's end: TIMEOUT either way, never a wait of 60 s. */
    if (strcmp(members[1].message, members[0].message) &&
        !strstr(members[1].message, "ended the run before this process took its verdict"))
        TEST_FAIL_("index 1's message \"%s\" is neither the verdict nor the run's end", members[1].message);
    if (elapsed > 30) TEST_FAIL_("the run took %.1f s: index 1 waited out its timeout", elapsed);
    CHECK(job_gone("too-late"));

    /* The same job name is free again: a new run under it forms. */
    members_fill(members, 3, "run-over", 2, 60);
    members_start(members, 3);
    members_finish(members, 3);
    for (size_t i = 0; i < 3; i++) CHECK_OK(members[i].status);
    CHECK(job_gone("run-over"));

    CHECK(rmdir(mesh_directory) == 0); /* nothing left behind */
    TEST_DONE();
}
