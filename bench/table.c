/*
 * `uform bench --table` (part of the default run): uform's host executor beside OpenMP,
 * pthreadpool, oneTBB and a serial loop, measured in one run and printed as one table. The figures are taken as
 * /work/shared/ANCHORS.md (the project's peer measurements) defines them:
 *
 * - fork-join: each of N items (N = threads) bumps its own 128-byte slot; calls run in
 *   ~20 ms batches for `duration` seconds after a warm-up; time / calls. Every slot is
 *   checked once per call. The caller share is the fraction of items run on the calling
 *   thread.
 * - reduction: sum of `reduce_mib` MiB of float32 (first touch in parallel through the same
 *   pool with the same static split), one untimed pass then `passes` timed ones; GB/s of
 *   the median pass; every pass checked against the exact sum. One kernel for every pool.
 * - wake: the pool idles `wake_idle` (10 ms), then one fork-join call is timed from
 *   submission to return; the median of `wake_samples`. Each wake is followed by a short
 *   idle (`short_idle`, 100 us) and one more timed call: what a wake should not exceed.
 * - idle: process CPU time during `idle_seconds` of sleep right after the last call, in
 *   milliseconds of CPU per second.
 *
 * Every (pool, variant, threads) runs in its own fresh process: the parent re-executes
 * /proc/self/exe with its own command line and UFORM_BENCH_CHILD="table:peer:variant:threads".
 * The parent never creates a pool itself. Rounds are interleaved (every configuration once
 * per round) and each figure is the median over rounds.
 */
#include "modes.h"

#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BENCH_HAVE_AVX512_KERNEL 1
#endif

#include "common.h"
#include "peers.h"
#include "spawn.h"
#include "work.h"

#define BENCH_MAX_CONFIGS 256
#define BENCH_MAX_ROUNDS 64


/* ------------------------------------------------------------------------------------------ */
/* The reduction kernel: one function for every pool. Lanes accumulate in float; with values */
/* in {0,1,2,3} and at most 2^22 values per lane (1 GiB / 64 lanes) every lane sum stays      */
/* below 2^24, so the result is exact and comparable with ==.                                 */

static double sum_plain(float const *data, size_t count) {
    float lanes[64] = {0};
    size_t i = 0;
    for (; i + 64 <= count; i += 64)
        for (size_t j = 0; j < 64; j++) lanes[j] += data[i + j];
    double sum = 0;
    for (size_t j = 0; j < 64; j++) sum += lanes[j];
    for (; i < count; i++) sum += data[i];
    return sum;
}

#ifdef BENCH_HAVE_AVX512_KERNEL
__attribute__((target("avx512f"))) static double sum_avx512(float const *data, size_t count) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= count; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(data + i));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(data + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(data + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(data + i + 48));
    }
    float lanes[64];
    _mm512_storeu_ps(lanes, a0);
    _mm512_storeu_ps(lanes + 16, a1);
    _mm512_storeu_ps(lanes + 32, a2);
    _mm512_storeu_ps(lanes + 48, a3);
    double sum = 0;
    for (size_t j = 0; j < 64; j++) sum += lanes[j];
    for (; i < count; i++) sum += data[i];
    return sum;
}
#endif

static double (*bench_sum)(float const *, size_t) = sum_plain;
static char const *bench_sum_name = "plain loop";

static void choose_kernel(void) {
#ifdef BENCH_HAVE_AVX512_KERNEL
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) bench_sum = sum_avx512, bench_sum_name = "AVX-512F";
#endif
}

/* The exact sum of (i & 3) over i in [0, n). */
static double exact_sum(size_t n) {
    static unsigned const tails[4] = {0, 0, 1, 3};
    return (double)(6 * (uint64_t)(n / 4) + tails[n % 4]);
}

/* ------------------------------------------------------------------------------------------ */
/* Work items                                                                                 */

/* 1 on the thread that submits calls, 0 elsewhere: how the caller share is counted. */
static _Thread_local unsigned char bench_on_caller;

typedef struct slot_t {
    _Alignas(128) size_t count;
    size_t caller;
    int cpu; /* set by wake_item only */
} slot_t;

static void bump_item(void *context, size_t item) {
    slot_t *slots = (slot_t *)context;
    slots[item].count++;
    slots[item].caller += bench_on_caller;
}

