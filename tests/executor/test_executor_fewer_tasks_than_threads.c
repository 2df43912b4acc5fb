/* A call with fewer tasks than threads forks only the threads that have one (executor_internal.h,
 * "the generation word"): the others see the call's word, find their index at or past its count,
 * and neither claim nor store anything; the joiner waits for the participants alone.
 *
 * - Which threads take part: on 5 threads, a call of n < 5 tasks (every verb with a split) runs
 *   task i on thread i, and only workers 1..n-1 claim a share of it or store its `done` (the
 *   others' words keep an older call's number), and no task past n runs; n >= 5 and
 *   FOR_THREADS take every worker. Synchronous calls (plain, and with progress: the path a plain
 *   call skips), each twice (the second finds its job published), and deferred ones (forked by
 *   the leader thread). A dynamic call that fails at once leaves tasks in its threads' blocks;
 *   the smaller dynamic calls after it must not take them.
 * - The count and the call's number travel together: calls whose count changes on every call
 *   (2, 5, 3, 4, 2, ...) run back to back while a hook stalls a worker right after it read the
 *   word (window 6 of the claim protocol), so a worker often reads a word the next call has
 *   already replaced. Every task must run exactly once, no slot on two threads at once, in both
 *   moods, static and dynamic, with idle pauses so PARKED workers sleep and are stolen from.
 *
 * Mutants this catches: workers that ignore the count (workers past n claim); a joiner
 * that waits for every thread while the others skip (a hang, the test's timeout); a count read
 * from a field of its own after the word (a stalled worker pairs one call's number with the
 * next call's larger count, claims a share nobody waits for and runs it on the next job: tasks
 * run twice or on two threads at once); a dynamic call that steps over every thread's block
 * instead of its participants' (the failed call's leftover tasks run in the next call). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "executor/executor_internal.h"
#include "executor/executor_test_util.h"
#include "test.h"

#define THREADS 5
#define MAX_TASKS 8

typedef struct {
    _Atomic unsigned long counts[MAX_TASKS];
    _Atomic size_t thread_of[MAX_TASKS];
    _Atomic int running[THREADS]; /* 1 while a task runs on that thread */
    _Atomic int overlaps;
} tally_t;

static tally_t tally;

static _Atomic int failing; /* 1: every task fails at once */

static uform_status_t record(void *context, size_t task, size_t thread) {
    (void)context;
    if (atomic_load(&failing)) return UFORM_STATUS_INVALID_ARGUMENT;
    if (thread >= THREADS || task >= MAX_TASKS) {
        atomic_fetch_add(&tally.overlaps, 1000); /* outside the call: fails the counts below */
        return UFORM_STATUS_OK;
    }
    if (atomic_exchange(&tally.running[thread], 1)) atomic_fetch_add(&tally.overlaps, 1);
    atomic_fetch_add(&tally.counts[task], 1);
    atomic_store(&tally.thread_of[task], thread);
    atomic_store(&tally.running[thread], 0);
    return UFORM_STATUS_OK;
}

static uform_status_t record_slice(void *context, size_t first, size_t count, size_t thread) {
    for (size_t i = first; i < first + count; i++) record(context, i, thread);
    return UFORM_STATUS_OK;
}

typedef enum { STATIC, DYNAMIC, SLICES, VERBS } verb_t;
static const char *const verb_names[VERBS] = {"for_n", "for_n_dynamic", "for_slices"};

/* How a call runs: synchronous and plain; with progress (the path a plain call skips); or
 * deferred, forked by the executor's leader thread instead of the caller. */
typedef enum { PLAIN, WITH_PROGRESS, DEFERRED, WAYS } way_t;
static const char *const way_names[WAYS] = {"plain", "with progress", "deferred"};

static void ignore_progress(void *context, size_t done, size_t total) { (void)context, (void)done, (void)total; }

