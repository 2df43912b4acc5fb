/* fork() inside a device function (on the calling thread, device 0) and inside a staged copy's
 * progress callback, against the CUDA driver test double. vram.h: in a fork()ed child the
 * verbs answer FORKED and never call the driver, whose stream threads do not exist there; a
 * synchronous call whose calling thread forked returns FORKED at once. The child arms alarm(5)
 * and reports its status through its exit code: a child that went on into the driver (to wait
 * for a stream or an event no thread will ever complete) hangs and dies of SIGALRM. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vram_double.h"

static cuda_double_t cu;
static pid_t child = -1;
static int in_child;

/* Keeps device 0's stream busy past the fork: the child would wait on it forever. */
static void busy(void *argument) {
    (void)argument;
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static void fork_once(void) {
    if (in_child || child > 0) return;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        in_child = 1;
        alarm(5);
    } else {
        child = pid;
    }
}

static uform_status_t fork_in_function(void *context, const uform_device_slot_t *slot) {
    (void)context;
    if (slot->device != 0) return UFORM_STATUS_OK;
    CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, busy, NULL), UFORM_CUDA_SUCCESS);
    fork_once();
    return UFORM_STATUS_OK;
}

static void fork_in_progress(void *context, size_t done, size_t total) {
    (void)context, (void)done, (void)total;
    fork_once();
}

/* In the child: exit 0 for FORKED, 20 + the status otherwise. In the parent: that exit. */
static void settle(uform_status_t status, const char *what) {
    if (in_child) _exit(status == UFORM_STATUS_FORKED ? 0 : 20 + (int)status);
    int wait_status = 0;
    CHECK(waitpid(child, &wait_status, 0) == child);
    if (WIFSIGNALED(wait_status))
        TEST_FAIL_("%s: the child died of signal %d (it went on into the driver and hung)", what,
                   WTERMSIG(wait_status));
    if (WEXITSTATUS(wait_status) != 0)
        TEST_FAIL_("%s: the child's call answered %s, not FORKED", what,
                   uform_status_name((uform_status_t)(WEXITSTATUS(wait_status) - 20)));
    child = -1;
}

int main(void) {
    setenv("UFORM_STAGING_CHUNK_BYTES", "4096", 1); /* many chunks: the progress fires mid-copy */
    cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);

    /* A device function forks: the parent's call completes; the child's answers FORKED. */
    uform_status_t status = uform_executor_for_devices(executor, NULL, fork_in_function, NULL);
    settle(status, "fork in a device function");
    CHECK_OK(status);

    /* A staged copy's progress callback forks after the first chunk (4 KiB chunks, 64 KiB). */
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    void *target = NULL;
    CHECK_OK(uform_arena_allocate(arena, 64 * 1024, 0, &target));
    static unsigned char host[64 * 1024], back[64 * 1024];
    fill(host, sizeof host, 7);
    uform_call_t call = UFORM_CALL_INIT;
    call.progress = fork_in_progress;
    status = uform_executor_copy_to_device(executor, &call, 0, target, host, sizeof host);
    settle(status, "fork in a copy's progress");
    CHECK_OK(status);
    /* The parent's copy is whole. */
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, target, sizeof back));
    CHECK_EQ_INT((int)first_mismatch(back, sizeof back, 7), (int)sizeof back);

    /* The same for the copy back. */
    status = uform_executor_copy_to_host(executor, &call, back, 0, target, sizeof back);
    settle(status, "fork in a copy back's progress");
    CHECK_OK(status);

    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
