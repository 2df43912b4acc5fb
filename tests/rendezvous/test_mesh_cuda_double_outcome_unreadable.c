/* The outcome's name taken by a file nobody can read (damaged, or of another format) just as
 * index 0 proposes OK: its exclusive write loses, and what holds the name says nothing. The
 * followers answer that they cannot read the outcome; index 0 must not answer OK alone (a run
 * whose index 0 goes on into NCCL while the others have failed is split), so every process
 * answers a failure. */
#include "mesh_processes.h"

static member_t members[3];

int main(void) {
    make_mesh_directory();
    members_fill(members, 3, "outcome-unreadable", 1, 3);
    members[0].damage = "outcome";
    members_start(members, 3);
    members_finish(members, 3);
    for (size_t i = 0; i < 3; i++) {
        if (members[i].status == UFORM_STATUS_OK)
            TEST_FAIL_("index %zu answered OK while the outcome is unreadable", i);
        CHECK_MESSAGE(members[i], "outcome");
    }
    CHECK_EQ_INT(members[0].status, UFORM_STATUS_IO_ERROR);
    CHECK_MESSAGE(members[0], "no process answers OK");
    CHECK_MESSAGE(members[1], "outcome unreadable");
    CHECK(job_gone("outcome-unreadable")); /* and a rerun under the name can form */
    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
