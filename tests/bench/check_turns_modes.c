/* bench_turns_mode_threshold (bench/turns_modes.c): where `uform bench --turns` and
 * scripts/bench-ab split a run's cycles into the machine's fast and slow latency modes. Floors
 * recorded by this project's runs on the 2-vCPU AMD EPYC guest (bench/RESULTS.md): 190-230 ns a
 * call in its fast mode, 540-940 ns in its slow one. */
#include <math.h>
#include <stdio.h>

#include "turns_modes.h"

static int failures, checks;

static void expect(int ok, const char *what) {
    checks++;
    if (!ok) {
        failures++;
        printf("FAILED: %s\n", what);
    }
}

int main(void) {
    double scratch[64];
    /* Two modes: the threshold falls between them, whatever the order of the cycles. */
    double both[] = {570, 205, 612, 189, 880, 214, 742, 930, 226, 560, 198, 845};
    double t = bench_turns_mode_threshold(both, 12, scratch);
    expect(t > 226 && t < 560, "two modes: the threshold lies between the fast 226 and the slow 560");
    expect(fabs(t - sqrt(226.0 * 560.0)) < 1e-9, "the threshold is the geometric mean of the jump's two sides");
    /* One mode, spread by 1.7x from end to end but never by 1.5x between neighbours. */
    double one[] = {540, 600, 650, 700, 760, 820, 880, 940};
    expect(bench_turns_mode_threshold(one, 8, scratch) == 0, "one spread-out mode has no threshold");
    /* Two fast outliers are not a mode: a mode needs BENCH_MODE_MIN_CYCLES cycles. */
    double outliers[] = {200, 205, 570, 580, 600, 610, 590, 575};
    expect(bench_turns_mode_threshold(outliers, 8, scratch) == 0, "two cycles are not a mode");
    /* Three are, and cycles without a floor batch (NaN, 0) are left out. */
    double three[] = {200, NAN, 205, 570, 0, 580, 210, 600, 610};
    t = bench_turns_mode_threshold(three, 9, scratch);
    expect(t > 210 && t < 570, "three fast cycles make a mode; missing batches are skipped");
    /* Too few cycles for two modes of three each: none. */
    double few[] = {200, 205, 570, 580, 600};
    expect(bench_turns_mode_threshold(few, 5, scratch) == 0, "five cycles cannot hold two modes");
    expect(bench_turns_mode_threshold(few, 0, scratch) == 0, "no cycles: no threshold");
    /* The widest jump wins where there are two: 1.6x inside the slow mode, 2.5x between modes. */
    double widest[] = {200, 210, 220, 550, 560, 570, 900, 910, 920};
    t = bench_turns_mode_threshold(widest, 9, scratch);
    expect(t > 220 && t < 550, "the widest jump splits the modes");
    printf("check_turns_modes: %d checks, %d failed\n", checks, failures);
    return failures != 0 || checks == 0;
}
