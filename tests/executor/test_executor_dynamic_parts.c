/* executor.h, uform_executor_for_n_dynamic: thread t takes its part of the static split front to
 * back, then tasks nobody has started from the back of the other parts. Checked here, on real
 * threads, in both moods and for 2 to 4 threads:
 * - the first task of each part always runs on that part's own slot;
 * - a part whose runner is busy is finished by the others: task 0 waits (at most 10 s, so a
 *   hang fails instead of stalling) until every other task has run, which only ends if the rest
 *   of part 0 is taken by another slot;
 * - a slow runner's part is taken from its back while the runner takes from its front, side by
 *   side (the race on one part's counters, run under ASan and TSan): the tasks its slot ran are
 *   a prefix of the part, the others' a suffix, and every task runs exactly once. */
#include <stdatomic.h>
#include <time.h>

#include "test.h"
#include "uform.h"

#define MAX_TASKS 256

static _Atomic int runs[MAX_TASKS];
static _Atomic size_t slot_of[MAX_TASKS];
static _Atomic int finished, gave_up;

typedef enum shape_t { PLAIN, FIRST_WAITS, SLOW_SLOT_ZERO } shape_t;
typedef struct case_t {
    shape_t shape;
    size_t n;
} case_t;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uform_status_t task(void *context, size_t index, size_t thread) {
    const case_t *c = context;
    if (c->shape == FIRST_WAITS && index == 0) {
        double end = now() + 10;
        while (atomic_load(&finished) < (int)c->n - 1)
            if (now() > end) {
                atomic_store(&gave_up, 1);
                break;
            }
    }
    if (c->shape == SLOW_SLOT_ZERO && thread == 0) {
        struct timespec pause = {0, 200 * 1000L};
        nanosleep(&pause, NULL);
    }
    atomic_store(&slot_of[index], thread);
    atomic_fetch_add(&runs[index], 1);
    atomic_fetch_add(&finished, 1);
    return UFORM_STATUS_OK;
}

/** Where part `t` of n tasks over `threads` begins (the static split: the first n % threads
 *  parts one task longer). */
static size_t part_begin(size_t n, size_t threads, size_t t) {
    return t * (n / threads) + (t < n % threads ? t : n % threads);
}

static void one_call(uform_executor_t *executor, size_t threads, shape_t shape, size_t n) {
    for (size_t i = 0; i < MAX_TASKS; i++) atomic_store(&runs[i], 0), atomic_store(&slot_of[i], SIZE_MAX);
    atomic_store(&finished, 0);
    atomic_store(&gave_up, 0);
    case_t c = {shape, n};
    CHECK_OK(uform_executor_for_n_dynamic(executor, NULL, n, task, &c));
    CHECK_EQ_INT(atomic_load(&gave_up), 0);
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&runs[i]) != 1) TEST_FAIL_("task %zu of %zu ran %d times", i, n, atomic_load(&runs[i]));
    for (size_t t = 0; t < threads; t++) {
        size_t begin = part_begin(n, threads, t);
        if (begin < part_begin(n, threads, t + 1) && atomic_load(&slot_of[begin]) != t)
            TEST_FAIL_("part %zu's first task %zu ran on slot %zu", t, begin, atomic_load(&slot_of[begin]));
    }
    if (shape != SLOW_SLOT_ZERO) return;
    /* Part 0: slot 0's tasks first, then only others'. */
    size_t end = part_begin(n, threads, 1), i = 0;
    while (i < end && atomic_load(&slot_of[i]) == 0) i++;
    size_t own = i;
    for (; i < end; i++)
        if (atomic_load(&slot_of[i]) == 0) TEST_FAIL_("task %zu of part 0 ran on slot 0 after others' (%zu)", i, own);
    if (own == end) TEST_FAIL_("no task of slow part 0 (%zu tasks) was taken by another slot", end);
}

int main(void) {
    const size_t thread_counts[] = {2, 3, 4};
    for (size_t k = 0; k < sizeof thread_counts / sizeof *thread_counts; k++) {
        size_t threads = thread_counts[k];
        uform_executor_t *executor = NULL;
        CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &executor));
        const uform_mood_t moods[] = {UFORM_MOOD_PARKED, UFORM_MOOD_SPINNING};
        for (size_t m = 0; m < 2; m++) {
            CHECK_OK(uform_executor_drain(executor, moods[m]));
            const size_t sizes[] = {threads, threads + 1, 2 * threads + 1, 37, MAX_TASKS};
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
                for (int round = 0; round < 20; round++) one_call(executor, threads, PLAIN, sizes[s]);
            for (int round = 0; round < 5; round++) {
                one_call(executor, threads, FIRST_WAITS, 4 * threads);
                one_call(executor, threads, FIRST_WAITS, 101);
            }
            one_call(executor, threads, SLOW_SLOT_ZERO, 16 * threads);
        }
        CHECK_OK(uform_executor_free(executor));
    }
    return 0;
}
