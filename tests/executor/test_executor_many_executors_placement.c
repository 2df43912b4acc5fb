/* Many executors in one process. Each pins its threads one per core; a new executor takes the
 * cores no other live executor has reserved first, and once none are left it knows it shares
 * (the `sharing` flag its spin loops read), as do the executors it shares with. Freeing one
 * gives its cores back. Checked on this machine's real cores (at least 2 usable), with
 * single-thread executors so the arithmetic holds on any core count. Calls run correctly on
 * all of them at once, each driven from its own thread. */
#include "executor/executor_internal.h"
#include "test.h"

static uform_status_t add(void *context, size_t task, size_t thread) {
    atomic_fetch_add((_Atomic size_t *)context, 1);
    return UFORM_STATUS_OK;
}

static void *drive(void *executor) {
    _Atomic size_t ran = 0;
    for (int i = 0; i < 2000; i++)
        if (uform_executor_for_n(executor, NULL, 16, add, (void *)&ran) != UFORM_STATUS_OK) return (void *)1;
    return atomic_load(&ran) == 2000 * 16 ? NULL : (void *)2;
}

static size_t usable_cores(void) {
    uform_executor_t *probe = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &probe));
    size_t cores = probe->cpu_count;
    CHECK_OK(uform_executor_free(probe));
    return cores;
}

int main(void) {
    size_t cores = usable_cores();
    if (cores < 2) {
        printf("SKIP: placement across executors needs 2 usable cores, this process has %zu\n", cores);
        TEST_DONE();
    }
    if (cores > 64) cores = 64;
    uform_executor_t *executors[65] = {0};
    /* One single-thread executor per core: each reserves a core nobody else has. */
    for (size_t i = 0; i < cores; i++) {
        CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &executors[i]));
        int32_t cpu = executors[i]->cpus[0];
        CHECK_EQ_INT(uform__placement_users(cpu), 1);
        CHECK_EQ_INT(executors[i]->workers[0].cpu, cpu); /* its one thread is pinned there */
        for (size_t j = 0; j < i; j++) CHECK(executors[j]->cpus[0] != cpu);
    }
    for (size_t i = 0; i < cores; i++) CHECK(!atomic_load(&executors[i]->sharing));
    /* One more: no free core is left; it shares, and so does the executor it shares with. */
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &executors[cores]));
    int32_t shared = executors[cores]->cpus[0];
    CHECK_EQ_INT(uform__placement_users(shared), 2);
    CHECK(atomic_load(&executors[cores]->sharing));
    size_t sharing = 0;
    for (size_t i = 0; i < cores; i++)
        if (atomic_load(&executors[i]->sharing)) {
            sharing++;
            CHECK_EQ_INT(executors[i]->cpus[0], shared);
        }
    CHECK_EQ_INT(sharing, 1);
    /* All of them at once, each from its own thread. */
    pthread_t drivers[65];
    for (size_t i = 0; i <= cores; i++) CHECK(pthread_create(&drivers[i], NULL, drive, executors[i]) == 0);
    for (size_t i = 0; i <= cores; i++) {
        void *result = NULL;
        pthread_join(drivers[i], &result);
        CHECK(result == NULL);
    }
    /* Freeing the extra one gives the core back: nobody shares any more. */
    CHECK_OK(uform_executor_free(executors[cores]));
    CHECK_EQ_INT(uform__placement_users(shared), 1);
    for (size_t i = 0; i < cores; i++) CHECK(!atomic_load(&executors[i]->sharing));
    /* A freed core is the first a new executor takes. */
    int32_t freed = executors[0]->cpus[0];
    CHECK_OK(uform_executor_free(executors[0]));
    CHECK_EQ_INT(uform__placement_users(freed), 0);
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &executors[0]));
    CHECK_EQ_INT(executors[0]->cpus[0], freed);
    CHECK(!atomic_load(&executors[0]->sharing));
    /* A two-thread executor on top of them all shares. */
    uform_executor_t *wide = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &wide));
    CHECK(atomic_load(&wide->sharing));
    CHECK(wide->workers[1].cpu != wide->cpus[0] || wide->cpu_count == 1);
    CHECK_OK(uform_executor_free(wide));
    for (size_t i = 0; i < cores; i++) CHECK_OK(uform_executor_free(executors[i]));
    TEST_DONE();
}
