/* fork() inside a callback. The child holds one thread: the one that forked. If that is the
 * calling thread of a synchronous call, the call must return FORKED at once instead of waiting
 * for workers that do not exist in the child (it used to wait forever). If it is a worker or the
 * leader (a deferred call), there is no caller to return to in the child: the child ends with
 * exit status 87, as executor.h documents, instead of idling forever. The parent's call is
 * unaffected: every task runs exactly once there. Both moods, since SPINNING joiners never sleep
 * and must notice the fork while spinning. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define TASKS 64
#define FORKED_CHILD_EXIT 87 /* UFORM_FORKED_CHILD_EXIT_, as documented in executor.h */

typedef struct scene_t {
    size_t fork_at;            /* the task that forks */
    _Atomic pid_t child;       /* set in the parent */
    _Atomic int runs[TASKS];   /* parent's view: runs per task */
    bool in_child;             /* the child's copy: set after fork() returned 0 */
    _Atomic int after_fork_in_child; /* tasks the child ran after its fork (its copy) */
} scene_t;

static uform_status_t task(void *context, size_t i, size_t thread) {
    scene_t *scene = context;
    if (scene->in_child) {
        atomic_fetch_add(&scene->after_fork_in_child, 1);
        return UFORM_STATUS_OK;
    }
    atomic_fetch_add(&scene->runs[i], 1);
    if (i != scene->fork_at) return UFORM_STATUS_OK;
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20); /* a hang would be a child that never ends: SIGALRM fails it */
        scene->in_child = true;
        return UFORM_STATUS_OK; /* back into uform, in a process where only this thread exists */
    }
    atomic_store(&scene->child, pid);
    return UFORM_STATUS_OK;
}

static int wait_child(pid_t pid) {
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status)) TEST_FAIL_("the child died of signal %d (a hang ends in SIGALRM)",
                                       WIFSIGNALED(status) ? WTERMSIG(status) : -1);
    return WEXITSTATUS(status);
}

static void check_parent_runs(scene_t *scene) {
    for (size_t i = 0; i < TASKS; i++) CHECK_EQ_INT(scene->runs[i], 1);
}

/* The calling thread forks (task 0 is always on the synchronous caller's share). */
static void caller_forks(uform_executor_t *executor) {
    static scene_t scene;
    memset(&scene, 0, sizeof scene);
    scene.fork_at = 0;
    uform_status_t status = uform_executor_for_n(executor, NULL, TASKS, task, &scene);
    if (scene.in_child) {
        /* The child: the call came back at once, saying what happened. */
        _exit(status == UFORM_STATUS_FORKED && strstr(uform_last_error(), "fork") ? 0 : 3);
    }
    CHECK_OK(status);
    check_parent_runs(&scene);
    CHECK_EQ_INT(wait_child(scene.child), 0);
}

/* A worker forks: task TASKS-1 is in the last thread's static share. */
static void worker_forks(uform_executor_t *executor) {
    static scene_t scene;
    memset(&scene, 0, sizeof scene);
    scene.fork_at = TASKS - 1;
    uform_status_t status = uform_executor_for_n(executor, NULL, TASKS, task, &scene);
    if (scene.in_child) _exit(4); /* only if the caller itself forked (the share was stolen) */
    CHECK_OK(status);
    check_parent_runs(&scene);
    int code = wait_child(scene.child);
    CHECK(code == FORKED_CHILD_EXIT || code == 4);
}

/* The leader forks, running a deferred call as thread 0. */
static void leader_forks(uform_executor_t *executor) {
    static scene_t scene;
    memset(&scene, 0, sizeof scene);
    scene.fork_at = 0;
    uform_deferred_t *handle = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &handle;
    CHECK_OK(uform_executor_for_n(executor, &call, TASKS, task, &scene));
    CHECK_OK(uform_deferred_wait(handle, -1));
    uform_deferred_free(handle);
    check_parent_runs(&scene);
    CHECK_EQ_INT(wait_child(scene.child), FORKED_CHILD_EXIT);
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    uform_mood_t moods[2] = {UFORM_MOOD_PARKED, UFORM_MOOD_SPINNING};
    for (int m = 0; m < 2; m++) {
        CHECK_OK(uform_executor_drain(executor, moods[m]));
        for (int round = 0; round < 3; round++) {
            caller_forks(executor);
            worker_forks(executor);
            leader_forks(executor);
        }
    }
    /* The parent's executor is intact. */
    static scene_t plain;
    plain.fork_at = SIZE_MAX;
    CHECK_OK(uform_executor_for_n(executor, NULL, TASKS, task, &plain));
    check_parent_runs(&plain);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
