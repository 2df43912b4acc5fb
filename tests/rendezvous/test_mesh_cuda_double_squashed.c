/* The job directory's owner, as an NFS export with root_squash or all_squash reports it: the
 * directory index 0 makes belongs to nobody (65534), not to its euid. The run forms all the same
 * and leaves nothing; a directory there before the run, whose owner is not the one the run file
 * records, is still refused, by every process in the same words, and nothing is written into it.
 * The test executable's fstat (it interposes libc's for the static library) reports uid 65534
 * for the directories named below. Real processes, a real directory. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "mesh_processes.h"

static member_t members[3];

/* wasm32 builds compile this test but never run it (it loads the CUDA double). */
#ifndef __EMSCRIPTEN__
static bool squashed(int fd) {
    char link[64], path[1024];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length <= 0) return false;
    path[length] = 0;
    const char *name = strrchr(path, '/');
    return name && (!strcmp(name, "/squashed") || !strcmp(name, "/planted") || !strcmp(name, "/planted-run"));
}

int fstat(int fd, struct stat *info) {
    int result = fstatat(fd, "", info, AT_EMPTY_PATH);
    if (result == 0 && S_ISDIR(info->st_mode) && squashed(fd)) info->st_uid = 65534;
    return result;
}
#endif

/* Every process answers index 0's refusal of `job`, word for word; nothing was written in it. */
static void check_refused(const char *job, const char *left_expected) {
    members_fill(members, 3, job, 1, 2);
    members_start(members, 3);
    members_finish(members, 3);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "exists already");
    for (size_t i = 1; i < 3; i++)
        if (members[i].status != UFORM_STATUS_INVALID_ARGUMENT || strcmp(members[i].message, members[0].message))
            TEST_FAIL_("index %zu answers %s \"%s\", index 0 \"%s\"", i, uform_status_name(members[i].status),
                       members[i].message, members[0].message);
    char left[1024];
    job_left(job, left, sizeof left);
    if (strcmp(left, left_expected)) TEST_FAIL_("%s holds \"%s\", not \"%s\"", job, left, left_expected);
}

int main(void) {
    make_mesh_directory();
    char path[1024];

    /* Index 0 makes the directory; the file system says nobody owns it: the run forms. */
    check_run_forms(members, 3, "squashed");

    /* A directory of nobody's, there before the run, empty: planted, not index 0's. */
    snprintf(path, sizeof path, "%s/planted", mesh_directory);
    CHECK(mkdir(path, 0700) == 0);
    check_refused("planted", "");
    CHECK(rmdir(path) == 0);

    /* The same with a run file that records another owner (this user): still not index 0's. */
    snprintf(path, sizeof path, "%s/planted-run", mesh_directory);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/planted-run/run", mesh_directory);
    char owner[64], text[512];
    snprintf(owner, sizeof owner, "owner=%u\n", (unsigned)geteuid());
    run_file_text(text, sizeof text, 3, "planter", 30000, owner);
    write_file(path, text);
    check_refused("planted-run", "run");
    CHECK_MESSAGE(members[0], "planter");
    snprintf(path, sizeof path, "%s/planted-run", mesh_directory);
    remove_mesh_directory_entry(path);

    CHECK(rmdir(mesh_directory) == 0); /* nothing left behind */
    TEST_DONE();
}
