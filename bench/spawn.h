/**
 * @file bench/spawn.h
 * @brief Fresh child processes for `uform bench`: every measurement runs in one.
 *
 * The parent re-executes /proc/self/exe with its own exact command line and
 * UFORM_BENCH_CHILD=<spec> in the environment; uform_bench_main() sees the variable and runs
 * the measurement the spec names instead of the parent's work. The child prints one line
 * starting with BENCH_RESULT_MARK on stdout; every other line it prints is passed on to the
 * parent's stderr.
 */
#ifndef UFORM_BENCH_SPAWN_H
#define UFORM_BENCH_SPAWN_H

#include <stddef.h>

#define BENCH_CHILD_ENV "UFORM_BENCH_CHILD"
#define BENCH_RESULT_MARK "UFORM_BENCH_RESULT"

typedef enum bench_outcome_t {
    BENCH_OUTCOME_OK = 0,
    BENCH_OUTCOME_FAILED,  /* exited nonzero, or printed no result line */
    BENCH_OUTCOME_CRASHED, /* killed by a signal */
    BENCH_OUTCOME_HUNG,    /* ran past the timeout and was killed */
    BENCH_OUTCOME_SPAWN    /* could not be started */
} bench_outcome_t;

/** The parent's command line, read back from /proc/self/cmdline (NULL-terminated); NULL if
 *  it cannot be read. Free with free(); the strings live in a static buffer. */
char **bench_self_command_line(void);

/**
 * Runs one child with UFORM_BENCH_CHILD=`spec`, calling `prepare(variant)` (when not NULL) in
 * the child just before it re-executes, and waits up to `timeout` seconds. On
 * BENCH_OUTCOME_OK `result` holds the result line without its mark.
 */
bench_outcome_t bench_spawn(char **argv, char const *spec, void (*prepare)(char const *variant),
                            char const *variant, double timeout, char *result, size_t result_size);

char const *bench_outcome_text(bench_outcome_t outcome);

/** Prints a child's result line on stdout: BENCH_RESULT_MARK, a space, then `line`. */
void bench_print_result(char const *line);

#endif /* UFORM_BENCH_SPAWN_H */
