/*
 * `uform bench --turns` by latency mode (turns_modes.h). A cycle's pools ran 10-30 ms apart,
 * inside one mode nearly always, so a cycle belongs to the mode its floor's batch shows, and a
 * ratio within the cycle is a ratio within that mode. The fast mode is where a pool's fixed
 * cost per call shows (the floor is small beside it); the slow mode is mostly cross-core trips.
 */
#include "turns_modes.h"

#include <math.h>
#include <stdio.h>

#include "common.h"

/* The 90th percentile of `count` sorted values over their 10th. */
static double spread(double const *sorted, size_t count) {
    return bench_quantile(sorted, count, 0.9) / bench_quantile(sorted, count, 0.1);
}

double bench_turns_mode_threshold(double const *floor_ns, size_t cycles, double *scratch) {
    size_t n = 0;
    for (size_t c = 0; c < cycles; c++)
        if (floor_ns[c] > 0) scratch[n++] = floor_ns[c]; /* NaN compares false: left out */
    if (n < 2 * BENCH_MODE_MIN_CYCLES) return -1;
    bench_sort(scratch, n);
    size_t widest = 0;
    double widest_gap = 0;
    for (size_t i = BENCH_MODE_MIN_CYCLES; i + BENCH_MODE_MIN_CYCLES <= n; i++) {
        double gap = scratch[i] / scratch[i - 1];
        if (gap > widest_gap) widest_gap = gap, widest = i;
    }
    if (widest_gap < BENCH_MODE_GAP) return 0;
    if (spread(scratch, widest) >= widest_gap || spread(scratch + widest, n - widest) >= widest_gap) return 0;
    return sqrt(scratch[widest - 1] * scratch[widest]);
}

enum { MAX_ROWS = 17, COLUMNS = 7 };

/* The median over the cycles of `mode` (fast: floor under the threshold) of a[c] / b[c], or of
 * a[c] alone where b is NULL; NaN where no cycle has both. */
static double median_in_mode(double const *a, double const *b, double const *floor, size_t cycles, double threshold,
                             int fast, double *values) {
    size_t n = 0;
    for (size_t c = 0; c < cycles; c++) {
        if (!(floor[c] > 0) || (floor[c] < threshold) != fast || !(a[c] > 0)) continue;
        if (b && !(b[c] > 0)) continue;
        values[n++] = b ? a[c] / b[c] : a[c];
    }
    return bench_median(values, n);
}

void bench_turns_print_modes(double const *ns, size_t stride, size_t pools, size_t cycles,
                             char const *const *names, size_t reference, size_t floor, size_t floor_context) {
    static double values[BENCH_TURNS_MAX_CYCLES];
    printf("\n");
    if (floor >= pools || cycles > BENCH_TURNS_MAX_CYCLES) {
        bench_print_wrapped("By latency mode: no floor in this run (it needs 2 threads and 2 CPUs), so no "
                            "split.",
                            "");
        return;
    }
    double const *floor_ns = ns + floor * stride;
    double const threshold = bench_turns_mode_threshold(floor_ns, cycles, values);
    if (threshold < 0) {
        bench_print_wrapped("By latency mode: too few floor batches (under 6) to tell modes apart.", "");
        return;
    }
    if (threshold == 0) {
        bench_print_wrapped("By latency mode: one mode all run (no jump of 1.5x or more between the floor's "
                            "batches with 3 cycles on each side, wider than either side's own spread), so the "
                            "table above is that mode's.",
                            "");
        return;
    }
    size_t fast = 0, slow = 0;
    for (size_t c = 0; c < cycles; c++)
        if (floor_ns[c] > 0) floor_ns[c] < threshold ? fast++ : slow++;
    char text[512];
    snprintf(text, sizeof text,
             "By latency mode: fast, the %zu cycles whose floor batch was under %.0f ns; slow, the other %zu. "
             "Each column is a median over that mode's cycles, as above.",
             fast, threshold, slow);
    bench_print_wrapped(text, "");
    printf("\n");
    static char cells[MAX_ROWS * COLUMNS][BENCH_CELL];
#define CELL(row, column) cells[(row)*COLUMNS + (column)]
    static char const *const headers[COLUMNS] = {"pool", "fast: batch", "fast: uform / pool", "fast: / floor",
                                                 "slow: batch", "slow: uform / pool", "slow: / floor"};
    size_t rows = 1;
    for (size_t k = 0; k < COLUMNS; k++) snprintf(CELL(0, k), BENCH_CELL, "%s", headers[k]);
    for (size_t k = 0; k < pools && rows < MAX_ROWS; k++, rows++) {
        double const *row = ns + k * stride;
        snprintf(CELL(rows, 0), BENCH_CELL, "%.*s", BENCH_CELL - 1, names[k]);
        for (int mode = 0; mode < 2; mode++) {
            int const is_fast = mode == 0;
            char *batch = CELL(rows, 1 + 3 * mode), *versus = CELL(rows, 2 + 3 * mode), *over = CELL(rows, 3 + 3 * mode);
            bench_format_time(batch, BENCH_CELL, median_in_mode(row, NULL, floor_ns, cycles, threshold, is_fast, values));
            double ratio = NAN;
            if (reference < pools && k != reference && k != floor && k != floor_context)
                ratio = median_in_mode(ns + reference * stride, row, floor_ns, cycles, threshold, is_fast, values);
            bench_format_fixed(versus, BENCH_CELL, ratio);
            ratio = k != floor ? median_in_mode(row, floor_ns, floor_ns, cycles, threshold, is_fast, values) : NAN;
            bench_format_fixed(over, BENCH_CELL, ratio);
        }
    }
#undef CELL
    bench_print_table(cells, rows, COLUMNS, 1);
}
