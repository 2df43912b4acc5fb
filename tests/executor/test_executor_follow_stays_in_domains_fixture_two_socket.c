/* A worker is never moved out of its executor's NUMA domains to follow a caller. The forking
 * thread is the user's and unpinned; when the scheduler moves it onto a core where one of the
 * executor's pinned workers lives, that worker is re-pinned onto the core the caller left, but
 * only if that core is one the executor reserved. Run on the two-socket fixture (node 0 holds
 * CPUs 0-19,40-59, node 1 CPUs 20-39,60-79) with an executor on node 1, through two test hooks:
 * where the caller runs, and the re-pin (recorded, since the fixture's CPUs are not this
 * machine's). Before, a caller that had passed through node 0 dragged a node-1 worker there. */
#include "executor/executor_internal.h"
#include "hardware/fixture.h"

static _Atomic int caller_cpu = -1;
static int fake_current_cpu(void) { return atomic_load(&caller_cpu); }

static int32_t pins[64];
static _Atomic size_t pin_count = 0;
static bool record_pin(uform__thread_t thread, int32_t cpu) {
    size_t i = atomic_fetch_add(&pin_count, 1);
    if (i < 64) pins[i] = cpu;
    return true; /* as if the kernel took it */
}

static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

static bool on_node1(int32_t cpu) { return (cpu >= 20 && cpu <= 39) || (cpu >= 60 && cpu <= 79); }

static void call_from(uform_executor_t *executor, int cpu) {
    atomic_store(&caller_cpu, cpu);
    CHECK_OK(uform_executor_for_n(executor, NULL, 64, nothing, NULL));
}

int main(void) {
    use_fixture("two_socket_6248_smt");
    uform__test_current_cpu = fake_current_cpu;
    uform__test_pin = record_pin;
    int32_t node = 1;
    uform_executor_t *executor = NULL;
    atomic_store(&caller_cpu, 20); /* created from a node-1 core */
    CHECK_OK(uform_executor_for_ram(&node, 1, UFORM_CPU_CLASS_NONE, 3, 0, &executor));
    int32_t slot0 = executor->cpus[0], w1 = executor->workers[1].cpu, w2 = executor->workers[2].cpu;
    CHECK(on_node1(slot0) && on_node1(w1) && on_node1(w2));
    CHECK(slot0 != w1 && w1 != w2 && slot0 != w2);

    /* The caller moves onto worker 1's core: worker 1 takes the core the caller left (ours). */
    call_from(executor, w1);
    CHECK_EQ_INT(atomic_load(&pin_count), 1);
    CHECK_EQ_INT(pins[0], slot0);
    CHECK_EQ_INT(executor->workers[1].cpu, slot0);

    /* The caller passes through node 0, then lands on worker 2's core: the core it left is not
     * ours, so worker 2 stays where it is (sharing a core for now beats leaving its domain). */
    call_from(executor, 3);
    call_from(executor, w2);
    CHECK_EQ_INT(atomic_load(&pin_count), 1);
    CHECK_EQ_INT(executor->workers[2].cpu, w2);
    for (size_t i = 1; i < 3; i++) CHECK(on_node1(executor->workers[i].cpu));

    /* Back on a core of ours that no worker holds, then onto worker 2's: the swap is allowed. */
    call_from(executor, w1); /* worker 1 moved to slot0 above, so w1's core is free now */
    call_from(executor, w2);
    CHECK_EQ_INT(atomic_load(&pin_count), 2);
    CHECK_EQ_INT(pins[1], w1);
    for (size_t i = 1; i < 3; i++) CHECK(on_node1(executor->workers[i].cpu));

    CHECK_OK(uform_executor_free(executor));
    uform__test_current_cpu = NULL;
    uform__test_pin = NULL;
    TEST_DONE();
}
