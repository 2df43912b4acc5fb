/* A little work for one item (see work.h). */
#include "work.h"

#include <stdio.h>
#include <string.h>

#include "common.h"

uint64_t bench_work(uint64_t seed) {
    uint64_t x = seed | 1;
    for (int i = 0; i < BENCH_WORK_STEPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

void bench_work_empty_item(void *context, size_t item) {
    bench_work_slot_t *slots = (bench_work_slot_t *)context;
    slots[item].count++;
}

void bench_work_bump_two_item(void *context, size_t item) {
    bench_work_slot_t *slots = (bench_work_slot_t *)context;
    slots[item].count++;
    slots[item].sink += 1;
}

bench_item_t bench_work_pairs_item(char const *name) {
    if (!name || !strcmp(name, "bump")) return bench_work_empty_item;
    if (!strcmp(name, "bump-two")) return bench_work_bump_two_item;
    return NULL;
}

void bench_work_item(void *context, size_t item) {
    bench_work_slot_t *slots = (bench_work_slot_t *)context;
    slots[item].sink += bench_work(slots[item].sink + item);
    slots[item].count++;
}

int bench_check_counts(void const *slots, size_t slot_size, size_t items, size_t expected, char const *what) {
    for (size_t i = 0; i < items; i++) {
        size_t count = *(size_t const *)((char const *)slots + i * slot_size);
        if (count != expected) {
            fprintf(stderr, "uform bench: %s: item %zu ran %zu times, expected %zu\n", what, i, count, expected);
            return 1;
        }
    }
    return 0;
}

int bench_work_check(bench_work_slot_t const *slots, size_t items, size_t expected, char const *what) {
    return bench_check_counts(slots, sizeof *slots, items, expected, what);
}

double bench_work_item_ns(void) {
    static bench_work_slot_t slot; /* static: the work's result escapes, so it is not optimised away */
    double samples[31];
    for (int s = 0; s < 31; s++) {
        double start = bench_now_seconds();
        for (int k = 0; k < 100; k++) bench_work_item(&slot, 0);
        samples[s] = (bench_now_seconds() - start) * 1e9 / 100;
    }
    __asm__ volatile("" : : "r"(slot.sink) : "memory");
    return bench_median(samples, 31);
}