/* bump_item plus the CPU it ran on: for the wake samples, where a few ns do not matter. */
static void wake_item(void *context, size_t item) {
    slot_t *slots = (slot_t *)context;
    slots[item].cpu = sched_getcpu();
    slots[item].count++;
    slots[item].caller += bench_on_caller;
}

static size_t distinct_cpus_of_slots(slot_t const *slots, size_t items) {
    size_t distinct = 0;
    for (size_t t = 0; t < items; t++) {
        size_t u = 0;
        while (u < t && slots[u].cpu != slots[t].cpu) u++;
        distinct += u == t;
    }
    return distinct;
}

typedef struct partial_t {
    _Alignas(128) double sum;
    size_t done;
    int cpu; /* where the item last ran */
} partial_t;

typedef struct reduce_t {
    float *data;
    size_t count;
    size_t parts;
    partial_t *partials;
} reduce_t;

static void fill_item(void *context, size_t item) {
    reduce_t *r = (reduce_t *)context;
    size_t first = item * r->count / r->parts, last = (item + 1) * r->count / r->parts;
    for (size_t i = first; i < last; i++) r->data[i] = (float)(i & 3);
    r->partials[item].done++;
}

static void sum_item(void *context, size_t item) {
    reduce_t *r = (reduce_t *)context;
    size_t first = item * r->count / r->parts, last = (item + 1) * r->count / r->parts;
    r->partials[item].cpu = sched_getcpu();
    r->partials[item].sum = bench_sum(r->data + first, last - first);
    r->partials[item].done++;
}

/* ------------------------------------------------------------------------------------------ */
/* One configuration, in a child process                                                      */

typedef struct measured_t {
    double fork_join_ns;
    double caller_share;
    double wake_ns;
    double wake_p90_ns;
    double wake_cpus; /* distinct CPUs a timed wake call's items ran on, mean over samples */
    double short_ns;  /* median time of one call after a short idle (--short-idle-us) */
    double reduce_gbs;
    double reduce_cpus; /* distinct CPUs a reduction pass ran on, mean over timed passes */
    double idle_ms;
    double calls;
} measured_t;

static int check_slots(slot_t const *slots, size_t items, size_t expected, char const *what) {
    return bench_check_counts(slots, sizeof *slots, items, expected, what); /* count is slot_t's first field */
}

