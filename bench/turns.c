/*
 * `uform bench --turns`: fork-join with the pools taking turns, batch by batch. Every pool (and
 * the two floors) lives in a process of its own for the whole run; the parent hands a turn to
 * one at a time: it wakes its threads, warms up for a few milliseconds, times one batch of about
 * 2 ms of calls and puts its threads to rest again (asleep, not spinning) before the next pool's
 * turn. One cycle gives every pool a turn, the order reversed every other cycle, so the batches
 * compared within a cycle are 10-30 ms apart (six pools at about 5.5 ms a turn). Resting means
 * waking nobody: a pool whose idle threads woke up now and then would slow the pool being timed
 * (bench/RESULTS.md measured it for ForkUnion's own nap).
 *
 * Why beside `--pairs`: the KVM guests this project is built on switch between latency modes
 * every few seconds, and `--pairs` compares processes that run 0.15 s each, one after another,
 * so a switch between the two halves of a pair moves that round's ratio by up to 5x. Here the
 * pair is inside one mode nearly always, and hundreds of cycles give the median and its middle
 * half. Pools that cannot put their threads to rest between turns (OpenMP, pthreadpool, oneTBB
 * through this benchmark's interface) are left out: their spinning would take the cores from the
 * pool being timed.
 */
#include "modes.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "floor.h"
#include "peers.h"
#include "rounds.h"
#include "spawn.h"
#include "turns_modes.h"
#include "work.h"

#define MAX_POOLS 16
#define MAX_PROCESSES 8 /* --processes */
#define MAX_ENTRIES (MAX_POOLS * MAX_PROCESSES)
#define MAX_CYCLES BENCH_TURNS_MAX_CYCLES
#define BATCH_SECONDS 0.002
/* Untimed calls at the start of every turn: long enough for a resting pool's threads to wake
 * or be spawned again (ForkUnion's, bench/peer_fork_union.cpp) and for the lines a call moves
 * to settle in the caches again. */
#define TURN_WARMUP_SECONDS 0.003

/* ---- a child: one pool, a batch per turn ---------------------------------------------------- */

typedef struct turn_pool_t {
    bench_peer_t const *peer; /* NULL for a floor */
    char const *variant;
    void *pool;
    bench_floor_t *floor;
    bench_item_t item;
    bench_work_slot_t *slots;
    size_t threads, calls;
} turn_pool_t;

static int turn_call(turn_pool_t *p) {
    if (p->floor) return bench_floor_call(p->floor, &p->calls);
    int failed = p->peer->fork_join(p->pool, p->threads, p->item, p->slots);
    return failed | bench_work_check(p->slots, p->threads, ++p->calls, "fork-join");
}

/* 0, or nonzero when the pool could not rest or wake (its reason printed). */
static int turn_rest(turn_pool_t *p, int resting) {
    if (!p->floor) return p->peer->rest(p->pool, p->variant, resting);
    bench_floor_rest(p->floor, resting);
    return 0;
}

/* Calls for at least `seconds`; how many ran, or 0 after a failed check. */
static size_t calls_for(turn_pool_t *p, double seconds) {
    size_t count = 0;
    double const until = bench_now_seconds() + seconds;
    do {
        if (turn_call(p)) return 0;
        count++;
    } while (bench_now_seconds() < until);
    return count;
}

static int turn_reply(char const *text) {
    bench_print_result(text);
    return 0;
}

