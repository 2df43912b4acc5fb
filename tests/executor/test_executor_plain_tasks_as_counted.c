/* A call with no progress and no cancel flag (call NULL) runs its tasks through a loop of its own
 * (executor_fork_join.c: run_plain_tasks for a share, uform__run_plain_on_caller for a 1-thread
 * executor or a single task, which build no job in memory). It must
 * keep every rule of the general loop, which a progress callback selects: the same tasks run, a
 * failure stops the later tasks of its own share and of the others, the failing callback's own
 * message is the call's, the first task of a share starts even after another share failed, and
 * the inline path runs tasks [first, n) in order. Each case runs both ways and compares. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "executor/executor_internal.h"
#include "test.h"

enum { TASKS = 64, FAIL_AT = 3 };

static _Atomic uint32_t ran[TASKS];
static _Atomic size_t order_next;
static size_t order[TASKS];

static void reset(void) {
    for (size_t i = 0; i < TASKS; i++) atomic_store(&ran[i], 0);
    atomic_store(&order_next, 0);
}

/* Fails at FAIL_AT, leaving a message of its own on the thread (a refused nested call's). */
static uform_status_t fail_with_message(void *context, size_t task, size_t thread) {
    (void)context;
    (void)thread;
    atomic_fetch_add(&ran[task], 1);
    order[atomic_fetch_add(&order_next, 1) % TASKS] = task;
    if (task != FAIL_AT) return UFORM_STATUS_OK;
    uform_executor_for_n(NULL, NULL, 1, NULL, NULL); /* "the callback is NULL" */
    return UFORM_STATUS_CALLBACK_FAILED;
}

/* Fails at FAIL_AT leaving no message of its own: the call's must not be an older one of the
 * thread's (run() leaves a stale one first). */
static uform_status_t fail_quietly(void *context, size_t task, size_t thread) {
    (void)context;
    (void)thread;
    atomic_fetch_add(&ran[task], 1);
    order[atomic_fetch_add(&order_next, 1) % TASKS] = task;
    return task == FAIL_AT ? UFORM_STATUS_CALLBACK_FAILED : UFORM_STATUS_OK;
}

static uform_status_t count_only(void *context, size_t task, size_t thread) {
    (void)context;
    (void)thread;
    atomic_fetch_add(&ran[task], 1);
    order[atomic_fetch_add(&order_next, 1) % TASKS] = task;
    return UFORM_STATUS_OK;
}

/* Each task notes that it ran with this context (its own slot, so no two tasks share a word). */
typedef struct contexts_t {
    _Atomic uint32_t seen[TASKS];
} contexts_t;

static uform_status_t note_context(void *context, size_t task, size_t thread) {
    (void)thread;
    atomic_fetch_add(&((contexts_t *)context)->seen[task], 1);
    return UFORM_STATUS_OK;
}

static void no_report(void *context, size_t done, size_t total) {
    (void)context;
    (void)done;
    (void)total;
}

/* For "another share's failure stops this share": task 0 (share 0's first) fails at once; task 6
 * (share 1's first, run by the worker or stolen by the caller) waits until the call has recorded
 * that failure (the executor's failure word), so share 1's later tasks (7 to 11) must not start. */
static uform_executor_t *watched;
static uform_status_t fail_first_hold_other(void *context, size_t task, size_t thread) {
    (void)context;
    (void)thread;
    atomic_fetch_add(&ran[task], 1);
    if (task == 0) return UFORM_STATUS_CALLBACK_FAILED;
    if (task == 6)
        while (atomic_load(&watched->failure) == UFORM_STATUS_OK) sched_yield();
    return UFORM_STATUS_OK;
}

typedef struct outcome_t {
    uform_status_t status;
    char message[256];
    uint32_t ran[TASKS];
    size_t order[TASKS], count;
} outcome_t;

/* Runs for_n (or its dynamic form) of `n` tasks of `task`, plain (call NULL) or counted (a
 * progress callback, which takes the general loop). */
