/**
 * @file bench/floor.h
 * @brief The floor a 2-item fork-join is measured against: two pinned threads, no pool. The
 *        caller passes a line to the answering thread, each bumps its own slot, the answerer
 *        passes a line back. With `context`, the answerer also reads the item and its context
 *        from a struct the caller built on its stack for the call, as every pool's worker in
 *        `uform bench` does: the one line transfer this workload adds whatever the pool.
 *
 * `--pairs` times it in a fresh process per round; `--turns` keeps it alive beside the pools and
 * lets it rest (its answerer asleep, not spinning) while another pool takes its turn.
 */
#ifndef UFORM_BENCH_FLOOR_H
#define UFORM_BENCH_FLOOR_H

#include <stddef.h>

#include "peer.h" /* bench_item_t */

typedef struct bench_floor_t bench_floor_t;

/** Pins the calling thread to the first CPU of this process's affinity mask and starts the
 *  answerer on the second, each bumping its slot with `item`; NULL, with the reason in `error`,
 *  without two CPUs or a thread. The caller stays pinned after the floor stops, so a process
 *  starts one floor (each part runs the floor in a process of its own). */
bench_floor_t *bench_floor_start(bench_item_t item, int context, char *error, size_t error_size);

/** One call, its slots checked: 0, or 1 with the slot that did not run printed (or, while the
 *  floor rests, without calling: its answerer sleeps). `calls` counts the calls made so far. */
int bench_floor_call(bench_floor_t *floor, size_t *calls);

/** Resting (1): the answerer sleeps on a condition variable until woken (0). Call it between
 *  calls only. */
void bench_floor_rest(bench_floor_t *floor, int resting);

/** Stops and joins the answerer and frees the floor. */
void bench_floor_stop(bench_floor_t *floor);

#endif /* UFORM_BENCH_FLOOR_H */
