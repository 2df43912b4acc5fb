/* An executor's creation that fails part-way, at each of its thread starts in turn (a test hook
 * refuses start k as pthread_create would, with threads 0..k-1 already running): the status
 * says why (EAGAIN: IO_ERROR, ENOMEM: OUT_OF_MEMORY), the message names the thread, no start is
 * tried after the refused one, every thread already running is stopped and joined (the
 * process's thread count comes back; ASan's leak check and TSan run this too), and the next
 * executor works, deferred calls (the leader) included. test_executor_thread_start_refused makes
 * the C library itself refuse. */
#include <errno.h>
#include <stdatomic.h>
#include <time.h>

#include "executor/executor_test_hooks.h"
#include "executor/executor_test_util.h"
#include "test.h"

static _Atomic size_t refuse_at, starts_asked;
static _Atomic int refusal;

static int refuse_one(size_t index) {
    starts_asked++;
    return index == refuse_at ? refusal : 0;
}

/** The process's threads, from /proc; -1 on WebAssembly, where /proc/self/status is Node's own
 *  (the build reaches the host's files) and Emscripten's threads come from a pool that outlives
 *  their joins, so no count there says whether a thread was joined. */
static long threads_now(void) {
#if defined(__EMSCRIPTEN__)
    return -1;
#else
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return -1;
    char line[256];
    long threads = -1;
    while (fgets(line, sizeof line, status))
        if (sscanf(line, "Threads: %ld", &threads) == 1) break;
    fclose(status);
    return threads;
#endif
}

/** The thread count once it reads `expected`, or after 2 s. A joined thread leaves the count a
 *  moment after pthread_join returns: the kernel wakes the joiner when the thread clears its
 *  tid, before it takes the thread out of its group. */
static long threads_settled(long expected) {
    long now = threads_now();
    for (int i = 0; i < 2000 && now != expected; i++) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
        now = threads_now();
    }
    return now;
}

int main(void) {
    /* One executor made and freed first: a sanitizer's runtime starts a thread of its own at the
     * process's first thread start (TSan's background thread), which must be in `before`. The
     * count is read once the warm-up's threads have left it: back to the first count, or, with
     * such a runtime thread, what it reads after the wait. */
    long initial = threads_now();
    uform_executor_t *warm = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &warm));
    CHECK_OK(uform_executor_free(warm));
    long before = threads_settled(initial);
    atomic_store(&uform__test_thread_start, refuse_one);
    for (size_t threads = 1; threads <= 4; threads++) {
        for (size_t k = 0; k < threads; k++) {
            refuse_at = k;
            refusal = k % 2 ? ENOMEM : EAGAIN;
            starts_asked = 0;
            uform_executor_t *executor = (uform_executor_t *)1;
            uform_status_t status = uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 4, &executor);
            CHECK_STATUS(status, k % 2 ? UFORM_STATUS_OUT_OF_MEMORY : UFORM_STATUS_IO_ERROR);
            CHECK(executor == NULL);
            CHECK_EQ_INT(starts_asked, k + 1); /* nothing started after the refusal */
            char expected[96];
            snprintf(expected, sizeof expected, "uform_executor_for_ram: cannot start thread %zu of %zu (uform:ram:%zu): ",
                     k, threads, k);
            CHECK(strncmp(uform_last_error(), expected, strlen(expected)) == 0);
            CHECK(strstr(uform_last_error(), strerror(k % 2 ? ENOMEM : EAGAIN)) != NULL);
            /* Threads 0..k-1 ran (the leader registering its barrier, workers waiting for a
             * job) and were joined before creation returned. */
            if (before >= 0) CHECK_EQ_INT(threads_settled(before), before);
        }
    }
    atomic_store(&uform__test_thread_start, NULL);

    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 3, 4, &executor));
    if (before >= 0) CHECK_EQ_INT(threads_settled(before + 3), before + 3);
    _Atomic size_t runs[6] = {0};
    CHECK_OK(uform_executor_for_n(executor, NULL, 6, count_task_runs, (void *)runs));
    uform_deferred_t *handle = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &handle;
    CHECK_OK(uform_executor_for_n(executor, &call, 6, count_task_runs, (void *)runs));
    CHECK_OK(uform_deferred_wait(handle, -1));
    uform_deferred_free(handle);
    for (size_t i = 0; i < 6; i++) CHECK_EQ_INT(runs[i], 2);
    CHECK_OK(uform_executor_free(executor));
    if (before >= 0) CHECK_EQ_INT(threads_settled(before), before);
    TEST_DONE();
}
