/*
 * `uform bench --threads`: how the fork-join cost grows with threads, from 1 to 4x the cores
 * (1, 2, 4, ... and the core counts), for uform SPINNING and PARKED beside every peer at the
 * same thread counts. Two calls are timed per configuration, each a `for_n` of N = threads
 * items with every item's slot checked after each call:
 *   empty: each item bumps its own 128-byte slot (the fork-join alone);
 *   work:  each item first runs a little work (bench/work.h, about 1 us serially).
 * Each (pool, variant, threads) runs in a fresh process, rounds interleaved, medians printed
 * as two tables (threads across), each cell "time (ratio to the best peer)".
 */
#include "modes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "peers.h"
#include "rounds.h"
#include "spawn.h"
#include "work.h"

#define MAX_CONFIGS 256
#define MAX_ROUNDS 64

/* 1 on the thread that submits calls: how the caller share is counted. */
static _Thread_local size_t on_caller;
typedef struct share_slot_t {
    _Alignas(128) size_t caller;
} share_slot_t;
typedef struct timed_t {
    bench_work_slot_t *slots;
    share_slot_t *shares;
    int work;
} timed_t;

static void timed_item(void *context, size_t item) {
    timed_t *t = (timed_t *)context;
    if (t->work)
        bench_work_item(t->slots, item);
    else
        bench_work_empty_item(t->slots, item);
    t->shares[item].caller += on_caller;
}

/* Time per call over `duration` seconds of ~20 ms batches, after `warmup`; checks each call. */
static int time_calls(options_t const *o, bench_peer_t const *peer, void *pool, size_t items, timed_t *t,
                      size_t *expected, double *ns, double *share) {
    int failed = 0;
    double start = bench_now_seconds(), elapsed = 0;
    size_t warm = 0;
    while (!failed && (elapsed = bench_now_seconds() - start) < o->warmup) {
        failed |= peer->fork_join(pool, items, timed_item, t);
        failed |= bench_work_check(t->slots, items, ++*expected, "warm-up");
        warm++;
    }
    size_t batch = warm && elapsed > 0 ? (size_t)(0.02 * (double)warm / elapsed) : 1;
    if (batch < 1) batch = 1;
    size_t caller_before = 0, caller_after = 0, calls = 0;
    for (size_t i = 0; i < items; i++) caller_before += t->shares[i].caller;
    start = bench_now_seconds(), elapsed = 0;
    while (!failed && elapsed < o->duration) {
        for (size_t k = 0; k < batch && !failed; k++) {
            failed |= peer->fork_join(pool, items, timed_item, t);
            failed |= bench_work_check(t->slots, items, ++*expected, t->work ? "call with work" : "empty call");
        }
        calls += batch;
        elapsed = bench_now_seconds() - start;
        batch = (size_t)(0.02 * (double)calls / elapsed);
        if (batch < 1) batch = 1;
    }
    for (size_t i = 0; i < items; i++) caller_after += t->shares[i].caller;
    *ns = calls ? elapsed / (double)calls * 1e9 : NAN;
    *share = calls ? (double)(caller_after - caller_before) / ((double)calls * (double)items) : NAN;
    return failed;
}

int bench_threads_child(options_t const *o, char const *spec) {
    bench_child_t child;
    if (bench_child_parse(spec, "threads", 0, &child)) return 1;
    void *pool = bench_child_create(&child);
    if (!pool) return 1;
    bench_peer_t const *peer = child.peer;
    size_t const threads = child.threads;
    on_caller = 1;
    bench_work_slot_t *slots = aligned_alloc(128, sizeof(bench_work_slot_t) * threads);
    share_slot_t *shares = aligned_alloc(128, sizeof(share_slot_t) * threads);
    memset(slots, 0, sizeof(bench_work_slot_t) * threads);
    memset(shares, 0, sizeof(share_slot_t) * threads);
    timed_t t = {slots, shares, 0};
    size_t expected = 0;
    double empty_ns = NAN, empty_share = NAN, work_ns = NAN, work_share = NAN;
    int failed = time_calls(o, peer, pool, threads, &t, &expected, &empty_ns, &empty_share);
    t.work = 1;
    if (!failed) failed = time_calls(o, peer, pool, threads, &t, &expected, &work_ns, &work_share);
    peer->destroy(pool);
    free(slots);
    free(shares);
    if (failed) return 1;
    char line[256];
    snprintf(line, sizeof(line), "empty=%.6g eshare=%.6g work=%.6g wshare=%.6g item=%.6g", empty_ns, empty_share,
             work_ns, work_share, bench_work_item_ns());
    bench_print_result(line);
    return 0;
}

