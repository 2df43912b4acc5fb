/* The uform command's shared pieces: exit codes, failure reports and whole-number parsing, so
 * every command refuses bad usage the same way before it opens anything. */
#ifndef UFORM_CLI_H
#define UFORM_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "uform.h"

/** Exit codes of every command. */
enum {
    CLI_OK = 0,     /**< done */
    CLI_FAILED = 1, /**< the library answered a failing status (printed with its detail) */
    CLI_USAGE = 2,  /**< bad usage: unknown command or option, a missing or malformed value */
};

/** Prints "uform <command>: <message> (<STATUS>): <detail>" on stderr; answers CLI_FAILED. */
int cli_fail(const char *command, uform_status_t status);

/** Prints "uform <command>: <message>" and a pointer to --help on stderr; answers CLI_USAGE. */
int cli_usage_error(const char *command, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Whether `argument` asks for help (--help, -h). */
bool cli_is_help(const char *argument);

/**
 * Parses `text`, the value of `option`, as a whole decimal integer in [minimum, maximum]:
 * no sign, no spaces, no trailing characters. On failure prints why and answers false.
 */
bool cli_parse_size(const char *command, const char *option, const char *text, size_t minimum, size_t maximum,
                    size_t *value);

/** Likewise for a finite decimal number of seconds in [minimum, maximum]. */
bool cli_parse_seconds(const char *command, const char *option, const char *text, double minimum, double maximum,
                       double *value);

int command_info(int argc, char **argv);
int command_mesh(int argc, char **argv);

#endif
