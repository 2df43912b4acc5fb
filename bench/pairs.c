/*
 * `uform bench --pairs`: fork-join cost in paired rounds, the comparison to trust on machines
 * whose cross-core latency changes from minute to minute (the KVM guests this project is built
 * on switch between a fast and a slow mode every few seconds). In every round each pool runs
 * once in a fresh process, uform SPINNING and every peer back to back, the order reversed every
 * other round, beside the floor: two pinned threads passing a line back and forth and each
 * bumping its own slot, which is what a 2-item fork-join does on top of any pool. A child
 * times ~2 ms batches of calls and reports its best batch (the machine's fast moments, where
 * the pool's own cost shows) and its median batch. Each pool's figure is then its time over
 * uform's, or uform's over the floor's, taken within each round, and the median over rounds.
 */
#include "modes.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "floor.h"
#include "peers.h"
#include "rounds.h"
#include "spawn.h"
#include "work.h"

#define MAX_CONFIGS 64
#define MAX_ROUNDS 64
#define MAX_BATCHES 4096
#define BATCH_SECONDS 0.002

/* ---- a child: batches of calls, the best and the median ---------------------------------- */

typedef struct caller_t {
    int (*call)(void *state, size_t *calls);
    void *state;
} caller_t;

static int time_batches(options_t const *o, caller_t const *c, double *best_ns, double *median_ns) {
    size_t calls = 0, warm = 0;
    int failed = 0;
    double start = bench_now_seconds(), elapsed = 0;
    while (!failed && (elapsed = bench_now_seconds() - start) < o->warmup) failed |= c->call(c->state, &calls), warm++;
    size_t batch = warm && elapsed > 0 ? (size_t)(BATCH_SECONDS * (double)warm / elapsed) : 1;
    if (batch < 1) batch = 1;
    static double per_call[MAX_BATCHES];
    size_t batches = 0;
    double const until = bench_now_seconds() + o->duration;
    while (!failed && batches < MAX_BATCHES && bench_now_seconds() < until) {
        double t0 = bench_now_seconds();
        for (size_t k = 0; k < batch && !failed; k++) failed |= c->call(c->state, &calls);
        per_call[batches++] = (bench_now_seconds() - t0) / (double)batch * 1e9;
    }
    double best = INFINITY;
    for (size_t i = 0; i < batches; i++) best = fmin(best, per_call[i]);
    *best_ns = batches ? best : NAN;
    *median_ns = bench_median(per_call, batches);
    return failed;
}

/* 1 on the thread that submits calls; in the untimed calls after the batches each slot's `sink`
 * counts the items that ran there, so a pool whose calling thread runs the items itself (no
 * fork at all) shows as such. Untimed: reading a thread-local in every item made some pools'
 * calls 10-20% slower than others' (measured), which the timed item must not. */
static _Thread_local unsigned char on_caller;
#define SHARE_CALLS 2000

static void share_item(void *context, size_t item) {
    bench_work_slot_t *slots = (bench_work_slot_t *)context;
    slots[item].count++;
    slots[item].sink += on_caller;
}

typedef struct pool_state_t {
    bench_peer_t const *peer;
    bench_item_t item;
    void *pool;
    size_t items;
    bench_work_slot_t *slots;
} pool_state_t;

static int pool_call(void *state, size_t *calls) {
    pool_state_t *p = (pool_state_t *)state;
    int failed = p->peer->fork_join(p->pool, p->items, p->item, p->slots);
    return failed | bench_work_check(p->slots, p->items, ++*calls, "fork-join");
}

/* The calling thread's share of the items over SHARE_CALLS untimed calls; `calls` as far as the
 * slots' counts go. */
static int caller_share(pool_state_t *p, size_t calls, double *share) {
    for (size_t i = 0; i < p->items; i++) p->slots[i].sink = 0;
    on_caller = 1;
    int failed = 0;
    for (int k = 0; k < SHARE_CALLS && !failed; k++) {
        failed |= p->peer->fork_join(p->pool, p->items, share_item, p->slots);
        failed |= bench_work_check(p->slots, p->items, ++calls, "fork-join (caller share)");
    }
    double on_the_caller = 0;
    for (size_t i = 0; i < p->items; i++) on_the_caller += (double)p->slots[i].sink;
    *share = on_the_caller / ((double)SHARE_CALLS * (double)p->items);
    return failed;
}

static int floor_caller(void *state, size_t *calls) { return bench_floor_call((bench_floor_t *)state, calls); }

static int measure_floor(options_t const *o, int context, double *best, double *median) {
    char error[128];
    bench_floor_t *f = bench_floor_start(bench_work_pairs_item(o->item), context, error, sizeof error);
    if (!f) {
        fprintf(stderr, "uform bench --pairs: %s\n", error);
        return 1;
    }
    caller_t c = {floor_caller, f};
    int failed = time_batches(o, &c, best, median);
    bench_floor_stop(f);
    return failed;
}

