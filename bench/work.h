/**
 * @file bench/work.h
 * @brief "A little work" for one item, the same in every part that needs it: a chain of
 *        dependent xorshift steps (no memory traffic, not vectorisable, about 1 us).
 */
#ifndef UFORM_BENCH_WORK_H
#define UFORM_BENCH_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "peer.h" /* bench_item_t */

#define BENCH_WORK_STEPS 512

/** A 128-byte slot per item: how many times it ran, and the work's result. */
typedef struct bench_work_slot_t {
    _Alignas(128) size_t count;
    uint64_t sink;
} bench_work_slot_t;

/** BENCH_WORK_STEPS dependent steps from `seed`. */
uint64_t bench_work(uint64_t seed);

/** A bench_item_t over bench_work_slot_t[]: bumps the item's slot, nothing else. */
void bench_work_empty_item(void *slots, size_t item);
/** A bench_item_t over bench_work_slot_t[]: bumps the item's slot after a little work. */
void bench_work_item(void *slots, size_t item);

/** A bench_item_t over bench_work_slot_t[]: bumps the item's slot and its second word, which
 *  compilers make one 16-byte load and store (gcc 12 -O2 does): a task writing a small result. */
void bench_work_bump_two_item(void *slots, size_t item);
/** --pairs' item by its --item name ("bump": bench_work_empty_item, "bump-two"; NULL: "bump");
 *  NULL for any other name. */
bench_item_t bench_work_pairs_item(char const *name);

/** 0 when every one of `items` slots of `slot_size` bytes, each starting with its size_t run
 *  count, ran exactly `expected` times; else prints the first that did not and returns 1. */
int bench_check_counts(void const *slots, size_t slot_size, size_t items, size_t expected, char const *what);
/** bench_check_counts over bench_work_slot_t[]. */
int bench_work_check(bench_work_slot_t const *slots, size_t items, size_t expected, char const *what);

/** Median nanoseconds of one bench_work_item, run serially on the calling thread. */
double bench_work_item_ns(void);

#endif /* UFORM_BENCH_WORK_H */
