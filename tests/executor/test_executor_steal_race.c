/* The forking thread runs the shares of workers that are asleep or preempted. This hammers
 * that path: tiny calls back to back with no spin budget (workers sleep at once) and with more
 * threads than cores (workers preempted mid-claim), every task counted exactly once. A stale
 * claim taking a newer call's share once made `pending` underflow and hang here. */
#include "executor/executor_test_util.h"
#include "executor/executor_internal.h"
#include "test.h"

/* Stalls a worker between seeing a job and claiming it, across several calls. */
static _Atomic unsigned stall_counter;
static void stall_sometimes(size_t worker) {
    if (atomic_fetch_add(&stall_counter, 1) % 5 == 0) {
        struct timespec pause = {0, 30000};
        nanosleep(&pause, NULL);
    }
}

#define SLOTS 8

typedef struct {
    _Atomic unsigned long counts[SLOTS];
} slots_t;

static uform_status_t bump(void *context, size_t task, size_t thread) {
    slots_t *slots = context;
    atomic_fetch_add_explicit(&slots->counts[task], 1, memory_order_relaxed);
    return UFORM_STATUS_OK;
}

static void hammer(size_t threads, uform_mood_t mood, double seconds) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &executor));
    CHECK_OK(uform_executor_drain(executor, mood));
    static slots_t slots;
    memset(&slots, 0, sizeof slots);
    unsigned long calls = 0;
    double deadline = seconds_now() + seconds;
    while (seconds_now() < deadline) {
        for (int i = 0; i < 1000; i++) {
            uform_status_t status = (i & 1 ? uform_executor_for_n : uform_executor_for_n_dynamic)(
                executor, NULL, threads, bump, &slots);
            if (status != UFORM_STATUS_OK) {
                fprintf(stderr, "call %lu: %s\n", calls, uform_status_name(status));
                exit(1);
            }
            if (i % 97 == 0) {
                struct timespec pause = {0, 20000}; /* let workers fall asleep now and then */
                nanosleep(&pause, NULL);
            }
        }
        calls += 1000;
    }
    for (size_t i = 0; i < threads; i++) CHECK_EQ_INT(atomic_load(&slots.counts[i]), calls);
    printf("%zu threads, mood %d: %lu calls exact\n", threads, (int)mood, calls);
    CHECK_OK(uform_executor_free(executor));
}

int main(void) {
    /* Under qemu-aarch64 7.2 on x86-64 this deadlocked in about 1 run in 4 (2 of 8) while the
     * joiner's and the workers' Dekker writes were seq_cst stores (STLR) followed by seq_cst
     * loads (LDAR); with exchanges there it passed 24 of 24. It runs on every target now. */
    setenv("UFORM_SPIN_MICROSECONDS", "0", 1); /* PARKED workers sleep as soon as they are idle */
    hammer(2, UFORM_MOOD_PARKED, 1.5);
    hammer(3, UFORM_MOOD_PARKED, 1.5);
    hammer(5, UFORM_MOOD_PARKED, 1.5);
    hammer(5, UFORM_MOOD_SPINNING, 1.5);
    setenv("UFORM_SPIN_MICROSECONDS", "2", 1);
    hammer(2, UFORM_MOOD_PARKED, 1.5);
    hammer(4, UFORM_MOOD_PARKED, 1.5);
    uform__test_before_claim = stall_sometimes; /* force stale claims */
    hammer(2, UFORM_MOOD_SPINNING, 1.0);
    hammer(3, UFORM_MOOD_PARKED, 1.0);
    uform__test_before_claim = NULL;
    TEST_DONE();
}
