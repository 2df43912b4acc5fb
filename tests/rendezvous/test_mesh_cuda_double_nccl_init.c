/* The NCCL hand-off is bounded: three processes form a mesh over the NCCL double, whose ranks
 * meet across processes (UFORM_NCCL_DOUBLE_RENDEZVOUS) as NCCL's bootstrap does, and index 2's
 * process dies inside its initialisation (`fault init_dies=2`). The double, like NCCL, never
 * notices: the survivors' non-blocking initialisations stay in progress, and uform's poll against
 * the run's deadline ends them: both answer TIMEOUT naming "NCCL init" and their unfinished rank,
 * within the timeout, having aborted their communicators (the double's log: an abort for ranks 0
 * and 1, no init). The same run with every process alive forms, on the non-blocking path and on
 * the blocking path of an NCCL older than 2.14 (version 21300). A cancel during the wait for
 * NCCL ends it too (INTERRUPTED, "NCCL init cancelled"). */
#include <time.h>

#include "mesh_processes.h"
#include "nccl/nccl_double.h"

static member_t members[3];
static char place[512], log_path[600];
static nccl_log_line_t lines[32];

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void run(const char *job, const char *config, const char *config_2) {
    members_fill(members, 3, job, 1, 2);
    for (size_t i = 0; i < 3; i++) {
        members[i].nccl_library = UFORM_TEST_NCCL_DOUBLE;
        members[i].nccl_config = i == 2 && config_2 ? config_2 : config;
    }
    unlink(log_path);
    members_start(members, 3);
    members_finish(members, 3);
}

int main(void) {
    make_mesh_directory();
    snprintf(place, sizeof place, "%s/nccl", mesh_directory);
    CHECK(mkdir(place, 0700) == 0);
    snprintf(log_path, sizeof log_path, "%s/nccl.log", mesh_directory);
    setenv("UFORM_NCCL_DOUBLE_RENDEZVOUS", place, 1);
    setenv("UFORM_NCCL_DOUBLE_LOG", log_path, 1);

    double start = now_seconds();
    run("dies", NULL, "fault init_dies=2");
    double elapsed = now_seconds() - start;
    CHECK_STATUS(members[2].status, (uform_status_t)-1); /* it died inside ncclCommInitRankConfig */
    for (size_t i = 0; i < 2; i++) {
        CHECK_STATUS(members[i].status, UFORM_STATUS_TIMEOUT);
        CHECK_MESSAGE(members[i], "NCCL init did not finish within 2 s");
        char rank[64];
        snprintf(rank, sizeof rank, "ranks %zu of 3 never finished", i);
        CHECK_MESSAGE(members[i], rank);
    }
    if (elapsed > 15) TEST_FAIL_("the survivors answered after %.1f s", elapsed);
    size_t count = nccl_log_read(log_path, lines, 32);
    CHECK_EQ_INT(count, 2);
    for (size_t i = 0; i < count; i++) {
        CHECK_EQ_STR(lines[i].kind, "destroy");
        CHECK(lines[i].aborted);
        CHECK(lines[i].rank == 0 || lines[i].rank == 1);
    }
    CHECK(lines[0].rank != lines[1].rank);
    CHECK(job_gone("dies"));

    /* The wait for NCCL's initialisation looks at the cancel flag too: index 0 cancels 1 s in
     * (its timeout is 30 s), while index 2 has died inside init again. */
    members_fill(members, 3, "cancelled", 1, 2);
    for (size_t i = 0; i < 3; i++) members[i].nccl_library = UFORM_TEST_NCCL_DOUBLE;
    members[2].nccl_config = "fault init_dies=2";
    members[0].timeout = 30;
    members[0].cancel_after = 1.0;
    unlink(log_path);
    start = now_seconds();
    members_start(members, 3);
    member_finish(&members[0]);
    elapsed = now_seconds() - start;
    member_finish(&members[1]);
    member_finish(&members[2]);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INTERRUPTED);
    CHECK_MESSAGE(members[0], "NCCL init cancelled");
    if (elapsed > 10) TEST_FAIL_("index 0 cancelled at 1 s answered at %.1f s", elapsed);
    CHECK_STATUS(members[1].status, UFORM_STATUS_TIMEOUT);
    CHECK_MESSAGE(members[1], "NCCL init did not finish");
    CHECK(job_gone("cancelled"));

    static const char *const configs[] = {NULL, "version 21300"};
    for (size_t c = 0; c < 2; c++) {
        char job[32];
        snprintf(job, sizeof job, "alive-%zu", c);
        run(job, configs[c], NULL);
        for (size_t i = 0; i < 3; i++) CHECK_OK(members[i].status);
        count = nccl_log_read(log_path, lines, 32);
        CHECK_EQ_INT(count, 6); /* three inits, three destroys at free */
        size_t inits = 0;
        for (size_t i = 0; i < count; i++) inits += !strcmp(lines[i].kind, "init");
        CHECK_EQ_INT(inits, 3);
        CHECK(job_gone(job));
    }
    unlink(log_path);
    remove_mesh_directory();
    TEST_DONE();
}
