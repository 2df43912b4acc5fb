/* A follower cancelled as the run ends: its cancel is seen in a wait for the outcome, and the
 * outcome (OK) was written by index 0 in the meantime. It answers that outcome, as every other
 * process does, not INTERRUPTED on its own. Without an outcome it proposes INTERRUPTED naming
 * itself, and that is the run's. The follower's answering half (mesh_follow.h) is driven here
 * directly in one process, over a real job directory, since the window between its last look
 * for the outcome and its look at the cancel flag is too narrow for processes to hit at will. */
#include "mesh/mesh_follow.h"
#include "mesh_processes.h"
#include "platform/platform.h"

/* A follower of index 1 in a job `job` of mesh_directory, with the nonce of a run that index 0's
 * OK (when `decided`) already ended: no run file (index 0 left), its roster taken. */
static uform_status_t cancelled_follower(const char *job, bool decided, char *message, size_t capacity) {
    static const volatile int cancel = 1;
    bool existed = false;
    uform__mesh_session_t s = {.directory = mesh_directory,
                               .job = job,
                               .verb = "test",
                               .host = "h",
                               .timeout_seconds = 1,
                               .cancel = &cancel,
                               .job_fd = -1};
    CHECK_OK(uform__mesh_open_job(mesh_directory, job, true, &existed, &s.job_fd, NULL, "test"));
    CHECK(!existed && s.job_fd >= 0);
    s.deadline_ns = uform__now_ns() + 1000000000u;
    uform__mesh_make_nonce(s.nonce);
    uform__mesh_facts_t mine = {.index = 1, .count = 2, .host = "h", .pid = (uint64_t)getpid()};
    uform__mesh_identity(&mine);
    follower_t f = {.s = &s, .mine = &mine, .has_roster = true};
    uform__mesh_facts_name(1, f.facts, sizeof f.facts);
    uform__mesh_took_name(1, f.took, sizeof f.took);
    if (decided) CHECK_OK(uform__mesh_decide(&s, 0, UFORM_STATUS_OK, "", NULL, 0));
    uform_status_t status = uform__follow_interrupted(&f);
    snprintf(message, capacity, "%s", status == UFORM_STATUS_OK ? "" : uform_last_error());
    close(s.job_fd);
    return status;
}

int main(void) {
    make_mesh_directory();
    char message[1024];
    CHECK_OK(cancelled_follower("decided", true, message, sizeof message));
    CHECK(job_gone("decided")); /* the last one out of an ended run removes the rest */

    CHECK_STATUS(cancelled_follower("undecided", false, message, sizeof message), UFORM_STATUS_INTERRUPTED);
    if (!strstr(message, "index 1 (host h") || !strstr(message, "was interrupted"))
        TEST_FAIL_("the message \"%s\" does not name index 1 interrupted", message);
    CHECK(job_gone("undecided"));
    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
