/*
 * `uform bench --executors` (part of the default run): several uform executors in one process,
 * each driven at once from its own thread, beside the same total work on one executor.
 *
 * A configuration is E executors of T threads each (T = the cores, or cores / E), each driven
 * by its own thread with `for_n` calls of T items of a little work (bench/work.h); every call
 * is checked. Its reference is one executor of `cores` threads driven by one thread with calls
 * of E x T items: the same work per round. Figures: each driver's time per call (median over
 * drivers, and the slowest), and items per second of all drivers together; the ratio is that
 * throughput over the reference's (below 1: the executors together get less done than one).
 * Every configuration runs in a fresh process, rounds interleaved, medians printed.
 */
#include "modes.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "rounds.h"
#include "spawn.h"
#include "uform/executor.h"
#include "work.h"

#define MAX_EXECUTORS 16
#define MAX_CONFIGS 64
#define MAX_ROUNDS 64

static uform_status_t work_task(void *context, size_t task, size_t thread) {
    (void)thread;
    bench_work_item(context, task);
    return UFORM_STATUS_OK;
}

typedef struct driver_t {
    pthread_t thread;
    uform_executor_t *executor;
    size_t items;
    double begin, end; /* timed window: [begin, end) after the shared warm-up */
    atomic_int *ready;
    int failed;
    size_t calls;
    double elapsed;
} driver_t;

static void *drive(void *argument) {
    driver_t *d = (driver_t *)argument;
    bench_work_slot_t *slots = aligned_alloc(128, sizeof(bench_work_slot_t) * d->items);
    memset(slots, 0, sizeof(bench_work_slot_t) * d->items);
    size_t expected = 0;
    atomic_fetch_sub(d->ready, 1);
    while (atomic_load(d->ready) > 0) {
    } /* every driver starts at once */
    double now = bench_now_seconds(), start = 0;
    for (int timed = 0; timed < 2 && !d->failed; timed++) {
        double const until = timed ? d->end : d->begin;
        if (timed) start = now, d->calls = 0;
        while (now < until && !d->failed) {
            uform_status_t status = uform_executor_for_n(d->executor, NULL, d->items, work_task, slots);
            if (status != UFORM_STATUS_OK) {
                fprintf(stderr, "uform_executor_for_n: %s (%s)\n", uform_status_name(status), uform_last_error());
                d->failed = 1;
            }
            d->failed |= bench_work_check(slots, d->items, ++expected, "executors");
            d->calls++;
            now = bench_now_seconds();
        }
    }
    d->elapsed = now - start;
    free(slots);
    return NULL;
}

int bench_executors_child(options_t const *o, char const *spec) {
    size_t executors = 0, threads = 0, items = 0;
    char mood_name[32];
    if (sscanf(spec, "%zu:%zu:%zu:%31s", &executors, &threads, &items, mood_name) != 4 || !executors ||
        executors > MAX_EXECUTORS || !threads || !items) {
        fprintf(stderr, "uform bench: bad executors spec %s\n", spec);
        return 1;
    }
    uform_mood_t const mood = strcmp(mood_name, "spinning") == 0 ? UFORM_MOOD_SPINNING : UFORM_MOOD_PARKED;
    driver_t drivers[MAX_EXECUTORS];
    memset(drivers, 0, sizeof(drivers));
    atomic_int ready = (int)executors;
    int failed = 0;
    size_t made = 0;
    for (; made < executors; made++) {
        uform_status_t status =
            uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &drivers[made].executor);
        if (status == UFORM_STATUS_OK) status = uform_executor_drain(drivers[made].executor, mood);
        if (status != UFORM_STATUS_OK) {
            fprintf(stderr, "uform bench: executor %zu of %zu: %s (%s)\n", made + 1, executors,
                    uform_status_name(status), uform_last_error());
            if (drivers[made].executor) uform_executor_free(drivers[made].executor);
            failed = 1;
            break;
        }
    }
    double const begin = bench_now_seconds() + 0.01 + o->warmup, end = begin + o->duration;
    size_t started = 0;
    for (size_t i = 0; i < made && !failed; i++, started++) {
        drivers[i] = (driver_t){0, drivers[i].executor, items, begin, end, &ready, 0, 0, 0};
        if (pthread_create(&drivers[i].thread, NULL, drive, drivers + i) != 0) {
            fprintf(stderr, "uform bench: cannot start driver thread %zu\n", i);
            failed = 1;
            atomic_store(&ready, 0);
            break;
        }
    }
    for (size_t i = 0; i < started; i++) {
        pthread_join(drivers[i].thread, NULL);
        failed |= drivers[i].failed;
    }
    for (size_t i = 0; i < made; i++) uform_executor_free(drivers[i].executor);
    if (failed) return 1;
    double per_call[MAX_EXECUTORS], slowest = 0, rate = 0;
    for (size_t i = 0; i < executors; i++) {
        per_call[i] = drivers[i].calls ? drivers[i].elapsed / (double)drivers[i].calls * 1e9 : NAN;
        if (per_call[i] > slowest) slowest = per_call[i];
        rate += drivers[i].elapsed > 0 ? (double)(drivers[i].calls * items) / drivers[i].elapsed : 0;
    }
    char line[256];
    snprintf(line, sizeof(line), "call=%.6g slowest=%.6g rate=%.6g", bench_median(per_call, executors), slowest, rate);
    bench_print_result(line);
    return 0;
}

