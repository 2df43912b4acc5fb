/* SPINNING means no sleep, for the calling thread too: with the worker's share 200 us longer
 * than the caller's, the caller waits for it every call. It must spin (and may yield), never
 * futex-wait. Counted with the calling thread's voluntary context switches (ru_nvcsw), which
 * only a sleep in the kernel increments (a yield or a preemption counts as involuntary).
 * Before the fix, 490 of 500 calls slept. */
#include <sys/resource.h>

#include "executor/executor_test_util.h"
#include "test.h"

static uform_status_t uneven(void *context, size_t task, size_t thread) {
    if (thread == 0) return UFORM_STATUS_OK;
    double until = seconds_now() + 200e-6; /* busy: the worker's share is the long one */
    while (seconds_now() < until) {
    }
    return UFORM_STATUS_OK;
}

static long voluntary_switches(void) {
    struct rusage usage;
    getrusage(RUSAGE_THREAD, &usage);
    return usage.ru_nvcsw;
}

static long sleeps_over_calls(uform_executor_t *executor, int calls) {
    long before = voluntary_switches();
    for (int i = 0; i < calls; i++) CHECK_OK(uform_executor_for_threads(executor, NULL, uneven, NULL));
    return voluntary_switches() - before;
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_SPINNING));
    CHECK_OK(uform_executor_for_threads(executor, NULL, uneven, NULL)); /* warm: pages, first wake */
    long sleeps = sleeps_over_calls(executor, 500);
    printf("SPINNING: the caller slept %ld times over 500 calls\n", sleeps);
    /* A few for page faults or the odd lock in libc; a caller that sleeps sleeps on nearly every call. */
    CHECK(sleeps < 25);

    /* PARKED keeps its budget: with a 0 us spin the caller sleeps whenever the worker is still
     * busy, which it is for 200 us. This shows the measure sees the sleeps it counts. */
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    setenv("UFORM_SPIN_MICROSECONDS", "0", 1);
    uform_executor_t *parked = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &parked));
    long parked_sleeps = sleeps_over_calls(parked, 100);
    printf("PARKED with a 0 us spin: the caller slept %ld times over 100 calls\n", parked_sleeps);
    CHECK(parked_sleeps > 0);
    CHECK_OK(uform_executor_free(parked));
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