static outcome_t run(uform_executor_t *executor, bool dynamic, bool plain, size_t n, uform_task_t task) {
    reset();
    uform_call_t call = UFORM_CALL_INIT;
    call.progress = no_report;
    const uform_call_t *which = plain ? NULL : &call;
    outcome_t outcome;
    memset(&outcome, 0, sizeof outcome);
    /* A stale last error, in words no task leaves: "first 9 is past n 3". */
    CHECK_STATUS(uform__test_for_n_dynamic_from(NULL, 9, 3, count_only, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    outcome.status = dynamic ? uform_executor_for_n_dynamic(executor, which, n, task, NULL)
                             : uform_executor_for_n(executor, which, n, task, NULL);
    snprintf(outcome.message, sizeof outcome.message, "%s", outcome.status ? uform_last_error() : "");
    for (size_t i = 0; i < TASKS; i++) outcome.ran[i] = atomic_load(&ran[i]);
    outcome.count = atomic_load(&order_next);
    memcpy(outcome.order, order, sizeof order);
    return outcome;
}

/* One thread: the same tasks, in the same order, with the same status and message. */
static void same_inline(uform_executor_t *executor, bool dynamic, size_t n, uform_task_t task) {
    outcome_t plain = run(executor, dynamic, true, n, task), counted = run(executor, dynamic, false, n, task);
    CHECK_EQ_INT(plain.status, counted.status);
    CHECK(strcmp(plain.message, counted.message) == 0);
    CHECK_EQ_INT(plain.count, counted.count);
    for (size_t i = 0; i < TASKS; i++) CHECK_EQ_INT(plain.ran[i], counted.ran[i]);
    for (size_t i = 0; i < plain.count && i < TASKS; i++) CHECK_EQ_INT(plain.order[i], i); /* in order */
}

int main(void) {
    uform_executor_t *one = NULL, *two = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &one));
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &two));

    /* Inline (the NULL executor, a 1-thread executor, a single task): every task to the failure,
     * none after it, the callback's message in the call's. */
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        same_inline(NULL, dynamic, TASKS, fail_with_message);
        same_inline(one, dynamic, TASKS, fail_with_message);
        same_inline(one, dynamic, TASKS, count_only);
        same_inline(two, dynamic, 1, count_only);
        outcome_t failed = run(one, dynamic, true, TASKS, fail_with_message);
        CHECK_EQ_INT(failed.status, UFORM_STATUS_CALLBACK_FAILED);
        CHECK_EQ_INT(failed.count, (size_t)FAIL_AT + 1);
        CHECK(strstr(failed.message, "callback is NULL") != NULL);
        CHECK(strstr(failed.message, "past n") == NULL);
        /* A callback that says nothing: the call names its status, never the stale message. */
        same_inline(NULL, dynamic, TASKS, fail_quietly);
        same_inline(one, dynamic, TASKS, fail_quietly);
        outcome_t quiet = run(one, dynamic, true, TASKS, fail_quietly);
        CHECK_EQ_INT(quiet.status, UFORM_STATUS_CALLBACK_FAILED);
        CHECK_EQ_INT(quiet.count, (size_t)FAIL_AT + 1);
        CHECK(strstr(quiet.message, "past n") == NULL);
        CHECK(strstr(quiet.message, "uform_executor_for_n") != NULL);
        CHECK(strstr(quiet.message, "CALLBACK_FAILED") != NULL);
    }
    /* Tasks [first, n) on one thread (the test seam's first): in order from `first`, and none
     * when first == n. */
    reset();
    CHECK_OK(uform__test_for_n_dynamic_from(one, 5, 9, count_only, NULL));
    CHECK_EQ_INT(atomic_load(&order_next), 4);
    for (size_t i = 0; i < 4; i++) CHECK_EQ_INT(order[i], 5 + i);
    reset();
    CHECK_OK(uform__test_for_n_dynamic_from(one, 9, 9, count_only, NULL));
    CHECK_EQ_INT(atomic_load(&order_next), 0);

    /* Two threads, 12 tasks: shares [0, 6) and [6, 12). The failure at FAIL_AT (3) stops share 0
     * there (4 and 5 never run); share 1 runs at least its first task whatever happened (a
     * barrier between slots must end), and no task runs twice. Plain and counted agree. */
    for (int round = 0; round < 200; round++) {
        outcome_t plain = run(two, false, true, 12, fail_with_message);
        CHECK_EQ_INT(plain.status, UFORM_STATUS_CALLBACK_FAILED);
        CHECK(strstr(plain.message, "callback is NULL") != NULL);
        for (size_t i = 0; i <= FAIL_AT; i++) CHECK_EQ_INT(plain.ran[i], 1); /* share 0 up to its failure */
        for (size_t i = FAIL_AT + 1; i < 6; i++) CHECK_EQ_INT(plain.ran[i], 0); /* and no further */
        CHECK_EQ_INT(plain.ran[6], 1);                                        /* share 1's first task */
        for (size_t i = 0; i < 12; i++) CHECK(plain.ran[i] <= 1);             /* none twice */
        outcome_t counted = run(two, false, false, 12, fail_with_message);
        CHECK_EQ_INT(counted.status, plain.status);
        CHECK_EQ_INT(counted.ran[6], 1);
        for (size_t i = FAIL_AT + 1; i < 6; i++) CHECK_EQ_INT(counted.ran[i], 0);
    }
    /* Share 0 fails at its first task while share 1 runs its first: share 1 stops there. */
    watched = two;
    for (int plain = 0; plain < 2; plain++) {
        outcome_t stopped = run(two, false, plain, 12, fail_first_hold_other);
        CHECK_EQ_INT(stopped.status, UFORM_STATUS_CALLBACK_FAILED);
        CHECK_EQ_INT(stopped.ran[0], 1);
        CHECK_EQ_INT(stopped.ran[6], 1);
        for (size_t i = 1; i < 12; i++)
            if (i != 6) CHECK_EQ_INT(stopped.ran[i], 0);
    }
    /* Without a failure every task runs exactly once, both ways, static and dynamic. */
    for (int dynamic = 0; dynamic < 2; dynamic++)
        for (int plain = 0; plain < 2; plain++) {
            outcome_t all = run(two, dynamic, plain, TASKS, count_only);
            CHECK_OK(all.status);
            for (size_t i = 0; i < TASKS; i++) CHECK_EQ_INT(all.ran[i], 1);
        }
    /* The published job (executor_verbs.c, forks_published): a call equal to the last one forks
     * it as published, a different one (its context, its n, its function, a progress callback)
     * publishes its own first. Each task records the context it was given. */
    for (int round = 0; round < 50; round++) {
        static contexts_t first_contexts, second_contexts;
        contexts_t *which[6] = {&first_contexts, &first_contexts, &second_contexts,
                                &second_contexts, &first_contexts, &second_contexts};
        size_t sizes[6] = {TASKS, TASKS, TASKS, 12, 12, TASKS};
        for (int call = 0; call < 6; call++) {
            memset(which[call]->seen, 0, sizeof which[call]->seen);
            uform_call_t counted = UFORM_CALL_INIT;
            counted.progress = no_report;
            const uform_call_t *how = round % 2 && call == 3 ? &counted : NULL;
            CHECK_OK(uform_executor_for_n(two, how, sizes[call], note_context, which[call]));
            for (size_t i = 0; i < TASKS; i++) CHECK_EQ_INT(which[call]->seen[i], i < sizes[call] ? 1 : 0);
        }
        /* A failure, then the same job without one: the failure is not the published job's. */
        outcome_t failed = run(two, false, true, 12, fail_with_message);
        CHECK_EQ_INT(failed.status, UFORM_STATUS_CALLBACK_FAILED);
        outcome_t clean = run(two, false, true, 12, count_only);
        CHECK_OK(clean.status);
        CHECK_OK(run(two, false, true, 12, count_only).status);
    }
    CHECK_OK(uform_executor_free(one));
    CHECK_OK(uform_executor_free(two));
    TEST_DONE();
}