typedef struct exec_config_t {
    size_t executors, threads, items;
    char const *mood;
} exec_config_t;

typedef struct exec_result_t {
    int ok;
    double call, slowest, rate;
} exec_result_t;

static int parse_exec(char const *line, void *out) {
    exec_result_t *x = (exec_result_t *)out;
    x->ok = sscanf(line, "call=%lf slowest=%lf rate=%lf", &x->call, &x->slowest, &x->rate) == 3;
    return !x->ok;
}

static size_t find_or_add(exec_config_t *configs, size_t *count, exec_config_t c) {
    for (size_t i = 0; i < *count; i++)
        if (configs[i].executors == c.executors && configs[i].threads == c.threads && configs[i].items == c.items &&
            !strcmp(configs[i].mood, c.mood))
            return i;
    configs[*count] = c;
    return (*count)++;
}

int bench_executors_run(options_t const *o, char **self_argv) {
    size_t const cores = bench_usable_cores();
    static char const *const moods[2] = {"spinning", "parked"};
    static size_t const executor_counts[3] = {1, 2, 4};
    /* Measured rows: (mood, E, T) with its configuration and its one-executor reference. */
    typedef struct row_t {
        size_t multi, reference;
    } row_t;
    static exec_config_t configs[MAX_CONFIGS];
    row_t rows[2 * 3 * 2];
    size_t count = 0, row_count = 0;
    for (int m = 0; m < 2; m++)
        for (size_t e = 0; e < 3; e++)
            for (int split = 0; split < 2; split++) {
                size_t const E = executor_counts[e];
                size_t const T = split ? (cores / E ? cores / E : 1) : cores;
                if (split && T == cores) continue; /* the same row as the unsplit one */
                size_t const multi = find_or_add(configs, &count, (exec_config_t){E, T, T, moods[m]});
                size_t const reference = find_or_add(configs, &count, (exec_config_t){1, cores, E * T, moods[m]});
                rows[row_count++] = (row_t){multi, reference};
            }
    static bench_round_config_t children[MAX_CONFIGS];
    for (size_t c = 0; c < count; c++) {
        exec_config_t const *cfg = configs + c;
        snprintf(children[c].spec, sizeof children[c].spec, "executors:%zu:%zu:%zu:%s", cfg->executors, cfg->threads,
                 cfg->items, cfg->mood);
        snprintf(children[c].label, sizeof children[c].label, "%zu x %zu threads %s", cfg->executors, cfg->threads,
                 cfg->mood);
    }
    static exec_result_t results[MAX_CONFIGS * MAX_ROUNDS];
    static int ok[MAX_CONFIGS * MAX_ROUNDS];
    bench_rounds_t run = {.part = "--executors",
                          .configs = children,
                          .count = count,
                          .rounds = o->rounds,
                          .parse = parse_exec,
                          .results = results,
                          .result_size = sizeof *results,
                          .ok = ok,
                          .child_seconds = 0.06 + o->warmup + o->duration};
    bench_rounds_run(o, self_argv, &run);
    int const any_failed = run.any_failed;

    static exec_result_t medians[MAX_CONFIGS];
    for (size_t c = 0; c < count; c++) {
        double v[3][MAX_ROUNDS];
        size_t n = 0;
        for (int r = 0; r < o->rounds; r++)
            if (bench_rounds_result(&run, c, r)) {
                exec_result_t const *x = bench_rounds_result(&run, c, r);
                v[0][n] = x->call, v[1][n] = x->slowest, v[2][n] = x->rate;
                n++;
            }
        medians[c] = (exec_result_t){n > 0, bench_median(v[0], n), bench_median(v[1], n), bench_median(v[2], n)};
    }

    char settings[512];
    snprintf(settings, sizeof settings,
             "%d round%s (median of fresh processes), every driver timed %.2g s after %.2g s warm-up, all at once; "
             "one item of work: %d xorshift steps (about %.0f ns serially)",
             o->rounds, o->rounds == 1 ? "" : "s", o->duration, o->warmup, BENCH_WORK_STEPS, bench_work_item_ns());
    bench_rounds_print_header(&run, o, "--executors", ": many executors in one process", settings);

    enum { COLUMNS = 9 };
    static char const *const headers[COLUMNS] = {
        "mood",    "executors x threads", "items per call", "call (median driver)",     "slowest driver",
        "items/s", "one executor: call",  "its items/s",    "throughput / one executor"};
    static char cells[2 * 3 * 2 + 1][COLUMNS][BENCH_CELL];
    for (size_t c = 0; c < COLUMNS; c++) snprintf(cells[0][c], BENCH_CELL, "%s", headers[c]);
    for (size_t i = 0; i < row_count; i++) {
        exec_config_t const *mc = configs + rows[i].multi;
        exec_result_t const *mm = medians + rows[i].multi, *rm = medians + rows[i].reference;
        char(*cell)[BENCH_CELL] = cells[i + 1];
        snprintf(cell[0], BENCH_CELL, "%s", mc->mood);
        snprintf(cell[1], BENCH_CELL, "%zu x %zu", mc->executors, mc->threads);
        snprintf(cell[2], BENCH_CELL, "%zu each (%zu in all)", mc->items, mc->items * mc->executors);
        if (mm->ok) {
            bench_format_time(cell[3], BENCH_CELL, mm->call);
            bench_format_time(cell[4], BENCH_CELL, mm->slowest);
            snprintf(cell[5], BENCH_CELL, "%.3g M", mm->rate * 1e-6);
        } else
            for (int c = 3; c < 6; c++) snprintf(cell[c], BENCH_CELL, "FAILED");
        if (rm->ok) {
            bench_format_time(cell[6], BENCH_CELL, rm->call);
            snprintf(cell[7], BENCH_CELL, "%.3g M", rm->rate * 1e-6);
        } else
            snprintf(cell[6], BENCH_CELL, "FAILED"), snprintf(cell[7], BENCH_CELL, "FAILED");
        bench_format_ratio(cell[8], BENCH_CELL, mm->ok ? mm->rate : NAN, rm->ok ? rm->rate : NAN);
    }
    bench_print_table(&cells[0][0], row_count + 1, COLUMNS, 2);
    printf("\nE x T: E uform executors of T threads each (the caller's included), each driven from its own "
           "thread with calls of T items, all at once; call: a driver's time per call (median driver, and the "
           "slowest). One executor: %zu threads, one driver, calls of E x T items (the same work per round; with "
           "equal throughput its call takes as long as one of the E drivers' calls). throughput / one executor: "
           "items/s of all E drivers together over the one executor's (below 1: together they get less done).\n",
           cores);
    if (any_failed) printf("\nSome configurations FAILED a correctness check, crashed or hung; see stderr.\n");
    fflush(stdout);
    return any_failed;
}