static int child_measure(options_t const *o, bench_peer_t const *peer, char const *variant, size_t threads,
                         measured_t *m) {
    char error[512] = "";
    void *pool = peer->create(threads, variant, error, sizeof(error));
    if (!pool) {
        fprintf(stderr, "uform bench: %s: %s\n", peer->label, error[0] ? error : "create failed");
        return 1;
    }
    bench_on_caller = 1;
    size_t const items = threads;
    int failed = 0;

    /* Reduction first (its 1 GiB is unmapped before the latency and idle figures). */
    {
        size_t const bytes = o->reduce_mib << 20, align = (size_t)2 << 20;
        size_t const count = bytes / sizeof(float);
        void *mapping = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapping == MAP_FAILED) {
            fprintf(stderr, "uform bench: cannot map %zu MiB\n", o->reduce_mib);
            peer->destroy(pool);
            return 1;
        }
        float *data = (float *)(((uintptr_t)mapping + align - 1) & ~(uintptr_t)(align - 1));
#ifdef MADV_HUGEPAGE
        madvise(data, bytes, MADV_HUGEPAGE);
#endif
        partial_t *partials = aligned_alloc(128, sizeof(partial_t) * items);
        memset(partials, 0, sizeof(partial_t) * items);
        reduce_t r = {data, count, items, partials};
        double const exact = exact_sum(count);
        failed |= peer->fork_join(pool, items, fill_item, &r);
        double *times = calloc((size_t)o->passes + 1, sizeof(double));
        double cpus_total = 0;
        for (int pass = 0; pass <= o->passes && !failed; pass++) {
            double start = bench_now_seconds();
            failed |= peer->fork_join(pool, items, sum_item, &r);
            double elapsed = bench_now_seconds() - start;
            double sum = 0;
            for (size_t t = 0; t < items; t++) {
                if (partials[t].done != (size_t)pass + 2) {
                    fprintf(stderr, "uform bench: reduction pass %d: part %zu ran %zu times, expected %d\n", pass, t,
                            partials[t].done, pass + 2);
                    failed = 1;
                }
                sum += partials[t].sum;
            }
            if (sum != exact) {
                fprintf(stderr, "uform bench: reduction pass %d: sum %.1f, exact %.1f\n", pass, sum, exact);
                failed = 1;
            }
            if (pass) { /* pass 0 is the untimed warm-up */
                times[pass - 1] = elapsed;
                size_t distinct = 0;
                for (size_t t = 0; t < items; t++) {
                    size_t u = 0;
                    while (u < t && partials[u].cpu != partials[t].cpu) u++;
                    distinct += u == t;
                }
                cpus_total += (double)distinct;
            }
        }
        m->reduce_gbs = (double)bytes / bench_median(times, (size_t)o->passes) * 1e-9;
        m->reduce_cpus = cpus_total / o->passes;
        free(times);
        free(partials);
        munmap(mapping, bytes + align);
    }

    slot_t *slots = aligned_alloc(128, sizeof(slot_t) * items);
    memset(slots, 0, sizeof(slot_t) * items);
    size_t expected = 0;

    /* Fork-join: warm up, estimate a call, then ~20 ms batches until `duration` elapsed. */
    if (!failed) {
        size_t warm_calls = 0;
        double start = bench_now_seconds(), elapsed = 0;
        while (!failed && (elapsed = bench_now_seconds() - start) < o->warmup) {
            failed |= peer->fork_join(pool, items, bump_item, slots);
            failed |= check_slots(slots, items, ++expected, "fork-join warm-up");
            warm_calls++;
        }
        double const batch_seconds = 0.02;
        double per_call = warm_calls ? elapsed / (double)warm_calls : batch_seconds;
        size_t batch = per_call > 0 ? (size_t)(batch_seconds / per_call) : 1;
        if (batch < 1) batch = 1;
        size_t caller_before = 0;
        for (size_t i = 0; i < items; i++) caller_before += slots[i].caller;
        size_t calls = 0;
        start = bench_now_seconds();
        elapsed = 0;
        while (!failed && elapsed < o->duration) {
            for (size_t k = 0; k < batch && !failed; k++) {
                failed |= peer->fork_join(pool, items, bump_item, slots);
                failed |= check_slots(slots, items, ++expected, "fork-join");
            }
            calls += batch;
            elapsed = bench_now_seconds() - start;
            batch = (size_t)(batch_seconds * (double)calls / elapsed);
            if (batch < 1) batch = 1;
        }
        size_t caller_after = 0;
        for (size_t i = 0; i < items; i++) caller_after += slots[i].caller;
        m->calls = (double)calls;
        m->fork_join_ns = calls ? elapsed / (double)calls * 1e9 : NAN;
        m->caller_share = calls ? (double)(caller_after - caller_before) / ((double)calls * (double)items) : NAN;
    }

    /* Wake: idle, then time one call from submission to return; each wake is followed by a
     * short idle and one more timed call, the reference a wake should not exceed. */
    if (!failed) {
        double *wakes = calloc((size_t)o->wake_samples, sizeof(double));
        double *shorts = calloc((size_t)o->wake_samples, sizeof(double));
        double cpus_total = 0;
        for (int s = 0; s < o->wake_samples && !failed; s++) {
            bench_sleep_seconds(o->wake_idle);
            double start = bench_now_seconds();
            failed |= peer->fork_join(pool, items, wake_item, slots);
            wakes[s] = (bench_now_seconds() - start) * 1e9;
            cpus_total += (double)distinct_cpus_of_slots(slots, items);
            failed |= check_slots(slots, items, ++expected, "wake");
            bench_sleep_seconds(o->short_idle);
            start = bench_now_seconds();
            failed |= peer->fork_join(pool, items, bump_item, slots);
            shorts[s] = (bench_now_seconds() - start) * 1e9;
            failed |= check_slots(slots, items, ++expected, "call after a short idle");
        }
        m->wake_ns = bench_median(wakes, (size_t)o->wake_samples); /* sorts */
        m->wake_p90_ns = wakes[(size_t)(0.9 * (o->wake_samples - 1))];
        m->wake_cpus = cpus_total / o->wake_samples;
        m->short_ns = bench_median(shorts, (size_t)o->wake_samples);
        free(wakes);
        free(shorts);
    }

    /* Idle: CPU time of the whole process while the caller sleeps right after the last call. */
    if (!failed) {
        double cpu = bench_process_cpu_seconds(), wall = bench_now_seconds();
        bench_sleep_seconds(o->idle_seconds);
        cpu = bench_process_cpu_seconds() - cpu;
        wall = bench_now_seconds() - wall;
        m->idle_ms = cpu / wall * 1e3;
    }

    free(slots);
    peer->destroy(pool);
    return failed;
}


