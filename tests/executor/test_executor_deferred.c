/* Deferred calls: handles returned at once, run on the executor's own threads, polled and
 * waited on with timeouts, the table filling up, failures surfacing at wait, progress
 * reaching total, submission order with synchronous calls. */
#include "executor/executor_test_util.h"
#include "test.h"

static gate_t gate;
static _Atomic size_t executed;
static _Atomic int caller_ran_task;
static pthread_t submitter;

static uform_status_t gated(void *context, size_t task, size_t thread) {
    if (pthread_equal(pthread_self(), submitter)) atomic_store(&caller_ran_task, 1);
    gate_pass(&gate);
    atomic_fetch_add(&executed, 1);
    return UFORM_STATUS_OK;
}
static uform_status_t counted(void *context, size_t task, size_t thread) {
    if (pthread_equal(pthread_self(), submitter)) atomic_store(&caller_ran_task, 1);
    atomic_fetch_add(&executed, 1);
    return UFORM_STATUS_OK;
}
static uform_status_t counted_slice(void *context, size_t first, size_t count, size_t thread) {
    atomic_fetch_add(&executed, count);
    return UFORM_STATUS_OK;
}
static uform_status_t fail_on_7(void *context, size_t task, size_t thread) {
    return task == 7 ? UFORM_STATUS_IO_ERROR : UFORM_STATUS_OK;
}

typedef struct {
    _Atomic size_t reports, last, total, decreasing;
} progress_log_t;

static void on_progress(void *context, size_t done, size_t total) {
    progress_log_t *log = context;
    if (done < atomic_load(&log->last)) atomic_store(&log->decreasing, 1);
    atomic_store(&log->last, done);
    atomic_store(&log->total, total);
    atomic_fetch_add(&log->reports, 1);
}

int main(void) {
    submitter = pthread_self();
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 2, &executor));
    gate_init(&gate);

    /* A deferred call returns at once and runs on the executor's threads, not the caller. */
    uform_deferred_t *first = NULL, *second = NULL, *third = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &first;
    CHECK_OK(uform_executor_for_n(executor, &call, 2, gated, NULL));
    CHECK(first != NULL);
    wait_arrived(&gate, 2);
    CHECK_STATUS(uform_deferred_poll(first), UFORM_STATUS_TIMEOUT);
    CHECK_STATUS(uform_deferred_wait(first, 0.05), UFORM_STATUS_TIMEOUT); /* the timeout expires */

    /* The table holds 2: one running, one queued, the third is CONTENDED. */
    call.deferred = &second;
    CHECK_OK(uform_executor_for_n(executor, &call, 10, counted, NULL));
    call.deferred = &third;
    CHECK_STATUS(uform_executor_for_n(executor, &call, 10, counted, NULL), UFORM_STATUS_CONTENDED);
    CHECK(third == NULL);
    CHECK(strstr(uform_last_error(), "deferred table is full") != NULL);

    gate_open(&gate);
    CHECK_OK(uform_deferred_wait(first, -1));
    CHECK_OK(uform_deferred_wait(second, 10.0));
    CHECK_OK(uform_deferred_poll(second));
    CHECK_EQ_INT(atomic_load(&executed), 12);
    CHECK_EQ_INT(atomic_load(&caller_ran_task), 0);
    size_t done = 0, total = 0;
    CHECK_OK(uform_deferred_progress(second, &done, &total));
    CHECK_EQ_INT(done, 10);
    CHECK_EQ_INT(total, 10);
    uform_deferred_free(first);
    uform_deferred_free(second);

    /* A failure surfaces when waited for, not at submission. */
    uform_deferred_t *failing = NULL;
    call.deferred = &failing;
    CHECK_OK(uform_executor_for_n(executor, &call, 100, fail_on_7, NULL));
    CHECK_STATUS(uform_deferred_wait(failing, -1), UFORM_STATUS_IO_ERROR);
    uform_deferred_free(failing);

    /* Progress reaches total, never decreasing, on every verb. */
    for (int verb = 0; verb < 4; verb++) {
        progress_log_t log = {0};
        uform_deferred_t *watched = NULL;
        uform_call_t with_progress = UFORM_CALL_INIT;
        with_progress.deferred = &watched;
        with_progress.progress = on_progress;
        with_progress.progress_context = &log;
        size_t n = 5000, expected_total = n;
        switch (verb) {
        case 0: CHECK_OK(uform_executor_for_n(executor, &with_progress, n, counted, NULL)); break;
        case 1: CHECK_OK(uform_executor_for_n_dynamic(executor, &with_progress, n, counted, NULL)); break;
        case 2:
            expected_total = 2;
            CHECK_OK(uform_executor_for_threads(executor, &with_progress, counted, NULL));
            break;
        default: CHECK_OK(uform_executor_for_slices(executor, &with_progress, n, counted_slice, NULL)); break;
        }
        CHECK_OK(uform_deferred_wait(watched, 30.0));
        CHECK_EQ_INT(atomic_load(&log.last), expected_total);
        CHECK_EQ_INT(atomic_load(&log.total), expected_total);
        CHECK_EQ_INT(atomic_load(&log.decreasing), 0);
        CHECK(atomic_load(&log.reports) >= 1);
        uform_deferred_free(watched);
    }

    /* Synchronous progress too, and submission order: a synchronous call after deferred ones
     * waits for them (it is the same thread's later call, not a contender). */
    progress_log_t log = {0};
    uform_call_t sync_progress = UFORM_CALL_INIT;
    sync_progress.progress = on_progress;
    sync_progress.progress_context = &log;
    atomic_store(&executed, 0);
    uform_deferred_t *queued = NULL;
    call.deferred = &queued;
    CHECK_OK(uform_executor_for_n(executor, &call, 1000, counted, NULL));
    CHECK_OK(uform_executor_for_n(executor, &sync_progress, 1000, counted, NULL));
    CHECK_OK(uform_deferred_poll(queued)); /* it finished before the synchronous call ran */
    CHECK_EQ_INT(atomic_load(&executed), 2000);
    CHECK_EQ_INT(atomic_load(&log.last), 1000);
    uform_deferred_free(queued);

    /* Freeing an unfinished handle waits for it; the executor can be freed before handles. */
    uform_deferred_t *late = NULL;
    call.deferred = &late;
    CHECK_OK(uform_executor_for_n(executor, &call, 64, counted, NULL));
    CHECK_OK(uform_executor_free(executor)); /* drains first */
    CHECK_OK(uform_deferred_poll(late));
    CHECK_OK(uform_deferred_wait(late, 0));
    uform_deferred_free(late);

    /* The NULL executor runs deferred calls at once and hands back a finished handle. */
    uform_deferred_t *inline_call = NULL;
    call.deferred = &inline_call;
    CHECK_OK(uform_executor_for_n(NULL, &call, 10, counted, NULL));
    CHECK_OK(uform_deferred_poll(inline_call));
    uform_deferred_free(inline_call);
    uform_deferred_free(NULL);
    TEST_DONE();
}
