/* A call's fixed cost as a program linking uform sees it: a loop of `uform_executor_for_n` of
 * 2 tasks (a counter bump on a line of each task's own) on a SPINNING executor, built twice,
 * once against the static library (uform-bench-call-static) and once against the shared one
 * (uform-bench-call-shared), so the two linkages can be timed side by side:
 *
 *     uform-bench-call-static [--threads N] [--calls M] [--runs R]
 *
 * With 1 thread (the default) a call runs inline, and what is left is the API's path: the
 * hold, the checks, the job, the thread-locals. Prints each run's ns a call and their median.
 * A benchmark, not a test: no figure is judged. Pin it (`taskset -c 1`) to compare runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uform.h"

#ifndef UFORM_BENCH_CALL_LINKAGE
#define UFORM_BENCH_CALL_LINKAGE "unknown"
#endif

typedef struct slots_t {
    _Alignas(128) long bumps[2][16]; /* a line pair of its own for each task */
} slots_t;

static uform_status_t bump(void *context, size_t i, size_t thread) {
    (void)thread;
    ((slots_t *)context)->bumps[i][0]++;
    return UFORM_STATUS_OK;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(const char *program) {
    fprintf(stderr, "usage: %s [--threads N] [--calls M] [--runs R]\n", program);
    return 2;
}

int main(int argc, char **argv) {
    long threads = 1, calls = 5000000, runs = 5;
    for (int i = 1; i < argc; i++) {
        long *target = !strcmp(argv[i], "--threads") ? &threads
                       : !strcmp(argv[i], "--calls") ? &calls
                       : !strcmp(argv[i], "--runs")  ? &runs
                                                     : NULL;
        if (!target || i + 1 == argc) return usage(argv[0]);
        char *end;
        *target = strtol(argv[++i], &end, 10);
        if (*end || *target < 1) return usage(argv[0]);
    }
    if (runs > 99) return usage(argv[0]);
    uform_executor_t *executor = NULL;
    if (uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, (size_t)threads, 0, &executor) != UFORM_STATUS_OK) {
        fprintf(stderr, "uform_executor_for_ram: %s\n", uform_last_error());
        return 1;
    }
    uform_executor_drain(executor, UFORM_MOOD_SPINNING);
    static slots_t slots;
    for (long i = 0; i < calls / 10 + 1; i++) /* warm up: the bias, the caches, the clocks */
        if (uform_executor_for_n(executor, NULL, 2, bump, &slots) != UFORM_STATUS_OK) return 1;
    double per_call[99];
    printf("%s library, %ld thread(s), %ld calls a run:", UFORM_BENCH_CALL_LINKAGE, threads, calls);
    for (long run = 0; run < runs; run++) {
        double start = now_ns();
        for (long i = 0; i < calls; i++)
            if (uform_executor_for_n(executor, NULL, 2, bump, &slots) != UFORM_STATUS_OK) {
                fprintf(stderr, "uform_executor_for_n: %s\n", uform_last_error());
                return 1;
            }
        per_call[run] = (now_ns() - start) / (double)calls;
        printf(" %.1f", per_call[run]);
    }
    qsort(per_call, (size_t)runs, sizeof per_call[0], compare);
    printf(" ns a call; median %.1f ns\n", per_call[runs / 2]);
    uform_executor_free(executor);
    long expected = (calls / 10 + 1) + calls * runs;
    return slots.bumps[0][0] == expected && slots.bumps[1][0] == expected ? 0 : 1;
}
