/*
 * `uform bench --nbody`: the shape of ForkUnion's N-body benchmark, written here. n bodies
 * under gravity; one step is one fork-join of n items, item i reading every body's position
 * from the previous step and writing body i's new velocity and position into the other buffer
 * (so a step needs no second barrier). Each step is timed with the static split (fork_join)
 * and with the dynamic one (fork_join_dynamic, where the pool has it). After timing, a few
 * steps from a fixed start are checked bit for bit against the serial loop: each body is
 * computed by one thread in a fixed order, so the result does not depend on the split.
 *
 * Each (pool, variant, threads, bodies) runs in a fresh process; in every round all pools run
 * one shape back to back, and a pool's ratio to uform SPINNING is taken within each round (the
 * VMs these run on change latency mode every few seconds), then the median over rounds.
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

#define MAX_CONFIGS 256
#define MAX_ROUNDS 64
#define CHECK_STEPS 8

typedef struct body_t {
    float x, y, z, vx, vy, vz, mass, pad;
} body_t;

typedef struct nbody_t {
    body_t const *from;
    body_t *to;
    size_t n;
} nbody_t;

/* Softened gravity, G = 1, dt = 0.001: the same arithmetic in every pool. */
static void nbody_item(void *context, size_t i) {
    nbody_t const *state = (nbody_t const *)context;
    body_t const *self = &state->from[i];
    float ax = 0, ay = 0, az = 0;
    for (size_t j = 0; j < state->n; j++) {
        body_t const *other = &state->from[j];
        float dx = other->x - self->x, dy = other->y - self->y, dz = other->z - self->z;
        float d2 = dx * dx + dy * dy + dz * dz + 1e-3f;
        float inverse = 1.0f / (d2 * sqrtf(d2));
        ax += other->mass * dx * inverse, ay += other->mass * dy * inverse, az += other->mass * dz * inverse;
    }
    body_t *next = &state->to[i];
    float const dt = 1e-3f;
    next->vx = self->vx + ax * dt, next->vy = self->vy + ay * dt, next->vz = self->vz + az * dt;
    next->x = self->x + next->vx * dt, next->y = self->y + next->vy * dt, next->z = self->z + next->vz * dt;
    next->mass = self->mass, next->pad = 0;
}

static void initial_bodies(body_t *bodies, size_t n) {
    unsigned state = 12345;
    for (size_t i = 0; i < n; i++) {
        float values[7];
        for (int k = 0; k < 7; k++) {
            state = state * 1664525u + 1013904223u;
            values[k] = (float)(state >> 8) / (float)(1u << 24);
        }
        bodies[i] = (body_t){values[0],        values[1],        values[2],        values[3] - 0.5f,
                             values[4] - 0.5f, values[5] - 0.5f, 0.5f + values[6], 0};
    }
}

typedef int (*fork_join_t)(void *pool, size_t items, bench_item_t item, void *context);

/* One step: items read `buffers[*current]`, write the other one. */
static int step(fork_join_t fork_join, void *pool, body_t *buffers[2], int *current, size_t n) {
    nbody_t state = {buffers[*current], buffers[!*current], n};
    int failed = fork_join(pool, n, nbody_item, &state);
    *current = !*current;
    return failed;
}

static int serial_fork_join(void *pool, size_t items, bench_item_t item, void *context) {
    (void)pool;
    for (size_t i = 0; i < items; i++) item(context, i);
    return 0;
}

