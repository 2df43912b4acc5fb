/* No decision compares two hosts' clocks: index 1's CLOCK_REALTIME is an hour ahead (clock_gettime
 * interposed by the test executable, as an LD_PRELOAD would, for that process alone). Index 0
 * waits 4 s (10 s under an emulator) for index 2, which comes at 2.5 s; index 1's own timeout is 1 s, so it must keep
 * waiting as long as index 0 does, which it learns from the run file's age by the file system's
 * clock. A wall-clock deadline of index 0's, compared with index 1's clock, would have it give
 * up at 2 s and end the run for all. A clock an hour behind is tried too. */
#include <sys/syscall.h>
#include <time.h>

#include "mesh_processes.h"

#ifndef __EMSCRIPTEN__
int clock_gettime(clockid_t clock, struct timespec *now) {
    int result = (int)syscall(SYS_clock_gettime, clock, now);
    if (result == 0 && clock == CLOCK_REALTIME) now->tv_sec += member_realtime_skew;
    return result;
}
#endif /* wasm32 builds compile this test but never run it (it loads the CUDA double:
        * scripts/test-wasm), and Emscripten has no raw clock_gettime system call */

static member_t members[3];

/* Index 0's wait: 4 s natively; under an emulator shared with other tests, starting three
 * emulated processes once took index 2 past 4 s (aarch64 CI run), so 10 s there. Index 1's 1 s
 * and index 2's 2.5 s, which the test is about, stay as they are. */
static double first_wait(void) {
    const char *emulator = getenv("UFORM_TEST_EMULATOR");
    return emulator && *emulator ? 10 : 4;
}

static void skewed(const char *job, long skew) {
    members_fill(members, 3, job, 1, first_wait());
    members[1].timeout = 1;
    members[1].realtime_skew = skew;
    members[2].delay = 2.5;
    members_start(members, 3);
    members_finish(members, 3);
    for (size_t i = 0; i < 3; i++)
        if (members[i].status != UFORM_STATUS_OK)
            TEST_FAIL_("%s: index %zu answered %s: %s", job, i, uform_status_name(members[i].status),
                       members[i].message);
    CHECK(job_gone(job));
}

int main(void) {
    make_mesh_directory();
    skewed("ahead", 3600);
    skewed("behind", -3600);
    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