int bench_pairs_child(options_t const *o, char const *spec) {
    bench_child_t child;
    if (bench_child_parse(spec, "pairs", 0, &child)) return 1;
    size_t const threads = child.threads;
    double best = NAN, median = NAN, share = 0.5; /* the floor: one item on each side */
    int failed;
    if (!strcmp(child.name, "floor")) {
        failed = measure_floor(o, child.variant && !strcmp(child.variant, "context"), &best, &median);
    } else {
        void *pool = bench_child_create(&child);
        if (!pool) return 1;
        bench_peer_t const *peer = child.peer;
        bench_work_slot_t *slots = aligned_alloc(128, sizeof(bench_work_slot_t) * threads);
        memset(slots, 0, sizeof(bench_work_slot_t) * threads);
        pool_state_t state = {peer, bench_work_pairs_item(o->item), pool, threads, slots};
        caller_t c = {pool_call, &state};
        failed = time_batches(o, &c, &best, &median);
        if (!failed) failed = caller_share(&state, slots[0].count, &share);
        peer->destroy(pool);
        free(slots);
    }
    if (failed) return 1;
    char line[128];
    snprintf(line, sizeof(line), "best=%.6g median=%.6g share=%.6g", best, median, share);
    bench_print_result(line);
    return 0;
}

/* ---- the parent ---------------------------------------------------------------------------- */

typedef struct pair_result_t {
    double best, median, share;
} pair_result_t;

static int parse_pair(char const *line, void *out) {
    pair_result_t *x = (pair_result_t *)out;
    return sscanf(line, "best=%lf median=%lf share=%lf", &x->best, &x->median, &x->share) == 3 ? 0 : 1;
}

/* The median over rounds of a[r] / b[r] where both ran, with its range; how many pairs. */
static size_t ratio_of(bench_rounds_t const *run, size_t a, size_t b, int use_median, double *median, double *low,
                       double *high) {
    double ratios[MAX_ROUNDS];
    size_t n = 0;
    for (int r = 0; r < run->rounds; r++) {
        pair_result_t const *x = bench_rounds_result(run, a, r), *y = bench_rounds_result(run, b, r);
        double u = x ? (use_median ? x->median : x->best) : NAN, v = y ? (use_median ? y->median : y->best) : NAN;
        if (u > 0 && v > 0) ratios[n++] = u / v;
    }
    *low = INFINITY, *high = -INFINITY;
    for (size_t i = 0; i < n; i++) *low = fmin(*low, ratios[i]), *high = fmax(*high, ratios[i]);
    *median = bench_median(ratios, n);
    return n;
}

/* The median over rounds of one field of configuration `c`'s results (offsetof pair_result_t). */
static double median_of(bench_rounds_t const *run, size_t c, size_t field) {
    double values[MAX_ROUNDS];
    size_t n = 0;
    for (int r = 0; r < run->rounds; r++) {
        pair_result_t const *x = bench_rounds_result(run, c, r);
        if (x) values[n++] = *(double const *)((char const *)x + field);
    }
    return bench_median(values, n);
}

