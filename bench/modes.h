/**
 * @file bench/modes.h
 * @brief The parts of `uform bench`, each in its own file: a parent that runs fresh children
 *        and prints a table, and the child side that measures one configuration. A child's
 *        UFORM_BENCH_CHILD spec starts with its part's name ("table:", "threads:",
 *        "executors:").
 */
#ifndef UFORM_BENCH_MODES_H
#define UFORM_BENCH_MODES_H

#include "options.h"

/* table.c: fork-join, wake, reduction and idle, every pool side by side. */
int bench_table_run(options_t const *o, char **self_argv);
int bench_table_child(options_t const *o, char const *spec);

/* threads.c: fork-join cost from 1 thread to 4x the cores. */
int bench_threads_run(options_t const *o, char **self_argv);
int bench_threads_child(options_t const *o, char const *spec);

/* executors.c: many uform executors in one process, each driven from its own thread. */
int bench_executors_run(options_t const *o, char **self_argv);
int bench_executors_child(options_t const *o, char const *spec);

/* nbody.c: ForkUnion's N-body shape, static and dynamic split, every pool side by side. */
int bench_nbody_run(options_t const *o, char **self_argv);
int bench_nbody_child(options_t const *o, char const *spec);

/* pairs.c: fork-join in paired rounds, uform SPINNING against every peer and the floor. */
int bench_pairs_run(options_t const *o, char **self_argv);
int bench_pairs_child(options_t const *o, char const *spec);

/* turns.c: fork-join with every pool alive in its own process, taking turns batch by batch. */
int bench_turns_run(options_t const *o, char **self_argv);
int bench_turns_child(options_t const *o, char const *spec);

/* staging.c: GPU copies through uform's staging beside the driver's raw copies (in-process). */
int bench_staging_run(options_t const *o);

/* mesh_rendezvous.c: the mesh's rendezvous beside a read-everyone baseline (in-process fork). */
int bench_mesh_run(options_t const *o);

#endif /* UFORM_BENCH_MODES_H */
