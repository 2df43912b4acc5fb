/* fork(): an executor inherited by the child answers FORKED instead of deadlocking on
 * threads that don't exist there; the child can make and use executors of its own; the
 * parent's executor is unaffected. */
#include <sys/wait.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "test.h"

static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

static uform_deferred_t *unfinished; /* queued behind a gated call when fork() happens */
static _Atomic int gate_open_flag;
static uform_status_t wait_for_flag(void *context, size_t task, size_t thread) {
    while (!atomic_load(&gate_open_flag)) sched_yield();
    return UFORM_STATUS_OK;
}

static int child(uform_executor_t *inherited) {
    alarm(20); /* a deadlock would be a hang: fail the child instead */
    if (uform_executor_for_n(inherited, NULL, 100, nothing, NULL) != UFORM_STATUS_FORKED) return 10;
    uform_call_t call = UFORM_CALL_INIT;
    uform_deferred_t *deferred = NULL;
    call.deferred = &deferred;
    if (uform_executor_for_n(inherited, &call, 100, nothing, NULL) != UFORM_STATUS_FORKED) return 11;
    if (uform_executor_drain(inherited, UFORM_MOOD_PARKED) != UFORM_STATUS_FORKED) return 12;
    /* A handle of the parent's that never finishes here: waits answer, free doesn't hang. */
    if (uform_deferred_poll(unfinished) != UFORM_STATUS_TIMEOUT) return 19;
    if (uform_deferred_wait(unfinished, -1) != UFORM_STATUS_FORKED) return 20;
    uform_deferred_free(unfinished);
    if (!strstr(uform_last_error(), "fork")) return 13;
    uform_arena_t *arena = NULL;
    if (uform_arena_new_in(inherited, 4096, &arena) != UFORM_STATUS_FORKED) return 14;
    uform_executor_t *own = NULL;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    /* The sanitizer runtimes cannot be trusted with new threads in the child of a
     * multi-threaded process: TSan exits 66, and ASan's allocator can be left locked (seen: the
     * child's new threads stuck in the quarantine's size-class mutex). The plain build runs it. */
    if (uform_executor_free(inherited) != UFORM_STATUS_FORKED) return 18;
    return 0;
#endif
    /* qemu-user cannot start a thread in the child of a multi-threaded process (7.2 aborts on
     * an assertion in its vCPU setup): under emulation the child stops here, the rest runs. */
    if (getenv("UFORM_TEST_EMULATOR")) {
        fprintf(stderr, "SKIPPED under %s: new threads in a forked child (a qemu-user limit)\n",
                getenv("UFORM_TEST_EMULATOR"));
        if (uform_executor_free(inherited) != UFORM_STATUS_FORKED) return 18;
        return 0;
    }
    if (uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &own) != UFORM_STATUS_OK) return 15;
    if (uform_executor_for_n(own, NULL, 1000, nothing, NULL) != UFORM_STATUS_OK) return 16;
    if (uform_executor_free(own) != UFORM_STATUS_OK) return 17;
    if (uform_executor_free(inherited) != UFORM_STATUS_FORKED) return 18; /* memory released */
    return 0;
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING)); /* workers busy-polling at fork time */
    CHECK_OK(uform_executor_for_n(executor, NULL, 1000, nothing, NULL));
    uform_deferred_t *gated = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &gated;
    CHECK_OK(uform_executor_for_n(executor, &call, 1, wait_for_flag, NULL));
    call.deferred = &unfinished;
    CHECK_OK(uform_executor_for_n(executor, &call, 1, nothing, NULL));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(child(executor));
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status)) TEST_FAIL_("the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
    atomic_store(&gate_open_flag, 1);
    CHECK_OK(uform_deferred_wait(gated, -1));
    CHECK_OK(uform_deferred_wait(unfinished, -1));
    uform_deferred_free(gated);
    uform_deferred_free(unfinished);
    CHECK_OK(uform_executor_for_n(executor, NULL, 1000, nothing, NULL));
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
