/**
 * @file bench/options.h
 * @brief `uform bench`'s command line: one options_t shared by every part. A child process
 *        parses the same command line as its parent, so it sees the same options.
 */
#ifndef UFORM_BENCH_OPTIONS_H
#define UFORM_BENCH_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_THREAD_COUNTS 16

typedef enum bench_part_t {
    BENCH_PART_TABLE = 1,     /* the side-by-side table (fork-join, wake, reduction, idle) */
    BENCH_PART_EXECUTORS = 2, /* many uform executors in one process */
    BENCH_PART_THREADS = 4,   /* fork-join cost from 1 thread to 4x the cores */
    BENCH_PART_STAGING = 8,   /* GPU copies: uform's staging beside the driver's raw copies */
    BENCH_PART_MESH = 16,     /* processes meeting through a directory: roster vs everyone-reads-all */
    BENCH_PART_NBODY = 32,    /* ForkUnion's N-body shape, static and dynamic split */
    BENCH_PART_PAIRS = 64,    /* fork-join in paired rounds against every peer and the floor */
    BENCH_PART_TURNS = 128    /* fork-join with every pool alive, taking turns batch by batch */
} bench_part_t;

typedef struct options_t {
    int quick;
    int wide;            /* --wide: every column of the table (default: the ones that fit 100 columns) */
    int targets;         /* --targets: the project's own target verdicts after the table (bench/RESULTS.md) */
    unsigned parts;      /* bench_part_t bits */
    int rounds;
    int cycles;          /* --cycles: --turns' cycles; 0 = its default */
    int processes;       /* --processes: --turns' processes per pool; 0 = 1 */
    int rounds_given;    /* --rounds was on the command line (--pairs has its own default) */
    double warmup;       /* seconds of fork-join before timing */
    double duration;     /* seconds of timed fork-join */
    size_t reduce_mib;   /* MiB of float32 summed */
    int passes;          /* timed reduction passes */
    int wake_samples;    /* timed wakes */
    double wake_idle;    /* seconds idle before each timed wake */
    double short_idle;   /* seconds idle before each "after a short idle" call */
    double idle_seconds; /* seconds of sleep for the idle cost */
    double timeout;      /* seconds before a child is considered hung */
    size_t threads[BENCH_MAX_THREAD_COUNTS]; /* --counts; threads_count 0: each part's default */
    size_t threads_count;
    const char *peers; /* comma-separated names, NULL = all */
    size_t staging_mib; /* MiB per staged copy */
    int staging_reps;   /* timed copies per figure (best taken) */
    size_t bodies[BENCH_MAX_THREAD_COUNTS]; /* --bodies; bodies_count 0: --nbody's default */
    size_t bodies_count;
    /* --item: what each of --pairs' items does; NULL = "bump" (bench_work_pairs_item) */
    const char *item;
} options_t;

/** 0: parsed; 2: usage error (message printed); 3: --help. */
int bench_parse_options(int argc, char **argv, options_t *o);
void bench_print_usage(FILE *out, char const *program);

#endif /* UFORM_BENCH_OPTIONS_H */
