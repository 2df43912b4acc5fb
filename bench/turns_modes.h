/**
 * @file bench/turns_modes.h
 * @brief `uform bench --turns`, split by the machine's latency mode: the KVM guests this project
 *        runs on switch between a fast mode (a cross-core round trip of 100-200 ns) and a slow
 *        one (500-900 ns) every few seconds, and a run's one median is the slow mode's whenever
 *        most cycles fell there. The floor's batch in a cycle says which mode that cycle was in.
 */
#ifndef UFORM_BENCH_TURNS_MODES_H
#define UFORM_BENCH_TURNS_MODES_H

#include <stddef.h>

/* --cycles' most. */
#define BENCH_TURNS_MAX_CYCLES 4000
/* The smallest jump between two neighbouring floor batches that counts as two modes. */
#define BENCH_MODE_GAP 1.5
/* The fewest cycles a mode needs: fewer are outliers (a batch hit by an interrupt). */
#define BENCH_MODE_MIN_CYCLES 3

/** The threshold between the modes over `cycles` floor batches (NaN or 0 entries: no batch),
 *  in ns: the geometric mean of the two neighbours around the widest jump in their sorted
 *  order, if that jump is at least BENCH_MODE_GAP, each side has BENCH_MODE_MIN_CYCLES, and the
 *  jump is wider than either side's own spread (its 90th percentile over its 10th: a few
 *  batches an interrupt slowed, spread out above one mode, are not a second one); 0 when the
 *  batches show one mode, -1 when there are too few (under 2 * BENCH_MODE_MIN_CYCLES) to tell.
 *  Uses `scratch` (room for `cycles` values). */
double bench_turns_mode_threshold(double const *floor_ns, size_t cycles, double *scratch);

/** Prints the split table after the main one: per pool, its median batch, the ratio to it of
 *  uform SPINNING's and its ratio to the floor, in the fast and in the slow cycles. `ns` holds
 *  `pools` rows of `stride` cycles; `reference` (uform SPINNING), `floor` and `floor_context`
 *  (the floor with the call's context, compared with nobody's uform) index rows (an index of
 *  `pools` or more: none). Prints a line saying so where the run saw one mode. */
void bench_turns_print_modes(double const *ns, size_t stride, size_t pools, size_t cycles,
                             char const *const *names, size_t reference, size_t floor, size_t floor_context);

#endif /* UFORM_BENCH_TURNS_MODES_H */