typedef struct sweep_config_t {
    bench_peer_t const *peer;
    char const *variant;
    size_t threads;
} sweep_config_t;

typedef struct sweep_result_t {
    int ok;
    double empty, eshare, work, wshare, item;
} sweep_result_t;

static int parse_sweep(char const *line, void *out) {
    sweep_result_t *x = (sweep_result_t *)out;
    x->ok = sscanf(line, "empty=%lf eshare=%lf work=%lf wshare=%lf item=%lf", &x->empty, &x->eshare, &x->work,
                   &x->wshare, &x->item) == 5;
    return !x->ok;
}

static void add_count(options_t *o, size_t n) {
    for (size_t i = 0; i < o->threads_count; i++)
        if (o->threads[i] == n) return;
    if (o->threads_count < BENCH_MAX_THREAD_COUNTS) o->threads[o->threads_count++] = n;
}

static int compare_sizes(void const *a, void const *b) {
    size_t x = *(size_t const *)a, y = *(size_t const *)b;
    return (x > y) - (x < y);
}

/* A caller that ran this much of the items is not forking, however fast it looks. */
#define NOT_A_FORK_SHARE 0.75

int bench_threads_run(options_t const *options, char **self_argv) {
    options_t o = *options;
    size_t const cores = bench_usable_cores();
    if (!o.threads_count) {
        for (size_t n = 1; n <= 4 * cores; n *= 2) add_count(&o, n);
        add_count(&o, cores), add_count(&o, 2 * cores), add_count(&o, 4 * cores);
        qsort(o.threads, o.threads_count, sizeof(size_t), compare_sizes);
    }
    static sweep_config_t configs[MAX_CONFIGS];
    static bench_round_config_t children[MAX_CONFIGS];
    size_t count = 0;
    /* Rows by pool and variant; thread counts across. */
    for (size_t p = 0; p < bench_peers_count; p++) {
        bench_peer_t const *peer = bench_peers[p];
        if (!bench_peer_selected(&o, peer->name) || peer->single_thread_only) continue;
        for (size_t v = 0; v < bench_peer_variant_count(peer); v++)
            for (size_t t = 0; t < o.threads_count && count < MAX_CONFIGS; t++) {
                char const *variant = peer->variants ? peer->variants[v] : NULL;
                configs[count] = (sweep_config_t){peer, variant, o.threads[t]};
                bench_round_config_for_peer(&children[count++], "threads", peer, variant, o.threads[t], "", "");
            }
    }
    static sweep_result_t results[MAX_CONFIGS * MAX_ROUNDS];
    static int ok[MAX_CONFIGS * MAX_ROUNDS];
    bench_rounds_t run = {.part = "--threads",
                          .configs = children,
                          .count = count,
                          .rounds = o.rounds,
                          .alternate = 0,
                          .parse = parse_sweep,
                          .results = results,
                          .result_size = sizeof *results,
                          .ok = ok,
                          .child_seconds = 0.05 + 2 * (o.warmup + o.duration)};
    bench_rounds_run(&o, self_argv, &run);
    int const any_failed = run.any_failed;

    /* Medians over rounds. */
    static sweep_result_t medians[MAX_CONFIGS];
    double items[MAX_CONFIGS * MAX_ROUNDS];
    size_t items_count = 0;
    for (size_t c = 0; c < count; c++) {
        double v[4][MAX_ROUNDS];
        size_t n = 0;
        for (int r = 0; r < o.rounds; r++)
            if (bench_rounds_result(&run, c, r)) {
                sweep_result_t const *x = bench_rounds_result(&run, c, r);
                v[0][n] = x->empty, v[1][n] = x->eshare, v[2][n] = x->work, v[3][n] = x->wshare;
                items[items_count++] = x->item;
                n++;
            }
        medians[c].ok = n > 0;
        medians[c].empty = bench_median(v[0], n), medians[c].eshare = bench_median(v[1], n);
        medians[c].work = bench_median(v[2], n), medians[c].wshare = bench_median(v[3], n);
    }
    double const item_ns = bench_median(items, items_count);

    char settings[512];
    snprintf(settings, sizeof settings,
             "%d round%s (median of fresh processes), each call timed %.2g s after %.2g s warm-up; one item of work: "
             "%d xorshift steps, %.0f ns serially (median)",
             o.rounds, o.rounds == 1 ? "" : "s", o.duration, o.warmup, BENCH_WORK_STEPS, item_ns);
    bench_rounds_print_header(&run, &o, "--threads", "", settings);

    for (int table = 0; table < 2; table++) {
        printf("%s### %s\n\n", table ? "\n" : "",
               table ? "for_n of N = threads items, each with a little work (time per call)"
                     : "empty for_n of N = threads items (time per call)");
        size_t const columns = o.threads_count + 1;
        static char cells[(MAX_CONFIGS + 1) * (BENCH_MAX_THREAD_COUNTS + 1)][BENCH_CELL];
#define CELL(row, column) cells[(row)*columns + (column)]
        snprintf(CELL(0, 0), BENCH_CELL, "pool \\ threads");
        for (size_t t = 0; t < o.threads_count; t++) snprintf(CELL(0, t + 1), BENCH_CELL, "%zu", o.threads[t]);
        /* The best peer at each thread count: the fastest pool that is not uform and forks. */
        double best[BENCH_MAX_THREAD_COUNTS];
        for (size_t t = 0; t < o.threads_count; t++) {
            best[t] = NAN;
            for (size_t c = 0; c < count; c++) {
                sweep_result_t const *m = medians + c;
                double time = table ? m->work : m->empty, share = table ? m->wshare : m->eshare;
                if (!m->ok || configs[c].threads != o.threads[t] || !strcmp(configs[c].peer->name, "uform")) continue;
                if (o.threads[t] > 1 && share >= NOT_A_FORK_SHARE) continue;
                if (isnan(best[t]) || time < best[t]) best[t] = time;
            }
        }
        size_t rows = 1;
        for (size_t c = 0; c < count; c += o.threads_count, rows++) {
            snprintf(CELL(rows, 0), BENCH_CELL, "%s%s%s", configs[c].peer->label, configs[c].variant ? " " : "",
                     configs[c].variant ? configs[c].variant : "");
            for (size_t t = 0; t < o.threads_count; t++) {
                sweep_result_t const *m = medians + c + t;
                char *cell = CELL(rows, t + 1), time[16], ratio[16];
                if (!m->ok) {
                    snprintf(cell, BENCH_CELL, "FAILED");
                    continue;
                }
                double value = table ? m->work : m->empty, share = table ? m->wshare : m->eshare;
                bench_format_time(time, sizeof(time), value);
                bench_format_ratio(ratio, sizeof(ratio), value, best[t]);
                snprintf(cell, BENCH_CELL, "%s (%s)%s", time, ratio,
                         o.threads[t] > 1 && share >= NOT_A_FORK_SHARE ? " *" : "");
            }
        }
        bench_print_table(cells, rows, columns, 1);
#undef CELL
    }
    printf("\nEach cell: median time per call, and in parentheses its ratio to the best peer at the same "
           "threads (the fastest pool other than uform whose calling thread ran under %.0f%% of the items; above "
           "1: that peer is faster). *: the calling thread ran at least %.0f%% of the items, so the pool is not "
           "really forking at that size and is left out of \"best\". Ideal time with work: one item (%.0f ns) "
           "times ceil(threads / %zu cores), plus the fork-join.\n",
           NOT_A_FORK_SHARE * 100, NOT_A_FORK_SHARE * 100, item_ns, cores);
    if (any_failed) printf("\nSome configurations FAILED a correctness check, crashed or hung; see stderr.\n");
    fflush(stdout);
    return any_failed;
}