int bench_turns_child(options_t const *o, char const *spec) {
    bench_child_t child;
    if (bench_child_parse(spec, "turns", 0, &child)) return 1;
    turn_pool_t p = {child.peer, child.variant, NULL, NULL, bench_work_pairs_item(o->item), NULL, child.threads, 0};
    char error[256] = "";
    if (!strcmp(child.name, "floor")) {
        p.floor = bench_floor_start(p.item, child.variant && !strcmp(child.variant, "context"), error, sizeof error);
        if (!p.floor) fprintf(stderr, "uform bench --turns: %s\n", error);
    } else if (!child.peer || !child.peer->rest) {
        fprintf(stderr, "uform bench --turns: %s cannot rest between turns\n", child.name);
    } else {
        p.pool = bench_child_create(&child);
        p.slots = p.pool ? aligned_alloc(128, sizeof(bench_work_slot_t) * p.threads) : NULL;
        if (p.slots) memset(p.slots, 0, sizeof(bench_work_slot_t) * p.threads);
    }
    if (!p.floor && !p.slots) return 1;
    int failed = turn_rest(&p, 1);
    turn_reply(failed ? "failed" : "ready");
    size_t batch = 0;
    char command;
    /* For tests/bench/check_turns.sh: this child dies at its Nth turn, as a crashing pool would. */
    char const *die_at = getenv("UFORM_BENCH_TURNS_DIE_AT");
    long const last_turn = die_at ? atol(die_at) : 0;
    for (long turn = 1; !failed && read(STDIN_FILENO, &command, 1) == 1 && command == 't'; turn++) {
        if (turn == last_turn) _exit(3);
        if (turn_rest(&p, 0)) {
            failed = 1;
            turn_reply("failed");
            break;
        }
        if (!batch) { /* the first turn sizes the batch: --warmup seconds of calls */
            double const start = bench_now_seconds();
            size_t const warm = calls_for(&p, o->warmup);
            double const elapsed = bench_now_seconds() - start;
            batch = warm && elapsed > 0 ? (size_t)(BATCH_SECONDS * (double)warm / elapsed) : 0;
            if (warm && batch < 1) batch = 1;
        } else if (!calls_for(&p, TURN_WARMUP_SECONDS)) {
            batch = 0;
        }
        failed = !batch;
        double const t0 = bench_now_seconds();
        for (size_t k = 0; k < batch && !failed; k++) failed = turn_call(&p);
        double const ns = (bench_now_seconds() - t0) / (double)(batch ? batch : 1) * 1e9;
        failed |= turn_rest(&p, 1);
        char line[64];
        snprintf(line, sizeof line, failed ? "failed" : "ns=%.6g", ns);
        turn_reply(line);
    }
    if (p.floor) bench_floor_stop(p.floor);
    if (p.pool) p.peer->destroy(p.pool);
    free(p.slots);
    return failed;
}

/* ---- the parent ------------------------------------------------------------------------------ */

/* A pool (or a floor): its row in the table. */
typedef struct turn_config_t {
    char spec[128];
    char name[BENCH_CELL];
} turn_config_t;

/* One process of a pool (--processes: each pool in as many). */
typedef struct turn_entry_t {
    size_t pool; /* index into the configs */
    char name[BENCH_CELL + 8]; /* the pool's, with " #k" when a pool has several processes */
    bench_live_child_t child;
    int alive;
} turn_entry_t;

/* a[c] / b[c] over the cycles where both have a batch, into `ratios`; how many. */
static size_t ratios_of(double const *a, double const *b, size_t cycles, double *ratios) {
    size_t n = 0;
    for (size_t c = 0; c < cycles; c++)
        if (a[c] > 0 && b[c] > 0) ratios[n++] = a[c] / b[c];
    return n;
}

static void add_config(turn_config_t *configs, size_t *count, char const *spec, char const *name) {
    if (*count >= MAX_POOLS) return;
    snprintf(configs[*count].spec, sizeof configs[0].spec, "%s", spec);
    snprintf(configs[*count].name, sizeof configs[0].name, "%s", name);
    ++*count;
}