static uform_status_t call_as(uform_executor_t *executor, verb_t verb, way_t way, size_t n) {
    uform_call_t options = UFORM_CALL_INIT;
    uform_deferred_t *handle = NULL;
    if (way == WITH_PROGRESS) options.progress = ignore_progress;
    if (way == DEFERRED) options.deferred = &handle;
    uform_call_t *how = way == PLAIN ? NULL : &options;
    uform_status_t status;
    switch (verb) {
    case STATIC: status = uform_executor_for_n(executor, how, n, record, NULL); break;
    case DYNAMIC: status = uform_executor_for_n_dynamic(executor, how, n, record, NULL); break;
    default: status = uform_executor_for_slices(executor, how, n, record_slice, NULL); break;
    }
    if (way != DEFERRED || status != UFORM_STATUS_OK) return status;
    status = uform_deferred_wait(handle, -1);
    uform_deferred_free(handle);
    return status;
}

static uform_status_t call(uform_executor_t *executor, verb_t verb, size_t n) {
    return call_as(executor, verb, PLAIN, n);
}

/** Whether worker `w` claimed or finished the share of call number `call` (its own words, or the
 *  forking thread's stealing it). */
static bool took_part(const uform_executor_t *executor, size_t w, uint64_t call) {
    return atomic_load(&executor->workers[w].claimed) == call || atomic_load(&executor->workers[w].done) == call;
}

/** One call of `n` tasks: each ran once and no other task ran; below THREADS tasks, task i on
 *  thread i, and only workers 1..n-1 claimed a share of the call or stored its `done` (the others
 *  touched neither). */
static void check_participants(uform_executor_t *executor, verb_t verb, way_t way, size_t n) {
    memset(&tally, 0, sizeof tally);
    CHECK_OK(call_as(executor, verb, way, n));
    uint64_t number = uform__generation_call(atomic_load(&executor->generation));
    for (size_t i = 0; i < MAX_TASKS; i++) CHECK_EQ_INT(atomic_load(&tally.counts[i]), i < n);
    CHECK_EQ_INT(atomic_load(&tally.overlaps), 0);
    for (size_t w = 1; w < THREADS; w++) {
        bool took = took_part(executor, w, number);
        if (w >= n && took)
            TEST_FAIL_("%s of %zu tasks, %s: worker %zu, which has no task, took part", verb_names[verb], n,
                       way_names[way], w);
        if (w < n && atomic_load(&executor->workers[w].done) != number)
            TEST_FAIL_("%s of %zu tasks, %s: worker %zu's share is not done", verb_names[verb], n, way_names[way], w);
    }
    if (n < THREADS && verb != DYNAMIC) /* a dynamic call's thread may take another's task */
        for (size_t i = 0; i < n; i++) CHECK_EQ_INT(atomic_load(&tally.thread_of[i]), i);
}

static void which_threads_take_part(uform_mood_t mood) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, THREADS, 0, &executor));
    CHECK_OK(uform_executor_drain(executor, mood));
    /* Up and down: each count follows a larger and a smaller one, and each call comes twice (the
     * second finds its job published already and takes the path that does not copy it). */
    for (int round = 0; round < 10; round++)
        for (way_t way = PLAIN; way < WAYS; way++)
            for (verb_t verb = STATIC; verb < VERBS; verb++) {
                for (size_t n = 2; n <= MAX_TASKS; n++)
                    for (int twice = 0; twice < 2; twice++) check_participants(executor, verb, way, n);
                for (size_t n = MAX_TASKS - 1; n >= 2; n--)
                    for (int twice = 0; twice < 2; twice++) check_participants(executor, verb, way, n);
            }
    /* A dynamic call that fails at once leaves tasks in the blocks of its threads: a call of
     * fewer tasks after it must not take them from the blocks of threads it does not fork. */
    for (int round = 0; round < 20; round++) {
        failing = 1;
        CHECK_STATUS(call(executor, DYNAMIC, MAX_TASKS), UFORM_STATUS_INVALID_ARGUMENT);
        failing = 0;
        check_participants(executor, DYNAMIC, PLAIN, 2);
        check_participants(executor, DYNAMIC, PLAIN, 3);
    }
    /* FOR_THREADS after a call of 2: every thread. */
    check_participants(executor, STATIC, PLAIN, 2);
    memset(&tally, 0, sizeof tally);
    CHECK_OK(uform_executor_for_threads(executor, NULL, record, NULL));
    uint64_t number = uform__generation_call(atomic_load(&executor->generation));
    for (size_t w = 1; w < THREADS; w++) CHECK_EQ_INT(atomic_load(&executor->workers[w].done) == number, 1);
    for (size_t i = 0; i < THREADS; i++) CHECK_EQ_INT(atomic_load(&tally.counts[i]), 1);
    CHECK_OK(uform_executor_free(executor));
    printf("%s: calls of 2..%d tasks on %d threads forked the workers with a task, and only those\n",
           mood == UFORM_MOOD_SPINNING ? "SPINNING" : "PARKED", MAX_TASKS, THREADS);
}

