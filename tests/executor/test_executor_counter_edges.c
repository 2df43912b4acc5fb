/* Counters at their edges never run a task twice.
 * - A dynamic parallel-for near SIZE_MAX: every thread tries to take a task once past the end
 *   of each part it looks at, and indices near SIZE_MAX must neither wrap to 0 (running task 0
 *   again) nor be split wrongly among the threads' parts. Reached through the internal
 *   uform__test_for_n_dynamic_from (the same job a public for_n_dynamic runs, starting at
 *   `first` instead of 0), since 2^64 real tasks are out of reach.
 * - Share claims compare call numbers: a worker preempted for 2^31 calls while the forking
 *   thread stole its shares must not find its stale number "newer". Numbers are 48-bit serial
 *   numbers (executor_internal.h, "the generation word"); the claim itself (uform__claim_share)
 *   is checked at the old 32-bit edges and across the 48-bit wrap, and live executors run calls
 *   across the wrap (their next number set just below it), PARKED workers sleeping between
 *   calls so that their shares are stolen and claimed by CAS. */
#include <stdint.h>
#include <time.h>

#include "executor/executor_internal.h"
#include "executor/executor_test_util.h"
#include "test.h"

#define SPAN 4096

typedef struct tally_t {
    size_t first;
    _Atomic int runs[SPAN];
    _Atomic int outside; /* tasks below `first`: a wrapped counter */
} tally_t;

static tally_t tally;

static uform_status_t count(void *context, size_t task, size_t thread) {
    tally_t *t = context;
    if (task < t->first || task - t->first >= SPAN)
        atomic_fetch_add(&t->outside, 1);
    else
        atomic_fetch_add(&t->runs[task - t->first], 1);
    return UFORM_STATUS_OK;
}

static void dynamic_near(uform_executor_t *executor, size_t first, size_t n) {
    memset(&tally, 0, sizeof tally);
    tally.first = first;
    CHECK_OK(uform__test_for_n_dynamic_from(executor, first, n, count, &tally));
    CHECK_EQ_INT(tally.outside, 0);
    for (size_t i = 0; i < n - first; i++)
        if (tally.runs[i] != 1) TEST_FAIL_("task first+%zu ran %d times", i, (int)tally.runs[i]);
}

static _Atomic size_t runs[8];

/** Calls of `threads` and of 2 tasks on an executor whose next call number is set to `next`. */
static void calls_from(uform_executor_t *executor, uint64_t next, int calls) {
    /* Only the forking thread reads its copy of the word, and this thread is it. */
    executor->published_word = (executor->published_word & ~UFORM_GENERATION_CALL_MASK_) |
                               uform__generation_call(next - 1);
    for (int call = 0; call < calls; call++) {
        size_t n = call % 3 ? executor->threads : 2;
        for (size_t i = 0; i < 8; i++) atomic_store(&runs[i], 0);
        CHECK_OK((call & 1 ? uform_executor_for_n : uform_executor_for_n_dynamic)(executor, NULL, n, count_task_runs, (void *)runs));
        for (size_t i = 0; i < n; i++) CHECK_EQ_INT(atomic_load(&runs[i]), 1);
        if (call % 4 == 0) { /* let PARKED workers fall asleep: their shares are then stolen */
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
        }
    }
}

static void calls_across_the_wrap(size_t threads, uform_mood_t mood) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &executor));
    CHECK_OK(uform_executor_drain(executor, mood));
    calls_from(executor, 1, 10);
    /* Two jumps of less than 2^47 (a worker's claim is then still older) up to the wrap. */
    calls_from(executor, UFORM_GENERATION_CALL_MASK_ / 2, 10);
    calls_from(executor, UFORM_GENERATION_CALL_MASK_ - 20, 60);
    uint64_t now = uform__generation_call(atomic_load(&executor->generation));
    if (now > 100) TEST_FAIL_("the call number did not wrap: %llu", (unsigned long long)now);
    CHECK_OK(uform_executor_free(executor));
}

int main(void) {
    size_t thread_counts[] = {1, 2, 3, 5};
    for (size_t t = 0; t < sizeof thread_counts / sizeof *thread_counts; t++) {
        uform_executor_t *executor = NULL;
        CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, thread_counts[t], 0, &executor));
        for (int round = 0; round < 20; round++) {
            dynamic_near(executor, SIZE_MAX - SPAN, SIZE_MAX);         /* the very end */
            dynamic_near(executor, SIZE_MAX - 3, SIZE_MAX);            /* fewer tasks than threads */
            dynamic_near(executor, SIZE_MAX - SPAN, SIZE_MAX - 1);     /* one short of the end */
            dynamic_near(executor, SIZE_MAX / 2, SIZE_MAX / 2 + SPAN); /* far from it */
        }
        CHECK_STATUS(uform__test_for_n_dynamic_from(executor, 10, 5, count, &tally), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_OK(uform_executor_free(executor));
    }
    /* The NULL executor runs the same job inline. */
    dynamic_near(NULL, SIZE_MAX - SPAN, SIZE_MAX);

    /* Claims only move forward, whatever the distance. */
    _Atomic uint64_t claimed = 5;
    CHECK(!uform__claim_share(&claimed, 5));                        /* taken already */
    CHECK(!uform__claim_share(&claimed, 4));                        /* older */
    atomic_store(&claimed, (uint64_t)5 + ((uint64_t)1 << 31) + 10); /* the forking thread ran on */
    CHECK(!uform__claim_share(&claimed, 5)); /* a 2^31-old generation is still older (it wrapped in 32 bits) */
    atomic_store(&claimed, UINT32_MAX);
    CHECK(uform__claim_share(&claimed, (uint64_t)UINT32_MAX + 1)); /* past the old 32-bit wrap: newer */
    CHECK_EQ_INT(atomic_load(&claimed) == (uint64_t)UINT32_MAX + 1, 1);
    CHECK(!uform__claim_share(&claimed, UINT32_MAX));
    /* Across the 48-bit wrap: 0 follows the last number, and the last is older than 0. */
    atomic_store(&claimed, UFORM_GENERATION_CALL_MASK_);
    CHECK(uform__claim_share(&claimed, 0));
    CHECK(!uform__claim_share(&claimed, UFORM_GENERATION_CALL_MASK_));
    CHECK(!uform__claim_share(&claimed, UFORM_GENERATION_CALL_MASK_ - ((uint64_t)1 << 40)));
    CHECK(uform__claim_share(&claimed, 7));
    CHECK_EQ_INT(atomic_load(&claimed) == 7, 1);

    setenv("UFORM_SPIN_MICROSECONDS", "2", 1); /* PARKED workers sleep soon after a call */
    calls_across_the_wrap(2, UFORM_MOOD_PARKED);
    calls_across_the_wrap(3, UFORM_MOOD_PARKED);
    calls_across_the_wrap(3, UFORM_MOOD_SPINNING);
    printf("calls across the 48-bit wrap of the call number ran every task once\n");
    TEST_DONE();
}