/* ns per step over `duration` seconds after `warmup`, then the bit-exact check. */
static int time_steps(options_t const *o, fork_join_t fork_join, void *pool, size_t n, double *ns) {
    body_t *buffers[2] = {aligned_alloc(64, n * sizeof(body_t) + 64), aligned_alloc(64, n * sizeof(body_t) + 64)};
    body_t *reference[2] = {malloc(n * sizeof(body_t)), malloc(n * sizeof(body_t))};
    if (!buffers[0] || !buffers[1] || !reference[0] || !reference[1]) return 1;
    initial_bodies(buffers[0], n);
    int current = 0, failed = 0;
    double start = bench_now_seconds();
    size_t steps = 0;
    while (!failed && bench_now_seconds() - start < o->warmup) failed |= step(fork_join, pool, buffers, &current, n);
    start = bench_now_seconds();
    double elapsed = 0;
    while (!failed && elapsed < o->duration) {
        for (int k = 0; k < 64 && !failed; k++) failed |= step(fork_join, pool, buffers, &current, n);
        steps += 64;
        elapsed = bench_now_seconds() - start;
    }
    *ns = steps ? elapsed / (double)steps * 1e9 : NAN;
    /* The check: CHECK_STEPS steps from the start, pool against the serial loop. */
    initial_bodies(buffers[0], n), initial_bodies(reference[0], n);
    int mine = 0, theirs = 0;
    for (int k = 0; k < CHECK_STEPS && !failed; k++) {
        failed |= step(fork_join, pool, buffers, &mine, n);
        step(serial_fork_join, NULL, reference, &theirs, n);
    }
    if (!failed && memcmp(buffers[mine], reference[theirs], n * sizeof(body_t)) != 0) {
        fprintf(stderr, "uform bench --nbody: %zu bodies differ from the serial loop after %d steps\n", n, CHECK_STEPS);
        failed = 1;
    }
    free(buffers[0]), free(buffers[1]), free(reference[0]), free(reference[1]);
    return failed;
}

int bench_nbody_child(options_t const *o, char const *spec) {
    bench_child_t child;
    if (bench_child_parse(spec, "nbody", 1, &child)) return 1;
    void *pool = bench_child_create(&child);
    if (!pool) return 1;
    bench_peer_t const *peer = child.peer;
    size_t const bodies = child.extra;
    double static_ns = NAN, dynamic_ns = NAN;
    int failed = time_steps(o, peer->fork_join, pool, bodies, &static_ns);
    if (!failed && peer->fork_join_dynamic) failed = time_steps(o, peer->fork_join_dynamic, pool, bodies, &dynamic_ns);
    peer->destroy(pool);
    if (failed) return 1;
    char line[128];
    snprintf(line, sizeof(line), "static=%.6g dynamic=%.6g", static_ns, dynamic_ns);
    bench_print_result(line);
    return 0;
}

typedef struct nbody_config_t {
    bench_peer_t const *peer;
    char const *variant;
    size_t threads, bodies;
    size_t reference; /* the config of uform SPINNING with the same threads and bodies */
} nbody_config_t;

typedef struct nbody_result_t {
    double split[2]; /* static, dynamic: ns per step */
} nbody_result_t;

static int parse_nbody(char const *line, void *out) {
    nbody_result_t *x = (nbody_result_t *)out;
    return sscanf(line, "static=%lf dynamic=%lf", &x->split[0], &x->split[1]) == 2 ? 0 : 1;
}

static int is_reference(nbody_config_t const *c) {
    return !strcmp(c->peer->name, "uform") && c->variant && !strcmp(c->variant, "spinning");
}

