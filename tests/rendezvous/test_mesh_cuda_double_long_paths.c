/* A directory path of 633 bytes: every refusal still reads its reason first, whole, inside the
 * last error's 512 bytes (the path shortened in the middle): the job directory existing already,
 * being a symbolic link, a missing directory. */
#include "mesh_processes.h"

static member_t members[2];

static void check_fits(const member_t *m, const char *reason) {
    CHECK_MESSAGE(*m, reason);
    CHECK_MESSAGE(*m, "...");               /* the path, shortened in the middle */
    CHECK_MESSAGE(*m, "/uform-mesh-test-"); /* its head says where */
    if (strlen(m->message) >= 511) TEST_FAIL_("the message fills the last error: %s", m->message);
}

int main(void) {
    make_mesh_directory();
    char top[256];
    snprintf(top, sizeof top, "%s", mesh_directory);
    /* 6 components of 100 bytes under the test's directory: 633 bytes in all with it. */
    char path[1024];
    snprintf(path, sizeof path, "%s", top);
    while (strlen(path) + 101 < 633) {
        size_t length = strlen(path);
        path[length] = '/';
        memset(path + length + 1, 'd', 100);
        path[length + 101] = 0;
        CHECK(mkdir(path, 0700) == 0);
    }
    size_t length = strlen(path);
    path[length] = '/';
    memset(path + length + 1, 'e', 632 - length);
    path[633] = 0;
    CHECK(mkdir(path, 0700) == 0);
    CHECK(strlen(path) == 633);
    mesh_directory_override = path;

    /* The job directory exists already (index 0). */
    char job[1100];
    snprintf(job, sizeof job, "%s/exists", path);
    CHECK(mkdir(job, 0700) == 0);
    members_fill(members, 2, "exists", 1, 2);
    members_start(members, 1);
    members_finish(members, 1);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    check_fits(&members[0], "job directory exists already: ");
    CHECK(rmdir(job) == 0);

    /* The job directory is a symbolic link (index 1). */
    snprintf(job, sizeof job, "%s/linked", path);
    CHECK(symlink("/tmp", job) == 0);
    members_fill(members, 2, "linked", 1, 2);
    members_start(&members[1], 1);
    members_finish(&members[1], 1);
    CHECK_STATUS(members[1].status, UFORM_STATUS_INVALID_ARGUMENT);
    check_fits(&members[1], "job directory is a symbolic link, not a directory: ");
    CHECK(unlink(job) == 0);

    /* A directory that does not exist: the reason (errno's) still ends the message. */
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/missing", path);
    mesh_directory_override = missing;
    members_fill(members, 2, "job", 1, 2);
    members_start(members, 1);
    members_finish(members, 1);
    CHECK_STATUS(members[0].status, UFORM_STATUS_NOT_FOUND);
    check_fits(&members[0], "No such file or directory");

    mesh_directory_override = NULL;
    remove_mesh_directory();
    TEST_DONE();
}
