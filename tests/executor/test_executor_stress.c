/* 100,000+ random calls, drains, mood changes and deferred submissions across several
 * executors driven by several threads, without a hang and with every task counted. Runs under
 * TSan in CI. UFORM_STRESS_OPERATIONS overrides the count (tests only). */
#include "executor/executor_test_util.h"
#include "test.h"

#define EXECUTORS 3
#define DRIVERS 3

static uform_executor_t *executors[EXECUTORS];
static _Atomic unsigned long long tasks_run, tasks_expected;
static _Atomic unsigned long long contended;
static size_t operations_per_driver = 35000;

static uform_status_t count(void *context, size_t task, size_t thread) {
    atomic_fetch_add_explicit(&tasks_run, 1, memory_order_relaxed);
    return UFORM_STATUS_OK;
}
static uform_status_t count_slice(void *context, size_t first, size_t n, size_t thread) {
    atomic_fetch_add_explicit(&tasks_run, n, memory_order_relaxed);
    return UFORM_STATUS_OK;
}

static unsigned next_random(unsigned *state) {
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

static void *drive(void *argument) {
    unsigned seed = (unsigned)(uintptr_t)argument * 2654435761u + 1;
    uform_deferred_t *pending[8] = {0};
    for (size_t op = 0; op < operations_per_driver; op++) {
        unsigned r = next_random(&seed);
        uform_executor_t *executor = executors[r % EXECUTORS];
        size_t n = (r >> 4) % 64;
        uform_status_t status = UFORM_STATUS_OK;
        switch ((r >> 12) % 16) {
        case 0: status = uform_executor_drain(executor, (r >> 20) & 1 ? UFORM_MOOD_SPINNING : UFORM_MOOD_PARKED); break;
        case 1:
        case 2: {
            size_t slot = (r >> 20) % 8;
            if (pending[slot]) {
                CHECK_OK(uform_deferred_wait(pending[slot], -1));
                uform_deferred_free(pending[slot]);
                pending[slot] = NULL;
            }
            uform_call_t call = UFORM_CALL_INIT;
            call.deferred = &pending[slot];
            status = uform_executor_for_n_dynamic(executor, &call, n, count, NULL);
            if (status == UFORM_STATUS_OK) atomic_fetch_add(&tasks_expected, n);
            break;
        }
        case 3:
            status = uform_executor_for_slices(executor, NULL, n, count_slice, NULL);
            if (status == UFORM_STATUS_OK) atomic_fetch_add(&tasks_expected, n);
            break;
        case 4:
            status = uform_executor_for_threads(executor, NULL, count, NULL);
            if (status == UFORM_STATUS_OK) atomic_fetch_add(&tasks_expected, uform_executor_threads(executor));
            break;
        default:
            status = ((r >> 20) & 1 ? uform_executor_for_n : uform_executor_for_n_dynamic)(executor, NULL, n, count,
                                                                                          NULL);
            if (status == UFORM_STATUS_OK) atomic_fetch_add(&tasks_expected, n);
        }
        if (status == UFORM_STATUS_CONTENDED)
            atomic_fetch_add(&contended, 1);
        else if (status != UFORM_STATUS_OK) {
            fprintf(stderr, "operation %zu: %s: %s\n", op, uform_status_name(status), uform_last_error());
            exit(1);
        }
    }
    for (size_t slot = 0; slot < 8; slot++)
        if (pending[slot]) {
            CHECK_OK(uform_deferred_wait(pending[slot], -1));
            uform_deferred_free(pending[slot]);
        }
    return NULL;
}

int main(void) {
    const char *override = getenv("UFORM_STRESS_OPERATIONS");
    if (override) operations_per_driver = strtoull(override, NULL, 10) / DRIVERS + 1;
    size_t threads[EXECUTORS] = {1, 2, 4};
    for (int i = 0; i < EXECUTORS; i++)
        CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads[i], 4, &executors[i]));
    pthread_t drivers[DRIVERS];
    for (uintptr_t i = 0; i < DRIVERS; i++) CHECK(pthread_create(&drivers[i], NULL, drive, (void *)i) == 0);
    for (int i = 0; i < DRIVERS; i++) pthread_join(drivers[i], NULL);
    for (int i = 0; i < EXECUTORS; i++) CHECK_OK(uform_executor_free(executors[i]));
    printf("%zu operations, %llu tasks, %llu contended\n", operations_per_driver * DRIVERS,
           (unsigned long long)tasks_run, (unsigned long long)contended);
    CHECK_EQ_INT(atomic_load(&tasks_run), atomic_load(&tasks_expected));
    TEST_DONE();
}
