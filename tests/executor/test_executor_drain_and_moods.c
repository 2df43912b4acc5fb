/* drain(mood) waits for calls in flight (deferred and another thread's synchronous call),
 * then adopts the mood; PARKED workers really sleep in the kernel when idle; bad moods are
 * refused without changing anything. */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>

#include "executor/executor_test_util.h"
#include "test.h"

static _Atomic size_t finished;

static uform_status_t slow_task(void *context, size_t task, size_t thread) {
    struct timespec pause = {0, 2000000}; /* 2 ms */
    nanosleep(&pause, NULL);
    atomic_fetch_add(&finished, 1);
    return UFORM_STATUS_OK;
}
static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

/* Another thread's synchronous call, held inside its tasks by a gate. */
static gate_t sync_gate;
static _Atomic int sync_returned, sync_tasks_done;
static uform_status_t gated_task(void *context, size_t task, size_t thread) {
    gate_pass(&sync_gate);
    atomic_fetch_add(&sync_tasks_done, 1);
    return UFORM_STATUS_OK;
}
static void *sync_caller(void *argument) {
    uform_status_t status = uform_executor_for_n(argument, NULL, 2, gated_task, NULL);
    atomic_store(&sync_returned, 1);
    return (void *)(intptr_t)status;
}
static _Atomic int drained;
static void *drainer(void *argument) {
    uform_status_t status = uform_executor_drain(argument, UFORM_MOOD_PARKED);
    atomic_store(&drained, 1);
    return (void *)(intptr_t)status;
}

/* Drain while another thread's synchronous call runs: it returns only after that call has. */
static void drain_waits_for_a_synchronous_call(uform_executor_t *executor) {
    gate_init(&sync_gate);
    atomic_store(&sync_returned, 0);
    atomic_store(&sync_tasks_done, 0);
    atomic_store(&drained, 0);
    pthread_t caller, drain;
    CHECK(pthread_create(&caller, NULL, sync_caller, executor) == 0);
    wait_arrived(&sync_gate, 2); /* both tasks are inside the call */
    CHECK(pthread_create(&drain, NULL, drainer, executor) == 0);
    struct timespec pause = {0, 50000000}; /* 50 ms: ample for a drain that does not wait */
    nanosleep(&pause, NULL);
    CHECK_EQ_INT(atomic_load(&drained), 0);
    gate_open(&sync_gate);
    void *answer = NULL;
    CHECK(pthread_join(drain, &answer) == 0);
    CHECK_EQ_INT((int)(intptr_t)answer, UFORM_STATUS_OK);
    /* The call was over before the drain ended: both its tasks had finished (its return to the
     * caller's thread may come a moment after the release the drain waits for). */
    CHECK_EQ_INT(atomic_load(&sync_tasks_done), 2);
    CHECK(pthread_join(caller, &answer) == 0);
    CHECK_EQ_INT((int)(intptr_t)answer, UFORM_STATUS_OK);
    CHECK_EQ_INT(uform_executor_mood(executor), UFORM_MOOD_PARKED);
}

/** Counts this process's threads named uform:ram:* and how many of them are sleeping. */
static void count_workers(int *named, int *sleeping) {
    *named = *sleeping = 0;
    DIR *tasks = opendir("/proc/self/task");
    struct dirent *entry;
    while ((entry = readdir(tasks))) {
        if (entry->d_name[0] == '.') continue;
        char path[300], text[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", entry->d_name);
        FILE *file = fopen(path, "r");
        if (!file) continue;
        size_t length = fread(text, 1, sizeof text - 1, file);
        fclose(file);
        text[length] = 0;
        /* "tid (comm) S ..." */
        char *open = strchr(text, '('), *close = strrchr(text, ')');
        if (!open || !close || strncmp(open + 1, "uform:ram:", 10) != 0) continue;
        (*named)++;
        if (close[2] == 'S') (*sleeping)++;
    }
    closedir(tasks);
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 8, &executor));

    /* Drain with deferred calls in flight waits for all of them. */
    uform_deferred_t *handles[4];
    uform_call_t call = UFORM_CALL_INIT;
    for (int i = 0; i < 4; i++) {
        call.deferred = &handles[i];
        CHECK_OK(uform_executor_for_n(executor, &call, 10, slow_task, NULL));
    }
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING));
    CHECK_EQ_INT(atomic_load(&finished), 40);
    for (int i = 0; i < 4; i++) {
        CHECK_OK(uform_deferred_poll(handles[i]));
        uform_deferred_free(handles[i]);
    }
    CHECK_EQ_INT(uform_executor_mood(executor), UFORM_MOOD_SPINNING);
    CHECK_OK(uform_executor_for_n(executor, NULL, 1000, nothing, NULL));

    drain_waits_for_a_synchronous_call(executor);
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING));

    /* Bad moods are refused and change nothing. */
    CHECK_STATUS(uform_executor_drain(executor, (uform_mood_t)0), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_drain(executor, (uform_mood_t)77), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_drain(NULL, (uform_mood_t)3), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(uform_executor_mood(executor), UFORM_MOOD_SPINNING);
    CHECK_OK(uform_executor_drain(NULL, UFORM_MOOD_SPINNING));

    /* PARKED: after a short idle, every worker thread sleeps in the kernel. Threads are named
     * uform:ram:N (the leader 0 and the workers). */
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    CHECK_OK(uform_executor_for_n(executor, NULL, 1000, nothing, NULL));
    int named = 0, sleeping = 0;
    for (int attempt = 0; attempt < 200; attempt++) { /* up to 2 s for a loaded CI machine */
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        count_workers(&named, &sleeping);
        if (named == 2 && sleeping == 2) break;
    }
    CHECK_EQ_INT(named, 2);
    CHECK_EQ_INT(sleeping, 2);
    /* A call wakes them at once and works. */
    atomic_store(&finished, 0);
    CHECK_OK(uform_executor_for_n(executor, NULL, 4, slow_task, NULL));
    CHECK_EQ_INT(atomic_load(&finished), 4);

    CHECK_OK(uform_executor_free(executor));
    /* free joined every thread. A joined thread's /proc entry goes a moment after the join
     * returns (the join wakes when the thread's tid is cleared, before its exit completes; under
     * qemu-user the gap is wide): poll for it, up to 2 s. */
    for (int attempt = 0; attempt < 200; attempt++) {
        count_workers(&named, &sleeping);
        if (named == 0) break;
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
    }
    CHECK_EQ_INT(named, 0);
    CHECK_OK(uform_executor_free(NULL));
    TEST_DONE();
}