int bench_table_child(options_t const *o, char const *spec) {
    choose_kernel();
    bench_child_t child;
    if (bench_child_parse(spec, "table", 0, &child)) return 1;
    if (!child.peer) {
        fprintf(stderr, "uform bench: no pool named %s in this build\n", child.name);
        return 1;
    }
    measured_t m;
    memset(&m, 0, sizeof(m));
    int failed = child_measure(o, child.peer, child.variant, child.threads, &m);
    if (failed) return 1;
    char line[512];
    snprintf(line, sizeof(line),
             "fj=%.6g share=%.6g wake=%.6g wake90=%.6g wcpus=%.6g short=%.6g gbs=%.6g cpus=%.6g idle=%.6g calls=%.0f",
             m.fork_join_ns, m.caller_share, m.wake_ns, m.wake_p90_ns, m.wake_cpus, m.short_ns, m.reduce_gbs,
             m.reduce_cpus, m.idle_ms, m.calls);
    bench_print_result(line);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The parent: configurations, children, the table                                            */

typedef struct config_t {
    bench_peer_t const *peer;
    char const *variant; /* NULL: unnamed */
    size_t threads;
} config_t;


typedef struct round_t {
    bench_outcome_t outcome;
    measured_t m;
} round_t;

static int parse_measured(char *line, measured_t *m) {
    return sscanf(line, "fj=%lf share=%lf wake=%lf wake90=%lf wcpus=%lf short=%lf gbs=%lf cpus=%lf idle=%lf calls=%lf",
                  &m->fork_join_ns, &m->caller_share, &m->wake_ns, &m->wake_p90_ns, &m->wake_cpus, &m->short_ns,
                  &m->reduce_gbs, &m->reduce_cpus, &m->idle_ms, &m->calls) == 10;
}

static bench_outcome_t run_child(options_t const *o, char **argv, config_t const *c, measured_t *m) {
    char spec[192], result[1024];
    snprintf(spec, sizeof(spec), "table:%s:%s:%zu", c->peer->name, c->variant ? c->variant : "-", c->threads);
    bench_outcome_t outcome =
        bench_spawn(argv, spec, c->peer->prepare_environment, c->variant, o->timeout, result, sizeof(result));
    if (outcome == BENCH_OUTCOME_OK && !parse_measured(result, m)) outcome = BENCH_OUTCOME_FAILED;
    return outcome;
}


typedef struct row_t {
    config_t config;
    bench_outcome_t outcome; /* the worst over rounds */
    int ok_rounds;
    measured_t m; /* medians over ok rounds */
} row_t;

static row_t const *find_row(row_t const *rows, size_t count, char const *peer, char const *variant, size_t threads) {
    for (size_t i = 0; i < count; i++)
        if (strcmp(rows[i].config.peer->name, peer) == 0 && rows[i].config.threads == threads &&
            ((!variant && !rows[i].config.variant) ||
             (variant && rows[i].config.variant && strcmp(variant, rows[i].config.variant) == 0)) &&
            rows[i].ok_rounds)
            return rows + i;
    return NULL;
}

/* The table's columns with --wide (the default prints 7 of them). */
enum { COLUMNS = 14 };

static void print_targets(options_t const *options, row_t const *rows, size_t config_count,
                          char (*cells)[COLUMNS][BENCH_CELL], size_t cores);

static double field(row_t const *row, size_t offset) {
    return row ? *(double const *)((char const *)&row->m + offset) : NAN;
}
#define FIELD(row, name) field(row, offsetof(measured_t, name))

int bench_table_run(options_t const *options, char **self_argv) {
    options_t o = *options;
    choose_kernel();
    size_t const cores = bench_usable_cores();
    if (!o.threads_count) {
        size_t const defaults[3] = {1, cores, 2 * cores};
        for (size_t i = 0; i < 3; i++) {
            size_t j = 0;
            while (j < o.threads_count && o.threads[j] != defaults[i]) j++;
            if (j == o.threads_count) o.threads[o.threads_count++] = defaults[i];
        }
    }

    /* Configurations: by thread count, then pool, then variant. */
    static config_t configs[BENCH_MAX_CONFIGS];
    size_t config_count = 0;
    for (size_t t = 0; t < o.threads_count; t++)
        for (size_t p = 0; p < bench_peers_count; p++) {
            bench_peer_t const *peer = bench_peers[p];
            if (!bench_peer_selected(&o, peer->name) || (peer->single_thread_only && o.threads[t] != 1)) continue;
            char const *const *variants = peer->variants;
            size_t variant_count = 1;
            if (variants) {
                variant_count = 0;
                while (variants[variant_count]) variant_count++;
            }
            for (size_t v = 0; v < variant_count && config_count < BENCH_MAX_CONFIGS; v++)
                configs[config_count++] = (config_t){peer, variants ? variants[v] : NULL, o.threads[t]};
        }

    /* One child's time: starting the process and its pool (0.15 s), the reduction's mapping, first
     * touch and passes (1 s per GiB: the first touch faults every page in, and with huge pages
     * scarce the kernel compacts memory meanwhile; measured 0.3-2 s per GiB on the 2-vCPU KVM
     * machine), then the timed parts, each wake's sleeps overshooting by about 1 ms. */
    double const child_seconds = 0.15 + (double)o.reduce_mib / 1024.0 + o.warmup + o.duration +
                                 o.wake_samples * (o.wake_idle + o.short_idle + 0.001) + o.idle_seconds;
    size_t const children = config_count * (size_t)o.rounds;
    fprintf(stderr, "uform bench: %zu configurations x %d round%s, about %.0f s\n", config_count, o.rounds,
            o.rounds == 1 ? "" : "s", child_seconds * (double)children);

    static round_t results[BENCH_MAX_CONFIGS][BENCH_MAX_ROUNDS];
    int const tty = isatty(STDERR_FILENO);
    double const started = bench_now_seconds();
    bench_machine_cpu_t const machine_before = bench_machine_cpu();
    double const own_before = bench_own_cpu_seconds();
    for (int r = 0; r < o.rounds; r++)
        for (size_t c = 0; c < config_count; c++) {
            config_t const *cfg = configs + c;
            /* What is left, from the children so far (the estimate above before the first). */
            size_t const done = (size_t)r * config_count + c;
            double const so_far = bench_now_seconds() - started;
            double const left = (double)(children - done) * (done ? so_far / (double)done : child_seconds);
            fprintf(stderr, "%suform bench: round %d/%d, %zu/%zu: %s%s%s, %zu thread%s, %.0f s, about %.0f s left%s",
                    tty ? "\r\033[K" : "", r + 1, o.rounds, c + 1, config_count, cfg->peer->label,
                    cfg->variant ? " " : "", cfg->variant ? cfg->variant : "", cfg->threads,
                    cfg->threads == 1 ? "" : "s", so_far, left, tty ? "" : "\n");
            memset(&results[c][r], 0, sizeof(round_t));
            results[c][r].outcome = run_child(&o, self_argv, cfg, &results[c][r].m);
            if (results[c][r].outcome != BENCH_OUTCOME_OK)
                fprintf(stderr, "%suform bench: %s%s%s at %zu threads: %s\n", tty ? "\r\033[K" : "", cfg->peer->label,
                        cfg->variant ? " " : "", cfg->variant ? cfg->variant : "", cfg->threads,
                        bench_outcome_text(results[c][r].outcome));
        }
    double const wall = bench_now_seconds() - started;
    bench_machine_cpu_t const machine_after = bench_machine_cpu();
    double const own = bench_own_cpu_seconds() - own_before;
    fprintf(stderr, "%suform bench: done in %.0f s\n", tty ? "\r\033[K" : "", wall);

    /* Medians over rounds. */
    static row_t rows[BENCH_MAX_CONFIGS];
    int any_failed = 0;
    for (size_t c = 0; c < config_count; c++) {
        row_t *row = rows + c;
        row->config = configs[c];
        row->outcome = BENCH_OUTCOME_OK;
        double values[10][BENCH_MAX_ROUNDS];
        int n = 0;
        for (int r = 0; r < o.rounds; r++) {
            round_t const *x = &results[c][r];
            if (x->outcome != BENCH_OUTCOME_OK) {
                if (row->outcome == BENCH_OUTCOME_OK || x->outcome < row->outcome) row->outcome = x->outcome;
                if (x->outcome != BENCH_OUTCOME_SPAWN) any_failed = 1;
                continue;
            }
            values[0][n] = x->m.fork_join_ns, values[1][n] = x->m.caller_share, values[2][n] = x->m.wake_ns;
            values[3][n] = x->m.wake_p90_ns, values[4][n] = x->m.reduce_gbs, values[5][n] = x->m.idle_ms;
            values[6][n] = x->m.calls, values[7][n] = x->m.reduce_cpus, values[8][n] = x->m.wake_cpus;
            values[9][n] = x->m.short_ns;
            n++;
        }
        row->ok_rounds = n;
        row->m.fork_join_ns = bench_median(values[0], (size_t)n);
        row->m.caller_share = bench_median(values[1], (size_t)n);
        row->m.wake_ns = bench_median(values[2], (size_t)n);
        row->m.wake_p90_ns = bench_median(values[3], (size_t)n);
        row->m.reduce_gbs = bench_median(values[4], (size_t)n);
        row->m.idle_ms = bench_median(values[5], (size_t)n);
        row->m.calls = bench_median(values[6], (size_t)n);
        row->m.reduce_cpus = bench_median(values[7], (size_t)n);
        row->m.wake_cpus = bench_median(values[8], (size_t)n);
        row->m.short_ns = bench_median(values[9], (size_t)n);
    }

    /* The header. */
    printf("## uform bench (%s)\n\n", o.quick ? "quick" : "full");
    bench_print_machine();
    printf("- reduction kernel: %s\n", bench_sum_name);
    char text[2048];
    snprintf(text, sizeof text,
             "- settings: %d round%s (median of fresh processes), fork-join %.2g s after %.2g s warm-up, "
             "reduction %zu MiB x %d passes, wake after %.0f ms idle x %d (each followed by one call after %.0f us "
             "idle), idle %.2g s",
             o.rounds, o.rounds == 1 ? "" : "s", o.duration, o.warmup, o.reduce_mib, o.passes, o.wake_idle * 1e3,
             o.wake_samples, o.short_idle * 1e6, o.idle_seconds);
    bench_print_wrapped(text, "  ");
    bench_print_load(machine_before, machine_after, own, wall);
    printf("\n");

    /* The table. */
    static char const *const headers[COLUMNS] = {
        "pool",    "threads",      "fork-join",   "/ uform spin", "caller share", "wake",    "on CPUs",
        "/ uform park", "after short idle", "wake / short", "reduce GB/s", "/ uform", "on CPUs", "idle CPU ms/s"};
    static char cells[BENCH_MAX_CONFIGS + 1][COLUMNS][BENCH_CELL];
    for (size_t c = 0; c < COLUMNS; c++) snprintf(cells[0][c], BENCH_CELL, "%s", headers[c]);
    for (size_t i = 0; i < config_count; i++) {
        row_t const *row = rows + i;
        config_t const *cfg = &row->config;
        char (*cell)[BENCH_CELL] = cells[i + 1];
        snprintf(cell[0], 48, "%s%s%s", cfg->peer->label, cfg->variant ? " " : "", cfg->variant ? cfg->variant : "");
        snprintf(cell[1], 48, "%zu", cfg->threads);
        if (!row->ok_rounds) {
            snprintf(cell[2], 48, "%s", bench_outcome_text(row->outcome));
            for (size_t c = 3; c < COLUMNS; c++) snprintf(cell[c], 48, "-");
        } else {
            row_t const *spin = find_row(rows, config_count, "uform", "spinning", cfg->threads);
            row_t const *park = find_row(rows, config_count, "uform", "parked", cfg->threads);
            double uform_gbs = fmax(FIELD(spin, reduce_gbs), FIELD(park, reduce_gbs));
            bench_format_time(cell[2], 48, row->m.fork_join_ns);
            if (row->outcome != BENCH_OUTCOME_OK) {
                size_t l = strlen(cell[2]);
                snprintf(cell[2] + l, 48 - l, " (%d/%d ok)", row->ok_rounds, o.rounds);
            }
            bench_format_ratio(cell[3], 48, row->m.fork_join_ns, FIELD(spin, fork_join_ns));
            snprintf(cell[4], 48, "%.2f", row->m.caller_share);
            bench_format_time(cell[5], 48, row->m.wake_ns);
            snprintf(cell[6], 48, "%.1f", row->m.wake_cpus);
            bench_format_ratio(cell[7], 48, row->m.wake_ns, FIELD(park, wake_ns));
            bench_format_time(cell[8], 48, row->m.short_ns);
            bench_format_ratio(cell[9], 48, row->m.wake_ns, row->m.short_ns);
            snprintf(cell[10], 48, "%.1f", row->m.reduce_gbs);
            bench_format_ratio(cell[11], 48, row->m.reduce_gbs, uform_gbs);
            snprintf(cell[12], 48, "%.1f", row->m.reduce_cpus);
            snprintf(cell[13], 48, row->m.idle_ms < 10 ? "%.2f" : "%.0f", row->m.idle_ms);
        }
    }
    if (o.wide) {
        bench_print_table(&cells[0][0], config_count + 1, COLUMNS, 1);
    } else {
        /* The default: what a reader compares first, in under 100 columns with pool names up to
         * about 25 characters (87 with the longest name today, "OpenMP passive"). */
        enum { NARROW = 7 };
        static size_t const picked[NARROW] = {0, 1, 2, 3, 5, 10, 13};
        static char const *const narrow_headers[NARROW] = {"pool", "threads", "fork-join", "/ uform", "wake",
                                                          "reduce GB/s", "idle ms/s"};
        static char narrow[BENCH_MAX_CONFIGS + 1][NARROW][BENCH_CELL];
        for (size_t r = 0; r <= config_count; r++)
            for (size_t c = 0; c < NARROW; c++)
                snprintf(narrow[r][c], BENCH_CELL, "%s", r ? cells[r][picked[c]] : narrow_headers[c]);
        bench_print_table(&narrow[0][0], config_count + 1, NARROW, 1);
    }

    printf("\n");
    if (o.wide) {
        snprintf(text, sizeof text,
                 "fork-join: time per call of N = threads items; \"/ uform spin\" is this pool's time over uform "
                 "SPINNING's at the same threads (above 1: uform is faster). caller share: items run on the calling "
                 "thread. wake: median time of one call after %.0f ms idle; \"/ uform park\" over uform PARKED's. "
                 "after short idle: median time of one call %.0f us after the previous one returned (the caller "
                 "slept); wake / short: the two medians' ratio (at most 1: a wake costs no more than a call after a "
                 "short idle). reduce: GB/s of the median pass; \"/ uform\" is this pool's GB/s over uform's better "
                 "mood (above 1: the peer is faster). on CPUs (after wake, after reduce): distinct CPUs one call's "
                 "items ran on, mean over calls (1.0 at 2 threads: both items ran on one core, one after the other). "
                 "idle: process CPU ms per second of sleep after the last call.",
                 o.wake_idle * 1e3, o.short_idle * 1e6);
    } else {
        snprintf(text, sizeof text,
                 "fork-join: time per call of N = threads items; \"/ uform\" is this pool's time over uform "
                 "SPINNING's at the same threads (above 1: uform is faster). wake: median time of one call after "
                 "%.0f ms idle. reduce: GB/s of the median pass summing %zu MiB of floats. idle: process CPU ms per "
                 "second of sleep after the last call. --wide adds the caller's share, the CPUs used, the wake "
                 "against a call after a short idle, and the ratios to uform's moods; --targets the project's own "
                 "targets.",
                 o.wake_idle * 1e3, o.reduce_mib);
    }
    bench_print_wrapped(text, "");

    /* The project's own targets, as figures and a verdict each (--targets: what bench/RESULTS.md
     * records); informational, never the exit status. */
    if (o.targets) print_targets(&o, rows, config_count, cells, cores);
    if (any_failed) printf("\nSome configurations FAILED a correctness check, crashed or hung; see stderr.\n");
    fflush(stdout);
    return any_failed ? 1 : 0;
}

static void print_targets(options_t const *options, row_t const *rows, size_t config_count,
                          char (*cells)[COLUMNS][BENCH_CELL], size_t cores) {
    options_t const o = *options;
    printf("\n### Targets\n\n");
    size_t const all = cores, over = 2 * cores;
    row_t const *spin_all = find_row(rows, config_count, "uform", "spinning", all);
    row_t const *omp_active = find_row(rows, config_count, "openmp", "active", all);
    row_t const *ptp = find_row(rows, config_count, "pthreadpool", NULL, all);
    char a[48], b[48], d[48];
    if (spin_all && omp_active) {
        bench_format_time(a, 48, spin_all->m.fork_join_ns), bench_format_time(b, 48, omp_active->m.fork_join_ns);
        printf("- fork-join SPINNING at %zu threads <= half of OpenMP active: %s vs %s -> %s\n", all, a, b,
               spin_all->m.fork_join_ns <= 0.5 * omp_active->m.fork_join_ns ? "met" : "MISSED");
    }
    if (spin_all && ptp) {
        bench_format_time(a, 48, spin_all->m.fork_join_ns), bench_format_time(b, 48, ptp->m.fork_join_ns);
        printf("- fork-join SPINNING at %zu threads below pthreadpool: %s vs %s (pthreadpool caller share %.2f) -> %s\n",
               all, a, b, ptp->m.caller_share, spin_all->m.fork_join_ns < ptp->m.fork_join_ns ? "met" : "MISSED");
    }
    for (size_t t = 0; t < o.threads_count; t++) {
        size_t const threads = o.threads[t];
        row_t const *s = find_row(rows, config_count, "uform", "spinning", threads);
        row_t const *p = find_row(rows, config_count, "uform", "parked", threads);
        double mine = fmax(FIELD(s, reduce_gbs), FIELD(p, reduce_gbs)), best = NAN;
        size_t best_row = 0;
        for (size_t i = 0; i < config_count; i++)
            if (rows[i].ok_rounds && rows[i].config.threads == threads && strcmp(rows[i].config.peer->name, "uform") &&
                (isnan(best) || rows[i].m.reduce_gbs > best))
                best = rows[i].m.reduce_gbs, best_row = i;
        if (!isnan(mine) && !isnan(best))
            printf("- reduction at %zu thread%s within 5%% of the best peer: %.1f vs %.1f GB/s (%s, %+.1f%%) -> %s\n",
                   threads, threads == 1 ? "" : "s", mine, best, cells[best_row + 1][0], (mine / best - 1) * 100,
                   mine >= 0.95 * best ? "met" : "MISSED");
    }
    for (size_t t = 0; t < o.threads_count; t++) {
        row_t const *s = find_row(rows, config_count, "uform", "spinning", o.threads[t]);
        if (s && o.threads[t] > 1) {
            bench_format_time(a, 48, s->m.wake_ns), bench_format_time(b, 48, s->m.short_ns);
            printf("- SPINNING wake after %.0f ms idle at %zu threads no more than a call after %.0f us idle: %s vs %s "
                   "-> %s\n",
                   o.wake_idle * 1e3, o.threads[t], o.short_idle * 1e6, a, b,
                   s->m.wake_ns <= s->m.short_ns ? "met" : "MISSED");
        }
    }
    for (size_t t = 0; t < o.threads_count; t++) {
        row_t const *p = find_row(rows, config_count, "uform", "parked", o.threads[t]);
        if (p)
            printf("- idle PARKED at %zu thread%s under 10 ms/s: %.2f ms/s -> %s\n", o.threads[t],
                   o.threads[t] == 1 ? "" : "s", p->m.idle_ms, p->m.idle_ms < 10 ? "met" : "MISSED");
    }
    if (over != all)
        for (int mood = 0; mood < 2; mood++) {
            char const *variant = mood ? "parked" : "spinning";
            row_t const *at_all = find_row(rows, config_count, "uform", variant, all);
            row_t const *at_over = find_row(rows, config_count, "uform", variant, over);
            if (!at_all || !at_over) continue;
            bench_format_time(a, 48, at_all->m.fork_join_ns), bench_format_time(b, 48, at_over->m.fork_join_ns);
            bench_format_time(d, 48, at_over->m.wake_ns);
            int collapsed = at_over->m.fork_join_ns > 100e3 || at_over->m.reduce_gbs < 0.8 * at_all->m.reduce_gbs;
            printf("- no collapse at %zu threads (2x), %s: fork-join %s (vs %s at %zu), wake %s, reduction %.1f GB/s "
                   "(vs %.1f) -> %s\n",
                   over, variant, b, a, all, d, at_over->m.reduce_gbs, at_all->m.reduce_gbs,
                   collapsed ? "COLLAPSED (fork-join over 100 us or reduction under 80%)" : "met");
        }
}
