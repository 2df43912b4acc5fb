/**
 * @file bench/bench.h
 * @brief `uform bench`: the host executor measured beside OpenMP, pthreadpool, oneTBB and a
 *        serial loop, in one run, printed as one table.
 *
 * The benchmark runs every (pool, variant, threads) configuration in a fresh child process,
 * because some settings (OMP_WAIT_POLICY) are read once when a library initialises and
 * because a spinning pool must not steal cycles from the next one. Children are made by
 * re-executing /proc/self/exe with the parent's exact command line (read back from
 * /proc/self/cmdline) and UFORM_BENCH_CHILD set in the environment. So a host program that
 * links uform_bench_core must route that same command line to uform_bench_main() again,
 * which it does for free if it dispatches on its arguments alone (`uform bench ...`).
 */
#ifndef UFORM_BENCH_H
#define UFORM_BENCH_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Runs the benchmark. `argv[0]` is only used in messages; options follow (see `--help`).
 * @return 0 when every correctness check passed (timings never fail the run), 1 when a
 *         check failed or a child crashed or hung, 2 for a usage error.
 */
int uform_bench_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* UFORM_BENCH_H */
