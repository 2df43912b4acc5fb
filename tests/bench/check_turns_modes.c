/* bench_turns_mode_threshold and bench_turns_print_modes (bench/turns_modes.c): where `uform bench
 * --turns` splits a run's cycles into the machine's fast and slow latency modes, and the table it
 * prints for each. The floors are shaped on those recorded on the 2-vCPU AMD EPYC guest
 * (bench/RESULTS.md, ninth session): about 140 ns a call in its fast mode, 550-610 ns in its slow
 * one, with the numbers themselves made up.
 *
 * With --stdin it instead reads lines of floor batches and prints each line's threshold, for
 * check_mode_threshold.py to hold scripts/bench-ab's copy of the rule against this one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "turns_modes.h"

static int failures, checks;

static void expect(int ok, const char *what) {
    checks++;
    if (!ok) {
        failures++;
        printf("FAILED: %s\n", what);
    }
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static double threshold_of(double const *values, size_t count) {
    static double scratch[BENCH_TURNS_MAX_CYCLES];
    return bench_turns_mode_threshold(values, count, scratch);
}

static int from_stdin(void) {
    static double values[BENCH_TURNS_MAX_CYCLES];
    char line[65536];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = 0;
        for (char *token = strtok(line, " \n"); token && n < BENCH_TURNS_MAX_CYCLES; token = strtok(NULL, " \n"))
            values[n++] = strtod(token, NULL);
        printf("%.9g\n", threshold_of(values, n));
    }
    return 0;
}

/* Whether `text` has a Markdown table row whose 7 cells, trimmed, are `cells`. */
static int row_is(char const *text, char const *const cells[7]) {
    for (char const *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (line[0] != '|') continue;
        char const *cell = line + 1;
        int column = 0;
        for (; column < 7; column++) {
            char const *bar = strchr(cell, '|'), *newline = strchr(cell, '\n');
            if (!bar || (newline && bar > newline)) break;
            char const *from = cell, *to = bar;
            while (from < to && *from == ' ') from++;
            while (to > from && to[-1] == ' ') to--;
            if ((size_t)(to - from) != strlen(cells[column]) || strncmp(from, cells[column], (size_t)(to - from))) break;
            cell = bar + 1;
        }
        if (column == 7) return 1;
    }
    return 0;
}

/* The split table for three pools (uform, a peer, the floor) over `cycles` cycles, read back. */
static void split_table(void) {
    enum { POOLS = 3, CYCLES = 12 };
    static double ns[POOLS][CYCLES];
    for (size_t c = 0; c < CYCLES; c++) {
        int fast = c % 3 == 0; /* cycles 0, 3, 6, 9: the fast mode */
        ns[2][c] = fast ? 140 : 560;    /* the floor */
        ns[0][c] = fast ? 280 : 840;    /* uform: 2.0 and 1.5 the floor */
        ns[1][c] = fast ? 245 : 1200;   /* the peer */
    }
    char const *names[POOLS] = {"uform spinning", "ForkUnion pause", "floor (two pinned threads)"};
    fflush(stdout);
    FILE *capture = tmpfile();
    int saved = dup(STDOUT_FILENO);
    if (!capture || saved < 0 || dup2(fileno(capture), STDOUT_FILENO) < 0) {
        expect(0, "stdout captured");
        return;
    }
    bench_turns_print_modes(&ns[0][0], CYCLES, POOLS, CYCLES, names, 0, 2, 99);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    char text[8192] = "";
    rewind(capture);
    size_t got = fread(text, 1, sizeof text - 1, capture);
    text[got] = 0;
    fclose(capture);
    printf("%s", text);
    expect(strstr(text, "fast, the 4 cycles whose floor batch was under 280 ns; slow, the other 8") != NULL,
           "the split names 4 fast cycles, 8 slow ones and the threshold (sqrt(140 * 560) = 280)");
    /* uform's row: its batch, no ratio to itself, its ratio to the floor, in each mode. */
    static char const *const uform_row[] = {"uform spinning", "280 ns", "-", "2.00", "840 ns", "-", "1.50"};
    expect(row_is(text, uform_row), "uform's row: 280 ns and 2.00 the floor fast, 840 ns and 1.50 slow");
    /* The peer's: uform's time over its own, per mode (280/245 = 1.14, 840/1200 = 0.70). */
    static char const *const peer_row[] = {"ForkUnion pause", "245 ns", "1.14", "1.75", "1.20 us", "0.70", "2.14"};
    expect(row_is(text, peer_row), "the peer's row: uform / pool 1.14 fast and 0.70 slow, its own ratios to the floor");
    static char const *const floor_row[] = {"floor (two pinned threads)", "140 ns", "-", "-", "560 ns", "-", "-"};
    expect(row_is(text, floor_row), "the floor's row: its batches, no ratios");
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--stdin")) return from_stdin();
    /* Two modes: the threshold falls between them, whatever the order of the cycles. */
    double both[] = {570, 141, 612, 139, 580, 150, 598, 560, 146, 565, 138, 605};
    double t = threshold_of(both, COUNT(both));
    expect(t > 150 && t < 560, "two modes: the threshold lies between the fast 150 and the slow 560");
    expect(fabs(t - sqrt(150.0 * 560.0)) < 1e-9, "the threshold is the geometric mean of the jump's two sides");
    /* One mode, spread by 1.7x from end to end but never by 1.5x between neighbours. */
    double one[] = {540, 600, 650, 700, 760, 820, 880, 940};
    expect(threshold_of(one, COUNT(one)) == 0, "one spread-out mode has no threshold");
    /* Two fast outliers are not a mode: a mode needs BENCH_MODE_MIN_CYCLES cycles. */
    double outliers[] = {140, 145, 570, 580, 600, 610, 590, 575};
    expect(threshold_of(outliers, COUNT(outliers)) == 0, "two cycles are not a mode");
    /* Three are, and cycles without a floor batch (NaN, 0) are left out. */
    double three[] = {140, NAN, 145, 570, 0, 580, 150, 600, 610};
    t = threshold_of(three, COUNT(three));
    expect(t > 150 && t < 570, "three fast cycles make a mode; missing batches are skipped");
    /* Exactly three on the upper side too (the search's last split). */
    double upper[] = {140, 142, 145, 148, 560, 570, 580};
    t = threshold_of(upper, COUNT(upper));
    expect(t > 148 && t < 560, "three slow cycles make a mode");
    double two_upper[] = {140, 142, 145, 148, 150, 560, 570};
    expect(threshold_of(two_upper, COUNT(two_upper)) == 0, "two slow cycles are not a mode");
    /* A few batches an interrupt slowed, spread out above one mode: not a second mode. */
    double hiccups[] = {560, 570, 575, 580, 590, 600, 610, 620, 1000, 1300, 2000};
    expect(threshold_of(hiccups, COUNT(hiccups)) == 0, "slow outliers spread wider than their jump are no mode");
    /* Too few batches to tell: -1, not 0. */
    double few[] = {140, 145, 570, 580, 600};
    expect(threshold_of(few, COUNT(few)) < 0, "five batches: too few to tell");
    expect(threshold_of(few, 0) < 0, "no batches: too few to tell");
    /* The widest jump wins where there are two: 1.6x inside the slow mode, 3.7x between modes. */
    double widest[] = {140, 145, 150, 550, 560, 570, 900, 910, 920};
    t = threshold_of(widest, COUNT(widest));
    expect(t > 150 && t < 550, "the widest jump splits the modes");
    split_table();
    printf("check_turns_modes: %d checks, %d failed\n", checks, failures);
    return failures != 0 || checks == 0;
}