int bench_pairs_run(options_t const *options, char **self_argv) {
    options_t o = *options;
    if (!o.rounds_given) o.rounds = o.quick ? 3 : 11;
    size_t const threads = o.threads_count ? o.threads[0] : 2;
    if (o.threads_count > 1) fprintf(stderr, "uform bench --pairs: measures one thread count, %zu\n", threads);
    static bench_round_config_t children[MAX_CONFIGS];
    static char names[MAX_CONFIGS][BENCH_CELL]; /* the table's first column: the pool, no thread count */
    size_t count = 0, reference = SIZE_MAX, floor = SIZE_MAX, floor_context = SIZE_MAX;
    for (size_t p = 0; p < bench_peers_count; p++) {
        bench_peer_t const *peer = bench_peers[p];
        int is_uform = !strcmp(peer->name, "uform");
        if ((!is_uform && !bench_peer_selected(&o, peer->name)) || peer->single_thread_only) continue;
        /* MAX_CONFIGS - 2: room for the two floors */
        for (size_t v = 0; v < bench_peer_variant_count(peer) && count < MAX_CONFIGS - 2; v++) {
            char const *variant = peer->variants ? peer->variants[v] : NULL;
            if (is_uform && variant && !strcmp(variant, "spinning")) reference = count; /* every ratio's reference */
            bench_round_config_t *child = &children[count];
            bench_round_config_for_peer(child, "pairs", peer, variant, threads, "", "");
            snprintf(names[count++], sizeof names[0], "%s%s%s", peer->label, variant ? " " : "",
                     variant ? variant : "");
        }
    }
    if (bench_usable_cores() >= 2) {
        floor = count;
        bench_round_config_t *child = &children[count];
        snprintf(child->spec, sizeof child->spec, "pairs:floor:-:2");
        snprintf(child->label, sizeof child->label, "floor (two pinned threads)");
        snprintf(names[count++], sizeof names[0], "%s", child->label);
        floor_context = count;
        child = &children[count];
        snprintf(child->spec, sizeof child->spec, "pairs:floor:context:2");
        snprintf(child->label, sizeof child->label, "floor, with the call's context");
        snprintf(names[count++], sizeof names[0], "%s", child->label);
    }
    static pair_result_t results[MAX_CONFIGS * MAX_ROUNDS];
    static int ok[MAX_CONFIGS * MAX_ROUNDS];
    bench_rounds_t run = {.part = "--pairs",
                          .configs = children,
                          .count = count,
                          .rounds = o.rounds,
                          .alternate = 1,
                          .parse = parse_pair,
                          .results = results,
                          .result_size = sizeof *results,
                          .ok = ok,
                          .child_seconds = 0.05 + o.warmup + o.duration};
    bench_rounds_run(&o, self_argv, &run);

    char text[2048];
    snprintf(text, sizeof text,
             "%d rounds, %zu threads, each pool in a fresh process per round, the order reversed every other round; "
             "%.2g s of %.0f ms batches after %.2g s warm-up; --item %s",
             o.rounds, threads, o.duration, BATCH_SECONDS * 1e3, o.warmup, o.item ? o.item : "bump");
    bench_rounds_print_header(&run, &o, "--pairs", "", text);
    enum { COLUMNS = 9 };
    static char cells[(MAX_CONFIGS + 1) * COLUMNS][BENCH_CELL];
#define CELL(row, column) cells[(row)*COLUMNS + (column)]
    static char const *const headers[COLUMNS] = {"pool",         "best batch", "uform / pool", "range", "median batch",
                                                 "uform / pool", "/ floor",    "/ ctx floor",  "caller"};
    for (size_t k = 0; k < COLUMNS; k++) snprintf(CELL(0, k), BENCH_CELL, "%s", headers[k]);
    for (size_t c = 0; c < count; c++) {
        snprintf(CELL(c + 1, 0), BENCH_CELL, "%.*s", BENCH_CELL - 1, names[c]); /* bounded for gcc -Wformat-truncation */
        bench_format_time(CELL(c + 1, 1), BENCH_CELL, median_of(&run, c, offsetof(pair_result_t, best)));
        bench_format_time(CELL(c + 1, 4), BENCH_CELL, median_of(&run, c, offsetof(pair_result_t, median)));
        double share = median_of(&run, c, offsetof(pair_result_t, share));
        if (isnan(share))
            snprintf(CELL(c + 1, 8), BENCH_CELL, "-");
        else
            snprintf(CELL(c + 1, 8), BENCH_CELL, "%.0f%%", share * 100);
        double m, lo, hi;
        for (int use_median = 0; use_median < 2; use_median++) {
            char *cell = CELL(c + 1, use_median ? 5 : 2);
            size_t n = reference != SIZE_MAX && c != reference && c != floor && c != floor_context
                           ? ratio_of(&run, reference, c, use_median, &m, &lo, &hi)
                           : 0;
            bench_format_fixed(cell, BENCH_CELL, n ? m : NAN);
            if (!use_median) {
                if (n)
                    snprintf(CELL(c + 1, 3), BENCH_CELL, "%.2f-%.2f (%zu)", lo, hi, n);
                else
                    snprintf(CELL(c + 1, 3), BENCH_CELL, "-");
            }
        }
        size_t const floors[2] = {floor, floor_context};
        for (int k = 0; k < 2; k++) {
            size_t n = floors[k] != SIZE_MAX && c != floor && c != floor_context
                           ? ratio_of(&run, c, floors[k], 0, &m, &lo, &hi)
                           : 0;
            if (!n && k == 0 && c == floor_context) n = ratio_of(&run, c, floor, 0, &m, &lo, &hi);
            bench_format_fixed(CELL(c + 1, 6 + k), BENCH_CELL, n ? m : NAN);
        }
    }
    bench_print_table(cells, count + 1, COLUMNS, 1);
#undef CELL
    snprintf(text, sizeof text,
             "Fork-join of %zu items on %zu threads, each item bumping its own 128-byte slot (with bump-two, its "
             "count and the next word, one 16-byte load and store), checked after every call. best / median batch: the "
             "median over rounds of each process's best and median %.0f ms batch, "
             "per call. uform / pool: uform SPINNING's time over this pool's in the same round, the median over "
             "rounds (below 1: uform is faster), with its range and the number of paired rounds; the first from "
             "best batches, the second from median batches. / floor: this pool's best batch over the floor's in "
             "the same round (the floor: two pinned threads exchanging a line and bumping a slot each, no pool; "
             "with the call's context, the answering thread also reads the item and its context from a struct "
             "the caller built on its stack for the call, as every pool's worker here does, which is the one "
             "line transfer this workload adds to the plain floor whatever the pool); / ctx floor: the same "
             "over the floor with the call's context, what this workload costs with no pool at all. "
             "caller: the share of items the calling thread ran itself, over %d untimed calls after the batches "
             "(%.0f%% is an even split; near 100%%, "
             "the pool hardly forks at this size and its time is not a fork-join's).",
             threads, threads, BATCH_SECONDS * 1e3, SHARE_CALLS, 100.0 / (double)threads);
    printf("\n");
    bench_print_wrapped(text, "");
    if (run.any_failed) printf("\nSome configurations FAILED a correctness check, crashed or hung; see stderr.\n");
    fflush(stdout);
    return run.any_failed;
}
