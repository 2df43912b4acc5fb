/* executor.h, UFORM_MOOD_PARKED: a caller joining a call whose waits for workers have been
 * short spins longer (up to 20x UFORM_SPIN_MICROSECONDS) before it sleeps, and only where the
 * executor's cores are its own. Real threads, counted through the library's joiner sleeps:
 * - slot 1's task takes 300 us, on the worker, so the caller waits 300 us for it on every
 *   call: past the plain 50 us spin, it slept on every call; learned, on few of them;
 * - an oversubscribed executor (4x the cores) never learns, nor two executors whose threads
 *   share the cores: after such waits, the joiner's budget is still the plain one;
 * The bounds leave room for preemption on a loaded machine: a learned budget may be overrun,
 * never the other way round. Then the rule itself (uform__learn_spin), value by value, where
 * no scheduler can blur it: a sleep after a short wait spins up to the cap next time, a long one
 * (a worker held up past the cap) puts the plain budget back, covered waits shrink it slowly, never under
 * twice such a wait nor outside [plain, cap], the cap at most 2 ms above the plain budget; with
 * UFORM_SPIN_MICROSECONDS=0 that range is [0, 0], so nothing is learned there (checked here, by
 * the rule: how often the joiner then sleeps depends on the platform's futex, and under wasm32
 * on Node it slept on 8 of 40 calls). */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "executor/executor_internal.h"
#include "test.h"

#define CALLS 40
#define LONG_NS 300000u

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void busy(uint64_t ns) {
    uint64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

/* Slot 1's task takes LONG_NS; slot 0's waits (at most 10 s) until it has begun, so that share
 * is the worker's, never stolen by the caller: the caller then waits LONG_NS for the worker. */
static _Atomic int slow_began;

static uform_status_t slow_slot(void *context, size_t index, size_t thread) {
    (void)context, (void)index;
    if (thread == 1) {
        atomic_store(&slow_began, 1);
        busy(LONG_NS);
    } else if (thread == 0) {
        uint64_t end = now_ns() + 10000000000u;
        while (!atomic_load(&slow_began) && now_ns() < end) {
        }
    }
    return UFORM_STATUS_OK;
}

static uform_executor_t *make(size_t threads) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &executor));
    return executor;
}

/** Joiner sleeps over CALLS calls in which it waits LONG_NS for worker 1. */
static size_t sleeps_over_calls(uform_executor_t *executor) {
    size_t threads = uform_executor_threads(executor), before = atomic_load(&uform__test_joiner_sleeps);
    for (int i = 0; i < CALLS; i++) {
        atomic_store(&slow_began, 0);
        CHECK_OK(uform_executor_for_n(executor, NULL, threads, slow_slot, NULL));
    }
    return atomic_load(&uform__test_joiner_sleeps) - before;
}

/** The joiner's budget never moved from the plain one. */
static void check_budgets_plain(const uform_executor_t *executor) {
    CHECK_EQ_INT(executor->join_spin_ns, executor->spin_ns);
}

static void learning_rule(void) {
    const uint64_t plain = 50000, cap = plain * UFORM_LEARNED_SPIN_MAX_FACTOR;
    uint64_t budget = plain;
    uform__learn_spin(&budget, plain, plain, true, 100000); /* slept 100 us after spinning 50 */
    CHECK_EQ_INT(budget, cap);
    uform__learn_spin(&budget, plain, 300000, false, 0); /* a 300 us wait, spun through */
    CHECK_EQ_INT(budget, cap - cap / 64);
    for (int i = 0; i < 1000; i++) uform__learn_spin(&budget, plain, 300000, false, 0);
    CHECK_EQ_INT(budget, 600000); /* shrinks to twice the waits it covers, no further */
    for (int i = 0; i < 1000; i++) uform__learn_spin(&budget, plain, 0, false, 0);
    CHECK_EQ_INT(budget, plain); /* waits that end at once: back to the plain budget */
    uform__learn_spin(&budget, plain, cap, true, 1); /* cap + 1 ns in all: sleeping was right */
    CHECK_EQ_INT(budget, plain);
    budget = cap;
    uform__learn_spin(&budget, plain, cap, true, 30000000); /* a 30 ms pause */
    CHECK_EQ_INT(budget, plain);
    budget = cap;
    uform__learn_spin(&budget, plain, 10 * cap, false, 0); /* never past the cap */
    CHECK_EQ_INT(budget, cap);
    budget = 0;
    uform__learn_spin(&budget, 0, 0, true, 10); /* UFORM_SPIN_MICROSECONDS=0: stays 0 */
    CHECK_EQ_INT(budget, 0);
    const uint64_t long_plain = 10000000000u; /* UFORM_SPIN_MICROSECONDS at its 10 s maximum */
    budget = long_plain;
    uform__learn_spin(&budget, long_plain, long_plain, true, 1000);
    CHECK_EQ_INT(budget, long_plain + UFORM_LEARNED_SPIN_MAX_EXTRA_NS); /* not 200 s */
}

int main(void) {
    learning_rule();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 2) return 77; /* a worker with a core of its own is the point */

    uform_executor_t *executor = make(2);
    size_t joiner = sleeps_over_calls(executor);
    if (joiner > CALLS / 2) TEST_FAIL_("the joiner slept on %zu of %d calls with 300 us waits", joiner, CALLS);

    CHECK_OK(uform_executor_free(executor));

    /* Oversubscribed: nothing is learned, whatever the waits were. */
    executor = make((size_t)cpus * 4);
    sleeps_over_calls(executor);
    check_budgets_plain(executor);
    CHECK_OK(uform_executor_free(executor));
    /* Two executors whose threads together outnumber the cores: each shares its cores. */
    executor = make((size_t)cpus);
    uform_executor_t *other = make((size_t)cpus);
    if (!atomic_load(&executor->sharing)) TEST_FAIL_("two %ld-thread executors on %ld cores do not share", cpus, cpus);
    sleeps_over_calls(executor);
    sleeps_over_calls(other);
    check_budgets_plain(executor);
    check_budgets_plain(other);
    CHECK_OK(uform_executor_free(other));
    CHECK_OK(uform_executor_free(executor));
    return 0;
}