int bench_nbody_run(options_t const *options, char **self_argv) {
    options_t o = *options;
    if (!o.threads_count) o.threads[o.threads_count++] = bench_usable_cores();
    static size_t const default_bodies[] = {16, 128, 1024};
    size_t const *bodies = o.bodies_count ? o.bodies : default_bodies;
    size_t const bodies_count = o.bodies_count ? o.bodies_count : sizeof default_bodies / sizeof *default_bodies;
    static nbody_config_t configs[MAX_CONFIGS];
    static bench_round_config_t children[MAX_CONFIGS];
    size_t count = 0;
    /* Shape by shape, every pool of a shape back to back (uform SPINNING first). */
    for (size_t t = 0; t < o.threads_count; t++)
        for (size_t b = 0; b < bodies_count; b++) {
            size_t first = count;
            for (size_t p = 0; p < bench_peers_count; p++) {
                bench_peer_t const *peer = bench_peers[p];
                if (!bench_peer_selected(&o, peer->name) || (peer->single_thread_only && o.threads[t] > 1)) continue;
                for (size_t v = 0; v < bench_peer_variant_count(peer) && count < MAX_CONFIGS; v++) {
                    char const *variant = peer->variants ? peer->variants[v] : NULL;
                    configs[count] = (nbody_config_t){peer, variant, o.threads[t], bodies[b], first};
                    char extra[32], extra_label[32];
                    snprintf(extra, sizeof extra, ":%zu", bodies[b]);
                    snprintf(extra_label, sizeof extra_label, ", %zu bodies", bodies[b]);
                    bench_round_config_for_peer(&children[count++], "nbody", peer, variant, o.threads[t], extra,
                                                extra_label);
                }
            }
        }
    static nbody_result_t results[MAX_CONFIGS * MAX_ROUNDS];
    static int ok[MAX_CONFIGS * MAX_ROUNDS];
    bench_rounds_t run = {.part = "--nbody",
                          .configs = children,
                          .count = count,
                          .rounds = o.rounds,
                          .alternate = 0,
                          .parse = parse_nbody,
                          .results = results,
                          .result_size = sizeof *results,
                          .ok = ok,
                          .child_seconds = 0.05 + 2 * (o.warmup + o.duration)};
    bench_rounds_run(&o, self_argv, &run);

    char settings[256];
    snprintf(settings, sizeof settings, "%d round%s (fresh processes), each split timed %.2g s after %.2g s warm-up",
             o.rounds, o.rounds == 1 ? "" : "s", o.duration, o.warmup);
    bench_rounds_print_header(&run, &o, "--nbody", "", settings);
    static char cells[(MAX_CONFIGS + 1) * 7][BENCH_CELL];
    size_t const columns = 7;
#define CELL(row, column) cells[(row)*columns + (column)]
    static char const *const headers[] = {"pool",         "threads",        "bodies",      "static / step",
                                          "/ uform spin", "dynamic / step", "/ uform spin"};
    for (size_t k = 0; k < columns; k++) snprintf(CELL(0, k), BENCH_CELL, "%s", headers[k]);
    size_t rows = 1;
    for (size_t c = 0; c < count; c++, rows++) {
        nbody_config_t const *cfg = configs + c;
        snprintf(CELL(rows, 0), BENCH_CELL, "%s%s%s", cfg->peer->label, cfg->variant ? " " : "",
                 cfg->variant ? cfg->variant : "");
        snprintf(CELL(rows, 1), BENCH_CELL, "%zu", cfg->threads);
        snprintf(CELL(rows, 2), BENCH_CELL, "%zu", cfg->bodies);
        for (int split = 0; split < 2; split++) {
            double times[MAX_ROUNDS], ratios[MAX_ROUNDS];
            size_t n = 0, paired = 0;
            for (int r = 0; r < o.rounds; r++) {
                nbody_result_t const *mine = bench_rounds_result(&run, c, r);
                nbody_result_t const *theirs = bench_rounds_result(&run, cfg->reference, r);
                if (!mine || isnan(mine->split[split])) continue;
                times[n++] = mine->split[split];
                if (theirs && is_reference(&configs[cfg->reference]) && theirs->split[split] > 0)
                    ratios[paired++] = mine->split[split] / theirs->split[split];
            }
            char *time = CELL(rows, 3 + 2 * split), *ratio = CELL(rows, 4 + 2 * split);
            bench_format_time(time, BENCH_CELL, bench_median(times, n));
            if (paired)
                snprintf(ratio, BENCH_CELL, "%.2f", bench_median(ratios, paired));
            else
                snprintf(ratio, BENCH_CELL, "-");
        }
    }
    bench_print_table(cells, rows, columns, 1);
#undef CELL
    printf("\nTime per step (one fork-join of `bodies` items, each O(bodies)), median over rounds; \"/ uform "
           "spin\" is the median over rounds of this pool's time over uform SPINNING's in the same round (above "
           "1: uform is faster). \"-\": the pool has no dynamic split.\n");
    if (run.any_failed) printf("\nSome configurations FAILED the bit-exact check, crashed or hung; see stderr.\n");
    fflush(stdout);
    return run.any_failed;
}
