/* One outcome when one follower fails on its own, after it has read the run file: its failure is
 * the run's verdict, proposed and answered by every process (the same status and message), never
 * its answer alone while the others wait out their timeouts for it.
 *   - Its facts cannot be written: fsync answers EIO once (a soft NFS mount, a full disk), as the
 *     test executable's own fsync makes it (it interposes libc's for the static library).
 *   - The run file is of another format version: both followers refuse it, and index 0 learns
 *     the refusal from the outcome.
 * Before it has the run file a follower knows no run to tell, so an I/O error opening or reading
 * the run file is asked again until its deadline: one failed open of it still forms the run. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "mesh_processes.h"

static int fail_fsync;    /* in a member: its next fsync answers EIO */
static int fail_run_open; /* inherited by every member: index 1's first open of "run" answers EIO */

/* wasm32 builds compile this test but never run it (it loads the CUDA double). */
#ifndef __EMSCRIPTEN__
int fsync(int fd) {
    if (fail_fsync) {
        fail_fsync = 0;
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

int openat(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list args;
        va_start(args, flags);
        mode = (mode_t)va_arg(args, int);
        va_end(args);
    }
    if (fail_run_open && member_self && member_self->index == 1 && !strcmp(path, "run")) {
        fail_run_open = 0;
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}
#endif

/* The rendezvous's step hook: index 1 arms the failing fsync once it has read the run file. */
static void arm_fsync(const char *directory, const char *job, uint64_t index, const char *step) {
    (void)directory, (void)job;
    if (index == 1 && !strcmp(step, "facts")) fail_fsync = 1;
}

static member_t members[3];

/* Every member answered `status`, all with the first one's message, which names `phrase`; and
 * nothing is left of the job. */
static void all_answer(const char *job, uform_status_t status, const char *phrase) {
    for (size_t i = 0; i < 3; i++) {
        if (members[i].status != status)
            TEST_FAIL_("%s: index %zu answered %s (%s), expected %s", job, i, uform_status_name(members[i].status),
                       members[i].message, uform_status_name(status));
        if (strcmp(members[i].message, members[0].message))
            TEST_FAIL_("%s: index %zu says \"%s\", index 0 \"%s\"", job, i, members[i].message, members[0].message);
        if (phrase) CHECK_MESSAGE(members[i], phrase);
    }
    char left[1024];
    job_left(job, left, sizeof left);
    if (left[0]) TEST_FAIL_("%s: left in the job directory: %s", job, left);
    CHECK(job_gone(job));
}

/* Rewrites index 0's run file (once it exists) as a file of format version 2, otherwise the same. */
static void downgrade_run_file(const char *job) {
    char path[1024], temporary[1024], text[4096];
    snprintf(path, sizeof path, "%s/%s/run", mesh_directory, job);
    snprintf(temporary, sizeof temporary, "%s/%s/run.new", mesh_directory, job);
    struct stat info;
    for (int waited_ms = 0; lstat(path, &info) != 0 && waited_ms < 10000; waited_ms++) usleep(1000);
    FILE *file = fopen(path, "r");
    CHECK(file != NULL);
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = 0;
    CHECK(!strncmp(text, "uform-mesh-run ", 15));
    text[15] = '2';
    file = fopen(temporary, "w");
    CHECK(file != NULL);
    fwrite(text, 1, length, file);
    fclose(file);
    CHECK(rename(temporary, path) == 0);
}

int main(void) {
    make_mesh_directory();

    uform__test_mesh_step = arm_fsync; /* every member inherits it: only index 1 arms */
    members_fill(members, 3, "facts-unwritten", 1, 2);
    members_start(members, 3);
    members_finish(members, 3);
    all_answer("facts-unwritten", UFORM_STATUS_IO_ERROR, "index 1 (host");
    CHECK_MESSAGE(members[0], "cannot publish its facts");
    uform__test_mesh_step = NULL;

    members_fill(members, 3, "run-version", 1, 2);
    members_start(&members[0], 1);
    downgrade_run_file("run-version");
    members_start(&members[1], 2);
    members_finish(members, 3);
    all_answer("run-version", UFORM_STATUS_MISMATCH, "run file format version 2");
    CHECK_MESSAGE(members[0], "reads version 3");

    fail_run_open = 1;
    members_fill(members, 3, "run-unread-once", 1, 2);
    members_start(members, 3);
    members_finish(members, 3);
    for (size_t i = 0; i < 3; i++) CHECK_OK(members[i].status);
    CHECK(job_gone("run-unread-once"));
    fail_run_open = 0;

    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
