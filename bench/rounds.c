/* The round driver the parts share (see rounds.h). */
#include "rounds.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"

void bench_round_config_for_peer(bench_round_config_t *config, char const *part, bench_peer_t const *peer,
                                 char const *variant, size_t threads, char const *extra, char const *extra_label) {
    snprintf(config->spec, sizeof config->spec, "%s:%s:%s:%zu%s", part, peer->name, variant ? variant : "-", threads,
             extra);
    snprintf(config->label, sizeof config->label, "%s%s%s, %zu thread%s%s", peer->label, variant ? " " : "",
             variant ? variant : "", threads, threads == 1 ? "" : "s", extra_label);
    config->prepare = peer->prepare_environment;
    config->variant = variant;
}

void bench_rounds_run(options_t const *o, char **self_argv, bench_rounds_t *run) {
    int const tty = isatty(STDERR_FILENO);
    char const *clear = tty ? "\r\033[K" : "";
    if (run->child_seconds > 0)
        fprintf(stderr, "uform bench %s: %zu configurations x %d round%s, about %.0f s\n", run->part, run->count,
                run->rounds, run->rounds == 1 ? "" : "s", run->child_seconds * (double)run->count * run->rounds);
    run->any_failed = 0;
    double const started = bench_now_seconds();
    run->machine_before = bench_machine_cpu();
    double const own_before = bench_own_cpu_seconds();
    for (int r = 0; r < run->rounds; r++)
        for (size_t k = 0; k < run->count; k++) {
            size_t const c = run->alternate && (r % 2) ? run->count - 1 - k : k;
            bench_round_config_t const *cfg = run->configs + c;
            fprintf(stderr, "%suform bench %s: round %d/%d, %zu/%zu: %s%s", clear, run->part, r + 1, run->rounds, k + 1,
                    run->count, cfg->label, tty ? "" : "\n");
            char result[1024];
            bench_outcome_t outcome =
                bench_spawn(self_argv, cfg->spec, cfg->prepare, cfg->variant, o->timeout, result, sizeof(result));
            size_t const at = c * (size_t)run->rounds + (size_t)r;
            void *record = (char *)run->results + at * run->result_size;
            memset(record, 0, run->result_size);
            run->ok[at] = outcome == BENCH_OUTCOME_OK && run->parse(result, record) == 0;
            if (run->ok[at]) continue;
            if (outcome == BENCH_OUTCOME_OK) outcome = BENCH_OUTCOME_FAILED;
            if (outcome != BENCH_OUTCOME_SPAWN) run->any_failed = 1;
            fprintf(stderr, "%suform bench %s: %s: %s\n", clear, run->part, cfg->label, bench_outcome_text(outcome));
        }
    run->wall = bench_now_seconds() - started;
    run->machine_after = bench_machine_cpu();
    run->own_cpu = bench_own_cpu_seconds() - own_before;
    fprintf(stderr, "%suform bench %s: done in %.0f s\n", clear, run->part, run->wall);
}

void const *bench_rounds_result(bench_rounds_t const *run, size_t c, int r) {
    size_t const at = c * (size_t)run->rounds + (size_t)r;
    return run->ok[at] ? (char const *)run->results + at * run->result_size : NULL;
}

void bench_rounds_print_load(bench_rounds_t const *run) {
    bench_print_load(run->machine_before, run->machine_after, run->own_cpu, run->wall);
}

void bench_rounds_print_header(bench_rounds_t const *run, options_t const *o, char const *title, char const *subtitle,
                               char const *settings) {
    printf("## uform bench %s (%s)%s\n\n", title, o->quick ? "quick" : "full", subtitle);
    bench_print_machine();
    char text[1024];
    snprintf(text, sizeof text, "- settings: %s", settings);
    bench_print_wrapped(text, "  ");
    bench_rounds_print_load(run);
    printf("\n");
}
