/**
 * @file bench/common.h
 * @brief Helpers every part of `uform bench` shares: clocks, medians, the machine's
 *        description and load, and the Markdown table's formatting.
 */
#ifndef UFORM_BENCH_COMMON_H
#define UFORM_BENCH_COMMON_H

#include <stddef.h>

double bench_now_seconds(void);          /* CLOCK_MONOTONIC */
double bench_process_cpu_seconds(void);  /* this process, every thread */
void bench_sleep_seconds(double seconds);
/** Sorts `count` values in ascending order, in place. */
void bench_sort(double *values, size_t count);
/** The median of `count` values (NaN for none); sorts them in place. */
double bench_median(double *values, size_t count);
/** The q-quantile (0..1) of `count` values already sorted (bench_median sorts), interpolated
 *  linearly between neighbours, as Python's statistics.quantiles(method="inclusive"). */
double bench_quantile(double const *sorted, size_t count, double q);

size_t bench_usable_cores(void);         /* CPUs in this process's affinity mask */
void bench_cpu_model(char *out, size_t size);

/** Machine-wide CPU accounting from /proc/stat, in seconds: busy (neither idle nor iowait)
 *  and steal (time the hypervisor ran something else on our vCPUs). */
typedef struct bench_machine_cpu_t {
    double busy, steal, total;
    int ok;
} bench_machine_cpu_t;
bench_machine_cpu_t bench_machine_cpu(void);
/** CPU seconds of this process and its waited-for children. */
double bench_own_cpu_seconds(void);
/** Prints the "- during the run ..." line: how busy the rest of the machine was. */
void bench_print_load(bench_machine_cpu_t before, bench_machine_cpu_t after, double own_seconds, double wall);
/** Prints the "- machine: ..." and "- built with: ..." lines. */
void bench_print_machine(void);

/* "352 ns", "52.9 us", "8.26 ms"; "-" for NaN. */
void bench_format_time(char *out, size_t size, double ns);
/* value to two decimals ("1.07"); "-" for NaN (a ratio with no pair to take it from). */
void bench_format_fixed(char *out, size_t size, double value);
/* value / reference in 2-3 significant digits; "-" when either is missing. */
void bench_format_ratio(char *out, size_t size, double value, double reference);

/** One Markdown table: `rows` rows of `columns` cells of 48 characters, the first row the
 *  header; columns from `right_from` on are right-aligned. */
#define BENCH_CELL 48
void bench_print_table(char (*cells)[BENCH_CELL], size_t rows, size_t columns, int right_from);

/** Prints `text` as lines of at most 100 columns, broken at spaces; lines after the first start
 *  with `indent` (a Markdown list item's continuation). */
void bench_print_wrapped(char const *text, char const *indent);

#endif /* UFORM_BENCH_COMMON_H */
