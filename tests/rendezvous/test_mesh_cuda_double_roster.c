/* A roster a follower cannot use: truncated, corrupted (one bit), or of another format version.
 * Index 0 damages it right after writing it, while the others wait (the step hook); each follower
 * finds it out, proposes that as the run's verdict, and every process (index 0 too) answers the
 * same: IO_ERROR naming the file, or MISMATCH naming both versions. Nobody acknowledges what it
 * could not read, and nothing is left in the directory. */
#include "mesh_processes.h"

static member_t members[3];

static void damaged(const char *damage, uform_status_t expected, const char *phrase, const char *phrase2) {
    char job[64], marker[96];
    snprintf(job, sizeof job, "roster-%s", damage);
    snprintf(marker, sizeof marker, "../damaged.%s", job);
    members_fill(members, 3, job, 1, 3);
    members[0].damage = damage;
    for (size_t i = 1; i < 3; i++) {
        members[i].holds[0].at = "published";
        members[i].holds[0].until = marker;
    }
    members_start(members, 3);
    members_finish(members, 3);
    for (size_t i = 0; i < 3; i++) {
        if (members[i].status != expected)
            TEST_FAIL_("%s: index %zu answered %s: %s", damage, i, uform_status_name(members[i].status),
                       members[i].message);
        CHECK_MESSAGE(members[i], phrase);
        CHECK_MESSAGE(members[i], phrase2);
        if (strcmp(members[i].message, members[0].message))
            TEST_FAIL_("%s: index %zu says \"%s\", index 0 \"%s\"", damage, i, members[i].message, members[0].message);
    }
    CHECK(job_gone(job));
    char path[1024];
    snprintf(path, sizeof path, "%s/damaged.%s", mesh_directory, job);
    CHECK(unlink(path) == 0);
}

int main(void) {
    make_mesh_directory();
    damaged("truncate", UFORM_STATUS_IO_ERROR, "roster unreadable", "/roster-truncate/roster");
    damaged("corrupt", UFORM_STATUS_IO_ERROR, "roster unreadable", "/roster-corrupt/roster");
    damaged("version", UFORM_STATUS_MISMATCH, "roster format version 4", "reads version 3");
    CHECK(rmdir(mesh_directory) == 0); /* nothing left behind */
    TEST_DONE();
}
