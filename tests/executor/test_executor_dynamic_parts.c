/* executor.h, uform_executor_for_n_dynamic: thread t takes its part of the static split front to
 * back, then tasks nobody has started from the back of the other parts. Checked here, on real
 * threads, in both moods and for 2 to 4 threads:
 * - the first task of each part always runs on that part's own slot;
 * - a part whose runner is busy is finished by the others: task 0 waits (at most 10 s, so a
 *   hang fails instead of stalling) until every other task has run, which only ends if the rest
 *   of part 0 is taken by another slot;
 * - a slow runner's part is taken from its back while the runner takes from its front, side by
 *   side (the race on one part's counters, run under ASan and TSan): the tasks its slot ran are
 *   a prefix of the part, the others' a suffix, and every task runs exactly once;
 * - the last part's first task waits for every other task, after a 2 ms idle (PARKED: its
 *   runner, a worker, sleeps and wakes late); its part's other tasks must be taken by others;
 * - a late runner's part is taken by the others before it even starts: worker 1 is held before
 *   its claim (the claim hook) until every task but its part's first and task 0 has run, while
 *   task 0 waits for worker 1, so the caller cannot take over its share. When each runner
 *   filled in its own block on starting, the others left without its tasks and this hung (the
 *   hold gives up after 10 s, a failure instead of a stall); so did the case above with 4
 *   threads now and then, when the caller filled in its block after the workers had left. */
#include <stdatomic.h>
#include <time.h>

#include "executor/executor_internal.h"
#include "test.h"

#define MAX_TASKS 256

static _Atomic int runs[MAX_TASKS];
static _Atomic size_t slot_of[MAX_TASKS];
static _Atomic int finished, gave_up, others_began, released;
static _Atomic size_t hold_until; /* LATE_RUNNER: worker 1 waits for this many finished tasks */

typedef enum shape_t { PLAIN, FIRST_WAITS, SLOW_SLOT_ZERO, LATE_RUNNER, LAST_FIRST_WAITS } shape_t;
typedef struct case_t {
    shape_t shape;
    size_t n, threads;
} case_t;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/** Where part `t` of n tasks over `threads` begins (the static split: the first n % threads
 *  parts one task longer). */
static size_t part_begin(size_t n, size_t threads, size_t t) {
    return t * (n / threads) + (t < n % threads ? t : n % threads);
}

static void hold_worker_one(size_t worker) {
    size_t until = atomic_load(&hold_until);
    if (worker != 1 || !until) return;
    double end = now() + 10;
    while (atomic_load(&finished) < (int)until)
        if (now() > end) {
            atomic_store(&gave_up, 1);
            break;
        }
    atomic_store(&hold_until, 0);
    atomic_store(&released, 1);
}

static uform_status_t task(void *context, size_t index, size_t thread) {
    const case_t *c = context;
    if (c->shape == LATE_RUNNER && index == 0) {
        double end = now() + 10;
        while (!atomic_load(&released))
            if (now() > end) {
                atomic_store(&gave_up, 1);
                break;
            }
    }
    /* The last part's first task waits for the rest: its runner is a worker, maybe asleep. */
    if (c->shape == LAST_FIRST_WAITS && index == part_begin(c->n, c->threads, c->threads - 1)) {
        double end = now() + 10;
        while (atomic_load(&finished) < (int)c->n - 1)
            if (now() > end) {
                atomic_store(&gave_up, 1);
                break;
            }
    }
    if (c->shape == FIRST_WAITS && index == 0) {
        double end = now() + 10;
        while (atomic_load(&finished) < (int)c->n - 1)
            if (now() > end) {
                atomic_store(&gave_up, 1);
                break;
            }
    }
    if (c->shape == SLOW_SLOT_ZERO && thread != 0) atomic_store(&others_began, 1);
    if (c->shape == SLOW_SLOT_ZERO && thread == 0) {
        /* Its first task waits (at most 10 s) for another slot to be at work, so the others are
         * running while it is slow, however late a loaded machine wakes them. */
        double end = now() + 10;
        while (index == 0 && !atomic_load(&others_began))
            if (now() > end) {
                atomic_store(&gave_up, 1);
                break;
            }
        struct timespec pause = {0, 200 * 1000L};
        nanosleep(&pause, NULL);
    }
    atomic_store(&slot_of[index], thread);
    atomic_fetch_add(&runs[index], 1);
    atomic_fetch_add(&finished, 1);
    return UFORM_STATUS_OK;
}

static void one_call(uform_executor_t *executor, size_t threads, shape_t shape, size_t n) {
    for (size_t i = 0; i < MAX_TASKS; i++) atomic_store(&runs[i], 0), atomic_store(&slot_of[i], SIZE_MAX);
    atomic_store(&finished, 0);
    atomic_store(&gave_up, 0);
    atomic_store(&others_began, 0);
    atomic_store(&released, 0);
    /* All but task 0 and part 1's first. */
    if (shape == LATE_RUNNER) atomic_store(&hold_until, n - 2);
    case_t c = {shape, n, threads};
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
    atomic_store(&uform__test_before_claim, hold_worker_one);
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
            /* PARKED, after an idle long enough for the workers to sleep: the last part's runner
             * wakes late, and the others (the caller included) must not leave without its
             * tasks. The case a runner filling in its own block hung on every time. */
            for (int round = 0; round < 5; round++) {
                struct timespec idle = {0, 2 * 1000000L};
                nanosleep(&idle, NULL);
                one_call(executor, threads, LAST_FIRST_WAITS, 4 * threads);
            }
            if (threads >= 3) /* someone other than slots 0 and 1 to take part 1's tasks */
                for (int round = 0; round < 3; round++) one_call(executor, threads, LATE_RUNNER, 10 * threads);
        }
        CHECK_OK(uform_executor_free(executor));
    }
    return 0;
}
