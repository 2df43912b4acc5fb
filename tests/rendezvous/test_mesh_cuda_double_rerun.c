/* A run started again under the same job name at once, over what a crashed run left (a launcher
 * requeuing a job under $SLURM_JOB_ID): index 0 of the new run finds the job directory there and
 * refuses it; every other process of the new run must answer the same status and message, never
 * the old run's outcome taken as its own, a message of its own, or a wait. Real processes, a real
 * directory. */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>

#include "mesh_processes.h"

static member_t members[3];

/* A new run of 3 under `job`: every process answers index 0's refusal, word for word, at once. */
static void check_rerun_refused(const char *job) {
    struct timespec started, ended;
    members_fill(members, 3, job, 1, 30);
    clock_gettime(CLOCK_MONOTONIC, &started);
    members_start(members, 3);
    members_finish(members, 3);
    clock_gettime(CLOCK_MONOTONIC, &ended);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "job directory exists already");
    CHECK_MESSAGE(members[0], job);
    for (size_t i = 1; i < 3; i++) {
        if (members[i].status != UFORM_STATUS_INVALID_ARGUMENT || strcmp(members[i].message, members[0].message))
            TEST_FAIL_("index %zu answers %s \"%s\", index 0 \"%s\"", i, uform_status_name(members[i].status),
                       members[i].message, members[0].message);
    }
    if (ended.tv_sec - started.tv_sec > 20) TEST_FAIL_("the new run took %lld s: someone waited out its timeout",
                                                       (long long)(ended.tv_sec - started.tv_sec));
}

int main(void) {
    make_mesh_directory();
    char path[1024];

    /* A run whose index 0 is killed after the outcome, as it cleans up: index 1 has read the
     * outcome (OK) and left; the run file, the roster and the outcome stay. */
    members_fill(members, 2, "requeued", 1, 30);
    members[0].signal_at = "clean-up";
    members_start(members, 2);
    member_finish(&members[1]); /* gone before index 0 dies: it leaves the files to index 0 */
    member_signal(&members[0], SIGKILL);
    member_finish(&members[0]);
    CHECK_OK(members[1].status);
    CHECK(!job_gone("requeued"));
    check_rerun_refused("requeued");
    CHECK(!job_gone("requeued")); /* the leftovers are the user's to remove: nobody joined them */
    snprintf(path, sizeof path, "%s/requeued", mesh_directory);
    remove_mesh_directory_entry(path);
    snprintf(path, sizeof path, "%s/go.requeued", mesh_directory);
    CHECK(unlink(path) == 0); /* member_signal's */

    /* The job name is free again: a new run under it forms. */
    check_run_forms(members, 3, "requeued");

    /* A run that formed and died with its index 0 on another host, a moment ago (within its
     * timeout, so its age says nothing): a run file and a roster. */
    snprintf(path, sizeof path, "%s/crashed", mesh_directory);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/crashed/run", mesh_directory);
    char run[512];
    run_file_text(run, sizeof run, 3, "crashed-host", 30000, "");
    write_file(path, run);
    snprintf(path, sizeof path, "%s/crashed/roster", mesh_directory);
    write_file(path, "uform-mesh-roster 3\nnonce=0123456789abcdef0123456789abcdef\nstatus=0\nmessage=\ncount=3\n"
                     "gpus=1\ngpu_class=3\nmultimem=1\nmulticast=0\nnccl=none\n");
    check_rerun_refused("crashed");
    CHECK_MESSAGE(members[0], "crashed-host");
    char left[1024];
    job_left("crashed", left, sizeof left);
    if (strcmp(left, "roster run")) TEST_FAIL_("the new run changed the leftovers: \"%s\"", left);
    snprintf(path, sizeof path, "%s/crashed", mesh_directory);
    remove_mesh_directory_entry(path);

    /* A run that never formed (index 1 never came: index 0 timed out) and whose index 0 was
     * killed as it cleaned up, a while ago: a run file and an outcome, no roster, the outcome
     * older than the grace its index 0 gave stragglers. (Within that grace an outcome is the
     * verdict a straggler of that run answers: test_mesh_cuda_double_stragglers.) */
    members_fill(members, 2, "timed-out", 1, 1);
    members[0].signal_at = "clean-up";
    members_start(members, 1);
    member_signal(&members[0], SIGKILL);
    member_finish(&members[0]);
    snprintf(path, sizeof path, "%s/go.timed-out", mesh_directory);
    CHECK(unlink(path) == 0);
    snprintf(path, sizeof path, "%s/timed-out/outcome", mesh_directory);
    struct timespec a_minute_ago[2];
    clock_gettime(CLOCK_REALTIME, &a_minute_ago[0]);
    a_minute_ago[0].tv_sec -= 60;
    a_minute_ago[1] = a_minute_ago[0];
    CHECK(utimensat(AT_FDCWD, path, a_minute_ago, 0) == 0);
    check_rerun_refused("timed-out");
    job_left("timed-out", left, sizeof left);
    if (strcmp(left, "outcome run")) TEST_FAIL_("the new run changed the leftovers: \"%s\"", left);
    snprintf(path, sizeof path, "%s/timed-out", mesh_directory);
    remove_mesh_directory_entry(path);

    CHECK(rmdir(mesh_directory) == 0); /* nothing left behind */
    TEST_DONE();
}
