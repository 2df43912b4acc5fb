/* fork() inside a callback. The child holds one thread: the one that forked. If that is the
 * calling thread of a synchronous call, the call must return FORKED at once instead of waiting
 * for workers that do not exist in the child (it used to wait forever). If it is a worker or the
 * leader (a deferred call), there is no caller to return to in the child: the child ends with
 * exit status 87, as executor.h documents, instead of idling forever. The parent's call is
 * unaffected: every task runs exactly once there. Both moods, since SPINNING joiners never sleep
 * and must notice the fork while spinning; the static and the dynamic split, whose threads take
 * each other's tasks (a task forking may be on either thread). */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor/executor_internal.h"
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

/* The verb the caller_forks and worker_forks cases call: for_n, then for_n_dynamic. */
static uform_status_t (*for_n_verb)(uform_executor_t *, const uform_call_t *, size_t, uform_task_t,
                                    void *) = uform_executor_for_n;

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

/* The calling thread forks (task 0 is always on the synchronous caller's share). With one
 * thread, or one task, the call runs on the caller alone, and must stop in the child too. */
static void caller_forks_in(uform_executor_t *executor, size_t tasks) {
    static scene_t scene;
    memset(&scene, 0, sizeof scene);
    scene.fork_at = 0;
    uform_status_t status = for_n_verb(executor, NULL, tasks, task, &scene);
    if (scene.in_child) {
        /* The child: the call came back at once, saying what happened. */
        bool clean = status == UFORM_STATUS_FORKED && strstr(uform_last_error(), "fork") &&
                     atomic_load(&scene.after_fork_in_child) == 0; /* nothing more ran in the child */
        _exit(clean ? 0 : 3);
    }
    CHECK_OK(status);
    for (size_t i = 0; i < tasks; i++) CHECK_EQ_INT(scene.runs[i], 1);
    CHECK_EQ_INT(wait_child(scene.child), 0);
}
static void caller_forks(uform_executor_t *executor) { caller_forks_in(executor, TASKS); }

/* A task forks with progress asked for: the child sees no progress callback either (the
 * thread's unreported tasks are not reported there). */
static _Atomic int progress_calls_in_child = 0;
static bool reporting_child = false;
static _Atomic pid_t reporting_pid = 0;
static uform_status_t forking_task(void *context, size_t i, size_t thread) {
    (void)context, (void)thread;
    if (reporting_child || i != 3) return UFORM_STATUS_OK;
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        reporting_child = true;
    } else {
        atomic_store(&reporting_pid, pid);
    }
    return UFORM_STATUS_OK;
}
static void count_child_reports(void *context, size_t done, size_t total) {
    (void)context, (void)done, (void)total;
    if (reporting_child) atomic_fetch_add(&progress_calls_in_child, 1);
}
static void task_forks_with_progress(uform_executor_t *executor) {
    uform_call_t call = UFORM_CALL_INIT;
    call.progress = count_child_reports;
    /* 1030 tasks: reports every 4, so task 3's share has unreported tasks when it forks. */
    uform_status_t status = uform_executor_for_n(executor, &call, 1030, forking_task, NULL);
    if (reporting_child) _exit(status == UFORM_STATUS_FORKED && atomic_load(&progress_calls_in_child) == 0 ? 0 : 7);
    CHECK_OK(status);
    CHECK_EQ_INT(wait_child(atomic_load(&reporting_pid)), 0);
    atomic_store(&reporting_pid, 0);
}

/* A worker forks: task TASKS-1 is in the last thread's static share. */
static void worker_forks(uform_executor_t *executor) {
    static scene_t scene;
    memset(&scene, 0, sizeof scene);
    scene.fork_at = TASKS - 1;
    uform_status_t status = for_n_verb(executor, NULL, TASKS, task, &scene);
    if (scene.in_child) _exit(4); /* only if the caller itself forked (the share or the task was taken) */
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

/* Slices: the caller's slice forks while the worker has not claimed its slice yet (a hook
 * stalls it, as a preempted worker would be). The child must not run the worker's slice: it
 * stops before stealing anything. (It used to run it, then return FORKED.) */
static _Atomic int slices_in_child = 0;
static bool slices_child = false;
static _Atomic pid_t slices_pid = 0;
static uform_status_t slice(void *context, size_t first, size_t count, size_t thread) {
    if (slices_child) {
        atomic_fetch_add(&slices_in_child, 1);
        return UFORM_STATUS_OK;
    }
    if (first != 0) return UFORM_STATUS_OK;
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        slices_child = true;
    } else {
        atomic_store(&slices_pid, pid);
    }
    return UFORM_STATUS_OK;
}
static void stall_claim(size_t worker) {
    struct timespec pause = {0, 50 * 1000000L};
    nanosleep(&pause, NULL);
}
static void caller_forks_in_a_slice(uform_executor_t *executor) {
    /* Workers asleep: the caller then steals unclaimed shares right after its own. */
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    struct timespec idle = {0, 20 * 1000000L};
    nanosleep(&idle, NULL);
    uform__test_before_claim = stall_claim;
    uform_status_t status = uform_executor_for_slices(executor, NULL, 2, slice, NULL);
    if (slices_child) _exit(status == UFORM_STATUS_FORKED && atomic_load(&slices_in_child) == 0 ? 0 : 5);
    uform__test_before_claim = NULL;
    CHECK_OK(status);
    CHECK_EQ_INT(wait_child(slices_pid), 0);
}

/* A progress callback forks: the child runs no further task of the parent's call. */
static _Atomic int progress_tasks_in_child = 0;
static bool progress_child = false;
static _Atomic pid_t progress_pid = 0;
static uform_status_t count_task(void *context, size_t i, size_t thread) {
    if (progress_child) atomic_fetch_add(&progress_tasks_in_child, 1);
    return UFORM_STATUS_OK;
}
static void forking_progress(void *context, size_t done, size_t total) {
    if (progress_child || atomic_load(&progress_pid)) return; /* fork once */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        progress_child = true;
    } else {
        atomic_store(&progress_pid, pid);
    }
}
static void progress_forks(uform_executor_t *executor) {
    atomic_store(&progress_pid, 0);
    uform_call_t call = UFORM_CALL_INIT;
    call.progress = forking_progress;
    uform_status_t status = uform_executor_for_n(executor, &call, TASKS, count_task, NULL);
    if (progress_child) _exit(atomic_load(&progress_tasks_in_child) == 0 ? 0 : 6);
    CHECK_OK(status);
    int code = wait_child(progress_pid);
    CHECK(code == 0 || code == FORKED_CHILD_EXIT); /* a worker's report forks: that child exits 87 */
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
            progress_forks(executor);
        }
        caller_forks_in_a_slice(executor);
        for_n_verb = uform_executor_for_n_dynamic;
        for (int round = 0; round < 3; round++) {
            caller_forks(executor);
            worker_forks(executor);
        }
        for_n_verb = uform_executor_for_n;
    }
    task_forks_with_progress(executor);
    caller_forks_in(executor, 1); /* a single task: run on the caller alone */
    for_n_verb = uform_executor_for_n_dynamic;
    caller_forks_in(executor, 1);
    for_n_verb = uform_executor_for_n;
    uform_executor_t *single = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &single));
    caller_forks_in(single, TASKS); /* one thread: every call runs on the caller */
    CHECK_OK(uform_executor_free(single));
    /* The parent's executor is intact. */
    static scene_t plain;
    plain.fork_at = SIZE_MAX;
    CHECK_OK(uform_executor_for_n(executor, NULL, TASKS, task, &plain));
    check_parent_runs(&plain);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
