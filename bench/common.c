/* Clocks, medians, the machine's description and load, and table formatting for `uform bench`. */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

double bench_now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double bench_process_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void bench_sleep_seconds(double seconds) {
    struct timespec t;
    t.tv_sec = (time_t)seconds;
    t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static int compare_doubles(void const *a, void const *b) {
    double x = *(double const *)a, y = *(double const *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *values, size_t count) { qsort(values, count, sizeof(double), compare_doubles); }

double bench_median(double *values, size_t count) {
    if (!count) return NAN;
    bench_sort(values, count);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

double bench_quantile(double const *sorted, size_t count, double q) {
    double at = q * (double)(count - 1);
    size_t low = (size_t)at;
    double frac = at - (double)low;
    return low + 1 < count ? sorted[low] * (1 - frac) + sorted[low + 1] * frac : sorted[low];
}

size_t bench_usable_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return (size_t)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

void bench_cpu_model(char *out, size_t size) {
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t') colon++;
                colon[strcspn(colon, "\n")] = 0;
                snprintf(out, size, "%s", colon);
            }
            break;
        }
    fclose(f);
}

bench_machine_cpu_t bench_machine_cpu(void) {
    bench_machine_cpu_t m = {0, 0, 0, 0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return m;
    unsigned long long v[10] = {0};
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", v, v + 1, v + 2, v + 3, v + 4,
                     v + 5, v + 6, v + 7, v + 8, v + 9);
    fclose(f);
    if (got < 8) return m;
    double const tick = (double)sysconf(_SC_CLK_TCK);
    /* user nice system idle iowait irq softirq steal (guest and guest_nice are inside user). */
    double total = 0;
    for (int i = 0; i < 8; i++) total += (double)v[i];
    m.total = total / tick;
    m.steal = (double)v[7] / tick;
    m.busy = (total - (double)v[3] - (double)v[4] - (double)v[7]) / tick;
    m.ok = 1;
    return m;
}

double bench_own_cpu_seconds(void) {
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return (double)self.ru_utime.tv_sec + (double)self.ru_utime.tv_usec * 1e-6 + (double)self.ru_stime.tv_sec +
           (double)self.ru_stime.tv_usec * 1e-6 + (double)children.ru_utime.tv_sec +
           (double)children.ru_utime.tv_usec * 1e-6 + (double)children.ru_stime.tv_sec +
           (double)children.ru_stime.tv_usec * 1e-6;
}

void bench_print_load(bench_machine_cpu_t before, bench_machine_cpu_t after, double own_seconds, double wall) {
    if (!before.ok || !after.ok || wall <= 0) return;
    double other = (after.busy - before.busy - own_seconds) / wall;
    double steal = (after.steal - before.steal) / wall;
    printf("- during the run (%.0f s): other processes kept %.2f cores busy,\n" /* two lines: under 100 columns */
           "  the hypervisor stole %.2f cores (of %zu); figures taken while either is high are noisy\n",
           wall, other > 0 ? other : 0.0, steal, bench_usable_cores());
}

void bench_print_machine(void) {
    char model[256];
    bench_cpu_model(model, sizeof(model));
    struct utsname un;
    uname(&un);
    printf("- machine: %s, %zu usable cores, Linux %s, %s\n", model, bench_usable_cores(), un.release, un.machine);
    printf("- built with: "
#if defined(__clang__)
           "clang "
#elif defined(__GNUC__)
           "gcc "
#endif
           __VERSION__ "\n");
}

void bench_format_time(char *out, size_t size, double ns) {
    if (isnan(ns)) snprintf(out, size, "-");
    else if (ns < 1e3) snprintf(out, size, "%.0f ns", ns);
    else if (ns < 1e4) snprintf(out, size, "%.2f us", ns / 1e3);
    else if (ns < 1e6) snprintf(out, size, "%.1f us", ns / 1e3);
    else if (ns < 1e7) snprintf(out, size, "%.2f ms", ns / 1e6);
    else snprintf(out, size, "%.1f ms", ns / 1e6);
}

void bench_format_fixed(char *out, size_t size, double value) {
    if (isnan(value)) snprintf(out, size, "-");
    else snprintf(out, size, "%.2f", value);
}

void bench_format_ratio(char *out, size_t size, double value, double reference) {
    if (isnan(value) || isnan(reference) || reference <= 0) snprintf(out, size, "-");
    else if (value / reference < 10) snprintf(out, size, "%.2f", value / reference);
    else if (value / reference < 1000) snprintf(out, size, "%.0f", value / reference);
    else snprintf(out, size, "%.2g", value / reference);
}

static void print_row(char (*cells)[BENCH_CELL], size_t columns, size_t const *widths, int right_from) {
    printf("|");
    for (size_t c = 0; c < columns; c++) {
        if ((int)c >= right_from) printf(" %*s |", (int)widths[c], cells[c]);
        else printf(" %-*s |", (int)widths[c], cells[c]);
    }
    printf("\n");
}

void bench_print_table(char (*cells)[BENCH_CELL], size_t rows, size_t columns, int right_from) {
    size_t widths[64];
    if (columns > 64) columns = 64;
    for (size_t c = 0; c < columns; c++) {
        widths[c] = 3;
        for (size_t r = 0; r < rows; r++)
            if (strlen(cells[r * columns + c]) > widths[c]) widths[c] = strlen(cells[r * columns + c]);
    }
    print_row(cells, columns, widths, right_from);
    char rule[64][BENCH_CELL];
    for (size_t c = 0; c < columns; c++) {
        size_t w = widths[c] < BENCH_CELL - 1 ? widths[c] : BENCH_CELL - 1;
        memset(rule[c], '-', w);
        rule[c][w] = 0;
        if ((int)c >= right_from) rule[c][w - 1] = ':';
    }
    print_row(rule, columns, widths, right_from);
    for (size_t r = 1; r < rows; r++) print_row(cells + r * columns, columns, widths, right_from);
}

/* Prints `text` as lines of at most 100 columns, broken at spaces; lines after the first start
 * with `indent` (a Markdown list item's continuation). */
void bench_print_wrapped(char const *text, char const *indent) {
    size_t const width = 100;
    size_t column = 0;
    for (char const *p = text; *p;) {
        while (*p == ' ') p++;
        size_t word = strcspn(p, " ");
        if (!word) break;
        if (column && column + 1 + word > width) {
            printf("\n%s", indent);
            column = strlen(indent);
        } else if (column) {
            putchar(' ');
            column++;
        }
        printf("%.*s", (int)word, p);
        column += word;
        p += word;
    }
    printf("\n");
}