static _Atomic unsigned long word_reads;
static void stall_after_word(int where) {
    if (where != 6) return;
    /* 30 us, every third read: past the forking thread's 4 us wait before it steals. */
    if (atomic_fetch_add(&word_reads, 1) % 3 == 0) {
        struct timespec pause = {0, 30000};
        nanosleep(&pause, NULL);
    }
}

/** Calls whose count changes on every call, for `seconds`, a worker stalled after reading the
 *  word; returns the calls made. */
static unsigned long changing_counts(size_t threads, uform_mood_t mood, double seconds) {
    static const size_t counts[] = {2, 5, 3, 4, 2, 3, 5, 2, 4, 3};
    enum { COUNTS = sizeof counts / sizeof *counts };
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &executor));
    CHECK_OK(uform_executor_drain(executor, mood));
    memset(&tally, 0, sizeof tally);
    unsigned long expected[MAX_TASKS] = {0}, calls = 0;
    double deadline = seconds_now() + seconds;
    while (seconds_now() < deadline) {
        for (int i = 0; i < 100; i++, calls++) {
            size_t n = counts[calls % COUNTS];
            verb_t verb = (verb_t)(calls / COUNTS % VERBS);
            uform_status_t status = call(executor, verb, n);
            if (status != UFORM_STATUS_OK) TEST_FAIL_("call %lu: %s", calls, uform_status_name(status));
            for (size_t t = 0; t < n; t++) expected[t]++;
            if (i % 23 == 0) { /* let PARKED workers fall asleep */
                struct timespec pause = {0, 100000};
                nanosleep(&pause, NULL);
            }
        }
    }
    for (size_t t = 0; t < MAX_TASKS; t++) CHECK_EQ_INT(atomic_load(&tally.counts[t]), expected[t]);
    CHECK_EQ_INT(atomic_load(&tally.overlaps), 0);
    CHECK_OK(uform_executor_free(executor));
    return calls;
}

int main(void) {
    which_threads_take_part(UFORM_MOOD_SPINNING);
    which_threads_take_part(UFORM_MOOD_PARKED);

    /* PARKED workers sleep after 2 us idle: sleeps, wakes and steals come often. */
    setenv("UFORM_SPIN_MICROSECONDS", "2", 1);
    atomic_store(&uform__test_claim_window, stall_after_word);
    size_t threads[] = {4, 5};
    for (size_t t = 0; t < 2; t++) {
        unsigned long before = atomic_load(&word_reads);
        unsigned long calls = changing_counts(threads[t], UFORM_MOOD_PARKED, 0.4);
        calls += changing_counts(threads[t], UFORM_MOOD_SPINNING, 0.4);
        unsigned long reads = atomic_load(&word_reads) - before;
        printf("%zu threads, counts changing every call: %lu calls exact, a worker stalled after %lu of %lu word reads\n",
               threads[t], calls, (reads + 2) / 3, reads);
        CHECK(reads > 0); /* the window was reached */
    }
    atomic_store(&uform__test_claim_window, NULL);
    TEST_DONE();
}
