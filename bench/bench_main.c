/*
 * `uform bench`: the entry point. Parses the command line, then either measures one
 * configuration (in a child, when UFORM_BENCH_CHILD names one) or runs the parts asked for,
 * each of which starts its own children and prints its own table.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modes.h"
#include "options.h"
#include "spawn.h"

static int starts_with(char const *text, char const *prefix) { return strncmp(text, prefix, strlen(prefix)) == 0; }

int uform_bench_main(int argc, char **argv) {
    char const *program = argc > 0 && argv[0] ? argv[0] : "uform-bench";
    if (strcmp(program, "bench") == 0) program = "uform bench"; /* the CLI hands its subcommand's name */
    options_t o;
    int parsed = bench_parse_options(argc, argv, &o);
    if (parsed == 3) {
        bench_print_usage(stdout, program);
        return 0;
    }
    if (parsed) {
        bench_print_usage(stderr, program);
        return 2;
    }

    char const *child = getenv(BENCH_CHILD_ENV);
    if (child) {
        if (starts_with(child, "table:")) return bench_table_child(&o, child + strlen("table:"));
        if (starts_with(child, "threads:")) return bench_threads_child(&o, child + strlen("threads:"));
        if (starts_with(child, "executors:")) return bench_executors_child(&o, child + strlen("executors:"));
        if (starts_with(child, "pairs:")) return bench_pairs_child(&o, child + strlen("pairs:"));
        if (starts_with(child, "nbody:")) return bench_nbody_child(&o, child + strlen("nbody:"));
        if (starts_with(child, "turns:")) return bench_turns_child(&o, child + strlen("turns:"));
        fprintf(stderr, "uform bench: bad %s=%s\n", BENCH_CHILD_ENV, child);
        return 1;
    }

    char **self_argv = bench_self_command_line();
    if (!self_argv) {
        fprintf(stderr, "uform bench: cannot read /proc/self/cmdline to start children\n");
        return 1;
    }
    int failed = 0;
    if (o.parts & BENCH_PART_TABLE) failed |= bench_table_run(&o, self_argv);
    if (o.parts & BENCH_PART_EXECUTORS) {
        if (o.parts & BENCH_PART_TABLE) printf("\n");
        failed |= bench_executors_run(&o, self_argv);
    }
    if (o.parts & BENCH_PART_THREADS) {
        if (o.parts & (BENCH_PART_TABLE | BENCH_PART_EXECUTORS)) printf("\n");
        failed |= bench_threads_run(&o, self_argv);
    }
    if (o.parts & BENCH_PART_PAIRS) {
        if (o.parts & (BENCH_PART_TABLE | BENCH_PART_EXECUTORS | BENCH_PART_THREADS)) printf("\n");
        failed |= bench_pairs_run(&o, self_argv);
    }
    if (o.parts & BENCH_PART_TURNS) {
        if (o.parts & (BENCH_PART_TABLE | BENCH_PART_EXECUTORS | BENCH_PART_THREADS | BENCH_PART_PAIRS)) printf("\n");
        failed |= bench_turns_run(&o, self_argv);
    }
    if (o.parts & BENCH_PART_NBODY) {
        if (o.parts & (BENCH_PART_TABLE | BENCH_PART_EXECUTORS | BENCH_PART_THREADS | BENCH_PART_PAIRS |
                       BENCH_PART_TURNS))
            printf("\n");
        failed |= bench_nbody_run(&o, self_argv);
    }
    if (o.parts & BENCH_PART_STAGING) {
        if (o.parts & (BENCH_PART_TABLE | BENCH_PART_EXECUTORS | BENCH_PART_THREADS | BENCH_PART_PAIRS |
                       BENCH_PART_TURNS | BENCH_PART_NBODY))
            printf("\n");
        failed |= bench_staging_run(&o);
    }
    if (o.parts & BENCH_PART_MESH) {
        if (o.parts & ~(unsigned)BENCH_PART_MESH) printf("\n");
        failed |= bench_mesh_run(&o);
    }
    free(self_argv);
    return failed ? 1 : 0;
}
