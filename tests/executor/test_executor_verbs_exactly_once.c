/* Every verb runs every task exactly once, with thread indices in range, for every n from 0
 * to a few thousand, on executors of 1, 2, 3 and 5 threads (5 oversubscribes two cores), in
 * both moods, and on the NULL executor. */
#include <stdatomic.h>

#include "executor/executor_test_util.h"
#include "test.h"

#define MAX_N 2600

typedef struct {
    _Atomic unsigned char hits[MAX_N];
    size_t threads;
    _Atomic int out_of_range;
    _Atomic size_t slices;
} tally_t;

static uform_status_t count_task(void *context, size_t task, size_t thread) {
    tally_t *tally = context;
    if (thread >= tally->threads || task >= MAX_N) atomic_store(&tally->out_of_range, 1);
    else atomic_fetch_add(&tally->hits[task], 1);
    return UFORM_STATUS_OK;
}

static uform_status_t count_slice(void *context, size_t first, size_t count, size_t thread) {
    tally_t *tally = context;
    atomic_fetch_add(&tally->slices, 1);
    if (!count || thread >= tally->threads) atomic_store(&tally->out_of_range, 1);
    for (size_t i = first; i < first + count; i++) count_task(context, i, thread);
    return UFORM_STATUS_OK;
}

static void check_once(tally_t *tally, size_t n, const char *verb, size_t threads) {
    if (atomic_load(&tally->out_of_range)) {
        fprintf(stderr, "%s: thread or task index out of range (n=%zu, threads=%zu)\n", verb, n, threads);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&tally->hits[i]) != 1) {
            fprintf(stderr, "%s: task %zu of %zu ran %d times on %zu threads\n", verb, i, n, (int)tally->hits[i], threads);
            exit(1);
        }
}

static void reset(tally_t *tally, size_t threads) {
    memset(tally, 0, sizeof *tally);
    tally->threads = threads;
}

static void exercise(uform_executor_t *executor) {
    static tally_t tally;
    size_t threads = uform_executor_threads(executor);
    for (size_t n = 0; n < MAX_N; n += (n < 300 ? 1 : 37)) {
        reset(&tally, threads);
        CHECK_OK(uform_executor_for_n(executor, NULL, n, count_task, &tally));
        check_once(&tally, n, "for_n", threads);
        reset(&tally, threads);
        CHECK_OK(uform_executor_for_n_dynamic(executor, NULL, n, count_task, &tally));
        check_once(&tally, n, "for_n_dynamic", threads);
        reset(&tally, threads);
        CHECK_OK(uform_executor_for_slices(executor, NULL, n, count_slice, &tally));
        check_once(&tally, n, "for_slices", threads);
        CHECK(atomic_load(&tally.slices) == (n < threads ? n : threads));
    }
    reset(&tally, threads);
    CHECK_OK(uform_executor_for_threads(executor, NULL, count_task, &tally));
    check_once(&tally, threads, "for_threads", threads);
}

int main(void) {
    exercise(NULL);
    size_t counts[] = {1, 2, 3, 5};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        uform_executor_t *executor = NULL;
        CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, counts[i], 0, &executor));
        CHECK_EQ_INT(uform_executor_threads(executor), counts[i]);
        CHECK_EQ_INT(uform_executor_mood(executor), UFORM_MOOD_PARKED); /* new executors start PARKED */
        exercise(executor);
        CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING));
        CHECK_EQ_INT(uform_executor_mood(executor), UFORM_MOOD_SPINNING);
        exercise(executor);
        CHECK_OK(uform_executor_free(executor));
    }
    TEST_DONE();
}
