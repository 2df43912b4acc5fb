/**
 * @file bench/rounds.h
 * @brief The round driver the parts of `uform bench` share: every configuration once per
 *        round, each in a fresh child process, rounds interleaved so that a slow minute of the
 *        machine touches every configuration alike. A part lists its configurations (the
 *        child's spec and how to print it), the driver spawns them, parses each result line
 *        with the part's parser and keeps what the machine did meanwhile.
 */
#ifndef UFORM_BENCH_ROUNDS_H
#define UFORM_BENCH_ROUNDS_H

#include <stddef.h>

#include "common.h"
#include "options.h"
#include "peer.h"

typedef struct bench_round_config_t {
    char spec[192];                       /* the child's UFORM_BENCH_CHILD value */
    char label[128];                      /* the progress line's description */
    void (*prepare)(char const *variant); /* the peer's prepare_environment, or NULL */
    char const *variant;
} bench_round_config_t;

/** Parses a child's result line into `out` (the part's own struct); nonzero if it is not one. */
typedef int (*bench_round_parse_t)(char const *line, void *out);

typedef struct bench_rounds_t {
    /* In: what to run. */
    char const *part; /* "--nbody", "--threads", ...: named in progress lines */
    bench_round_config_t const *configs;
    size_t count;
    int rounds;
    /* Nonzero: odd rounds run the configurations in reverse order, so that in a pair of
     * configurations neither always runs first (a paired comparison's order effect cancels). */
    int alternate;
    bench_round_parse_t parse;
    void *results; /* count x rounds records of result_size bytes: results[c * rounds + r] */
    size_t result_size;
    int *ok;              /* count x rounds: 1 where the child succeeded and its line parsed */
    double child_seconds; /* about how long one child takes: the announced total (0: none) */
    /* Out: how the run went. */
    int any_failed; /* a child failed, crashed or hung (one that could not start is not counted) */
    double wall, own_cpu;
    bench_machine_cpu_t machine_before, machine_after;
} bench_rounds_t;

/** A configuration of `peer` in `variant` (NULL: unnamed) at `threads`: the spec
 *  "<part>:<peer>:<variant or ->:<threads>" plus `extra` (":<bodies>", or ""), and the label
 *  "<peer label> <variant>, <threads> threads" plus `extra_label` (", 16 bodies", or ""). */
void bench_round_config_for_peer(bench_round_config_t *config, char const *part, bench_peer_t const *peer,
                                 char const *variant, size_t threads, char const *extra, char const *extra_label);

/** Runs every configuration of `run` once per round, printing progress on stderr (first how
 *  many children, and about how long, when `child_seconds` is set). */
void bench_rounds_run(options_t const *o, char **self_argv, bench_rounds_t *run);

/** The record of configuration `c` in round `r`, or NULL where that child did not succeed. */
void const *bench_rounds_result(bench_rounds_t const *run, size_t c, int r);

/** Prints the "- during the run ..." line for `run`. */
void bench_rounds_print_load(bench_rounds_t const *run);

/** Prints a part's heading ("## uform bench <title> (quick|full)<subtitle>"), the machine, `settings`
 *  (one "- settings: ..." list item, wrapped at 100 columns), the load line and a blank line. */
void bench_rounds_print_header(bench_rounds_t const *run, options_t const *o, char const *title, char const *subtitle,
                               char const *settings);

#endif /* UFORM_BENCH_ROUNDS_H */