int bench_turns_run(options_t const *options, char **self_argv) {
    options_t o = *options;
    size_t const cycles = o.cycles ? (size_t)o.cycles : o.quick ? 40 : 400; /* at most MAX_CYCLES: options.c */
    size_t const threads = o.threads_count ? o.threads[0] : 2;
    size_t const processes = o.processes ? (size_t)o.processes : 1; /* at most MAX_PROCESSES: options.c */
    if (o.threads_count > 1) fprintf(stderr, "uform bench --turns: measures one thread count, %zu\n", threads);
    static turn_config_t configs[MAX_POOLS];
    size_t count = 0, reference = SIZE_MAX, floor = SIZE_MAX, floor_context = SIZE_MAX;
    char left_out[512] = "";
    for (size_t p = 0; p < bench_peers_count; p++) {
        bench_peer_t const *peer = bench_peers[p];
        int is_uform = !strcmp(peer->name, "uform");
        if ((!is_uform && !bench_peer_selected(&o, peer->name)) || peer->single_thread_only) continue;
        if (!peer->rest) {
            size_t used = strlen(left_out);
            snprintf(left_out + used, sizeof left_out - used, "%s%s", used ? ", " : "", peer->label);
            continue;
        }
        for (size_t v = 0; v < bench_peer_variant_count(peer); v++) {
            char const *variant = peer->variants ? peer->variants[v] : NULL;
            if (is_uform && variant && !strcmp(variant, "spinning")) reference = count;
            char spec[128], name[BENCH_CELL];
            snprintf(spec, sizeof spec, "turns:%s:%s:%zu", peer->name, variant ? variant : "-", threads);
            snprintf(name, sizeof name, "%s%s%s", peer->label, variant ? " " : "", variant ? variant : "");
            add_config(configs, &count, spec, name);
        }
    }
    if (threads == 2 && bench_usable_cores() >= 2) {
        floor = count;
        add_config(configs, &count, "turns:floor:-:2", "floor (two pinned threads)");
        floor_context = count;
        add_config(configs, &count, "turns:floor:context:2", "floor, with the call's context");
    }

    /* A child that dies must not take the parent with it through a write to its pipe. */
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    bench_rounds_t run = {.part = "--turns"};
    double const started = bench_now_seconds();
    run.machine_before = bench_machine_cpu();
    double const own_before = bench_own_cpu_seconds();
    size_t const entries = count * processes;
    fprintf(stderr, "uform bench --turns: %zu pools x %zu processes x %zu cycles, about %.0f s\n", count, processes,
            cycles, (double)entries * ((double)cycles * (TURN_WARMUP_SECONDS + BATCH_SECONDS + 0.0005) + o.warmup));
    /* Pool-major: a pool's processes take their turns one after another in a cycle. */
    static turn_entry_t all[MAX_ENTRIES];
    for (size_t e = 0; e < entries; e++) {
        all[e] = (turn_entry_t){.pool = e / processes};
        char number[16] = "";
        if (processes > 1) snprintf(number, sizeof number, " #%zu", e % processes + 1);
        snprintf(all[e].name, sizeof all[e].name, "%s%s", configs[all[e].pool].name, number);
    }
    char answer[256];
    for (size_t k = 0; k < entries; k++) {
        turn_entry_t *t = &all[k];
        bench_outcome_t outcome = bench_live_start(&t->child, self_argv, configs[t->pool].spec);
        if (outcome == BENCH_OUTCOME_OK) outcome = bench_live_ask(&t->child, 0, o.timeout, answer, sizeof answer);
        if (outcome == BENCH_OUTCOME_OK && strcmp(answer, "ready") != 0) outcome = BENCH_OUTCOME_FAILED;
        t->alive = outcome == BENCH_OUTCOME_OK;
        if (!t->alive) {
            fprintf(stderr, "uform bench --turns: %s: %s\n", t->name, bench_outcome_text(outcome));
            if (outcome != BENCH_OUTCOME_SPAWN) run.any_failed = 1;
            if (t->child.pid) bench_live_end(&t->child, 1);
        }
    }
    /* A pool some of whose processes started and some did not would average fewer draws than
     * the settings line says: that fails the run (a pool none of whose processes could start
     * is left out, as with one process). */
    for (size_t k = 0; k < count; k++) {
        size_t started_here = 0;
        for (size_t e = k * processes; e < (k + 1) * processes; e++) started_here += all[e].alive != 0;
        if (started_here && started_here < processes) {
            fprintf(stderr, "uform bench --turns: %s: %zu of its %zu processes started\n", configs[k].name,
                    started_here, processes);
            run.any_failed = 1;
        }
    }
    static double entry_ns[MAX_ENTRIES][MAX_CYCLES];
    for (size_t k = 0; k < entries; k++)
        for (size_t c = 0; c < cycles; c++) entry_ns[k][c] = NAN;
    int const tty = isatty(STDERR_FILENO);
    for (size_t c = 0; c < cycles; c++) {
        if (tty && c % 20 == 0) fprintf(stderr, "\r\033[Kuform bench --turns: cycle %zu/%zu", c + 1, cycles);
        for (size_t j = 0; j < entries; j++) {
            size_t const k = c % 2 ? entries - 1 - j : j;
            turn_entry_t *t = &all[k];
            if (!t->alive) continue;
            bench_outcome_t outcome = bench_live_ask(&t->child, 't', o.timeout, answer, sizeof answer);
            double value = NAN;
            if (outcome == BENCH_OUTCOME_OK && sscanf(answer, "ns=%lf", &value) != 1) outcome = BENCH_OUTCOME_FAILED;
            if (outcome == BENCH_OUTCOME_OK) {
                entry_ns[k][c] = value;
                continue;
            }
            fprintf(stderr, "%suform bench --turns: %s, cycle %zu: %s\n", tty ? "\r\033[K" : "", t->name, c + 1,
                    bench_outcome_text(outcome));
            run.any_failed = 1;
            t->alive = 0;
            if (t->child.pid) bench_live_end(&t->child, 1);
        }
    }
    for (size_t k = 0; k < entries; k++) {
        if (!all[k].alive) continue;
        bench_outcome_t outcome = bench_live_end(&all[k].child, o.timeout);
        if (outcome != BENCH_OUTCOME_OK) {
            fprintf(stderr, "uform bench --turns: %s at the end: %s\n", all[k].name, bench_outcome_text(outcome));
            run.any_failed = 1;
        }
    }
    /* A pool's batch in a cycle: the mean of its processes' batches that came (NAN: none). */
    static double ns[MAX_POOLS][MAX_CYCLES];
    for (size_t k = 0; k < count; k++)
        for (size_t c = 0; c < cycles; c++) {
            double sum = 0;
            size_t got = 0;
            for (size_t e = k * processes; e < (k + 1) * processes; e++)
                if (entry_ns[e][c] > 0) sum += entry_ns[e][c], got++;
            ns[k][c] = got ? sum / (double)got : NAN;
        }
    signal(SIGPIPE, old_pipe);
    run.wall = bench_now_seconds() - started;
    run.machine_after = bench_machine_cpu();
    run.own_cpu = bench_own_cpu_seconds() - own_before;
    fprintf(stderr, "%suform bench --turns: done in %.0f s\n", tty ? "\r\033[K" : "", run.wall);

    char text[2048], processes_text[96];
    if (processes > 1)
        snprintf(processes_text, sizeof processes_text, "%zu processes of its own (its batch: their mean)", processes);
    else
        snprintf(processes_text, sizeof processes_text, "its own process");
    snprintf(text, sizeof text,
             "%zu cycles, %zu threads, every pool alive in %s for the whole run, taking turns (the "
             "order reversed every other cycle): a %.0f ms batch per turn after %.0f ms of warm-up, the batch sized in "
             "a first %.2g s turn; --item %s%s%s",
             cycles, threads, processes_text, BATCH_SECONDS * 1e3, TURN_WARMUP_SECONDS * 1e3, o.warmup, o.item ? o.item : "bump",
             left_out[0] ? "; left out, as they cannot rest their threads between turns: " : "", left_out);
    bench_rounds_print_header(&run, &o, "--turns", "", text);
    enum { COLUMNS = 7 };
    static char cells[(MAX_POOLS + 1) * COLUMNS][BENCH_CELL];
#define CELL(row, column) cells[(row)*COLUMNS + (column)]
    static char const *const headers[COLUMNS] = {"pool",    "median batch", "uform / pool", "middle half",
                                                 "at most 0.9", "/ floor",      "/ ctx floor"};
    for (size_t k = 0; k < COLUMNS; k++) snprintf(CELL(0, k), BENCH_CELL, "%s", headers[k]);
    static double values[MAX_CYCLES];
    for (size_t k = 0; k < count; k++) {
        snprintf(CELL(k + 1, 0), BENCH_CELL, "%.*s", BENCH_CELL - 1, configs[k].name);
        size_t n = 0;
        for (size_t c = 0; c < cycles; c++)
            if (ns[k][c] > 0) values[n++] = ns[k][c];
        bench_format_time(CELL(k + 1, 1), BENCH_CELL, bench_median(values, n));
        int const is_floor = k == floor || k == floor_context;
        n = reference != SIZE_MAX && k != reference && !is_floor ? ratios_of(ns[reference], ns[k], cycles, values) : 0;
        bench_format_fixed(CELL(k + 1, 2), BENCH_CELL, bench_median(values, n)); /* sorts them */
        snprintf(CELL(k + 1, 3), BENCH_CELL, "-");
        snprintf(CELL(k + 1, 4), BENCH_CELL, "-");
        if (n) {
            size_t within = 0;
            for (size_t i = 0; i < n; i++) within += values[i] <= 0.9;
            snprintf(CELL(k + 1, 4), BENCH_CELL, "%.0f%% of %zu", 100.0 * (double)within / (double)n, n);
            snprintf(CELL(k + 1, 3), BENCH_CELL, "%.2f-%.2f", bench_quantile(values, n, 0.25), bench_quantile(values, n, 0.75));
        }
        size_t const floors[2] = {floor, floor_context};
        for (int f = 0; f < 2; f++) {
            size_t const over = floors[f];
            n = over != SIZE_MAX && over != k && !(f == 1 && k == floor) ? ratios_of(ns[k], ns[over], cycles, values)
                                                                          : 0;
            bench_format_fixed(CELL(k + 1, 5 + f), BENCH_CELL, bench_median(values, n));
        }
    }
    bench_print_table(cells, count + 1, COLUMNS, 1);
#undef CELL
    snprintf(text, sizeof text,
             "Fork-join of %zu items on %zu threads, each item bumping its own 128-byte slot (--item bump-two: "
             "its count and the next word), checked after every call. median batch: the median over cycles of "
             "the pool's batch, per call. uform / pool: uform SPINNING's batch over this pool's in the same cycle, "
             "the median over cycles (below 1: uform is faster), with its middle half (the 25th to the 75th "
             "percentile) and the share of cycles where it was at most 0.9. / floor and / ctx floor: this pool's "
             "batch over the floor's in the same cycle, the median (the floor: two pinned threads passing a line "
             "each way and bumping a slot each, no pool; with the call's context, the answering thread also "
             "reads the item and its context from a struct the caller built on its stack, as every pool's worker "
             "here does).",
             threads, threads);
    printf("\n");
    bench_print_wrapped(text, "");
    char const *names[MAX_POOLS];
    for (size_t k = 0; k < count; k++) names[k] = configs[k].name;
    bench_turns_print_modes((double const *)ns, MAX_CYCLES, count, cycles, names, reference, floor, floor_context);
    if (run.any_failed) printf("\nSome pools FAILED a correctness check, crashed or hung; see stderr.\n");
    fflush(stdout);
    return run.any_failed;
}
