/* A roster a follower cannot use: truncated, corrupted (one bit), or of another format version.
 * Index 0 damages it right after writing it, while the others wait (the step hook); each follower
 * finds it out, proposes that as the run's verdict, and every process (index 0 too) answers the
 * same: IO_ERROR naming the file, or MISMATCH naming both versions. Nobody acknowledges what it
 * could not read, and nothing is left in the directory.
 *
 * Each damage comes twice: with the followers held once their facts are checked ("published"),
 * and with index 1 held between writing its facts and looking for leftovers ("checking"), so that
 * the damaged roster is what that look finds. A damaged nonce ("nonce") read as another run's
 * there made index 1 answer INVALID_ARGUMENT alone, and so did a roster the test rewrote in
 * place, caught empty (about 1 run in 200, before the look checked the roster's seal). */
#include "mesh_processes.h"

static member_t members[3];

/* `phrase2` NULL: the message names the roster's path. */
static void damaged_seen_at(const char *damage, const char *index_one_at, uform_status_t expected,
                            const char *phrase, const char *phrase2) {
    char job[64], marker[96], path_phrase[96];
    snprintf(job, sizeof job, "roster-%s-%s", damage, index_one_at);
    snprintf(path_phrase, sizeof path_phrase, "/%s/roster", job);
    if (!phrase2) phrase2 = path_phrase;
    snprintf(marker, sizeof marker, "../damaged.%s", job);
    members_fill(members, 3, job, 1, 3);
    members[0].damage = damage;
    for (size_t i = 1; i < 3; i++) {
        members[i].holds[0].at = i == 1 ? index_one_at : "published";
        members[i].holds[0].until = marker;
    }
    if (!strcmp(index_one_at, "checking")) {
        /* Index 2 waits until index 1 has answered and left (its facts gone): otherwise index 2
         * could propose the verdict first, and index 1 would only answer it, never judging the
         * damaged roster in its look for leftovers. */
        members[2].holds[1].at = "published";
        members[2].holds[1].until = "!facts.1";
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

static void damaged(const char *damage, uform_status_t expected, const char *phrase, const char *phrase2) {
    damaged_seen_at(damage, "published", expected, phrase, phrase2);
    damaged_seen_at(damage, "checking", expected, phrase, phrase2);
}

int main(void) {
    make_mesh_directory();
    damaged("truncate", UFORM_STATUS_IO_ERROR, "roster unreadable", NULL);
    damaged("corrupt", UFORM_STATUS_IO_ERROR, "roster unreadable", NULL);
    damaged("nonce", UFORM_STATUS_IO_ERROR, "roster unreadable", NULL);
    damaged("version", UFORM_STATUS_MISMATCH, "roster format version 4", "reads version 3");
    CHECK(rmdir(mesh_directory) == 0); /* nothing left behind */
    TEST_DONE();
}
