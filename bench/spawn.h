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

/**
 * A child that stays alive and answers commands (`uform bench --turns`): its stdin is a pipe
 * from the parent, its stdout a pipe back. It reads one command byte at a time and answers each
 * with one BENCH_RESULT_MARK line; every other line it prints goes to the parent's stderr.
 */
typedef struct bench_live_child_t {
    int pid; /* 0: not running */
    int to, from;
    char pending[4096]; /* what was read past the last answer */
    size_t pending_size;
} bench_live_child_t;

/** Starts `argv` again with UFORM_BENCH_CHILD=`spec`; BENCH_OUTCOME_OK or _SPAWN. */
bench_outcome_t bench_live_start(bench_live_child_t *child, char **argv, char const *spec);

/** Sends `command` (0: none, only wait) and reads the answer into `result` (its mark removed),
 *  within `timeout` seconds: OK; HUNG (the child is then killed), FAILED or CRASHED (it ended
 *  without an answer). */
bench_outcome_t bench_live_ask(bench_live_child_t *child, char command, double timeout, char *result,
                               size_t result_size);

/** Closes the child's stdin (its signal to end), waits up to `timeout` seconds for it to exit
 *  (then kills it): OK for exit status 0, else FAILED, CRASHED or HUNG. */
bench_outcome_t bench_live_end(bench_live_child_t *child, double timeout);

/** Prints a child's result line on stdout: BENCH_RESULT_MARK, a space, then `line`. */
void bench_print_result(char const *line);

#endif /* UFORM_BENCH_SPAWN_H */
