/* The uform command's shared pieces (cli.h). */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_fail(const char *command, uform_status_t status) {
    fprintf(stderr, "uform %s: %s (%s): %s\n", command, uform_status_message(status), uform_status_name(status),
            uform_last_error());
    return CLI_FAILED;
}

int cli_usage_error(const char *command, const char *format, ...) {
    fprintf(stderr, "uform %s: ", command);
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, " (uform %s --help)\n", command);
    return CLI_USAGE;
}

bool cli_is_help(const char *argument) { return !strcmp(argument, "--help") || !strcmp(argument, "-h"); }

bool cli_parse_size(const char *command, const char *option, const char *text, size_t minimum, size_t maximum,
                    size_t *value) {
    /* strtoull takes a sign and leading spaces, which a count never has. */
    bool digits = *text >= '0' && *text <= '9';
    char *end = NULL;
    errno = 0;
    unsigned long long number = digits ? strtoull(text, &end, 10) : 0;
    if (!digits || errno || *end || number < minimum || number > maximum) {
        cli_usage_error(command, "%s needs a whole number from %zu to %zu, not '%s'", option, minimum, maximum, text);
        return false;
    }
    *value = (size_t)number;
    return true;
}

bool cli_parse_seconds(const char *command, const char *option, const char *text, double minimum, double maximum,
                       double *value) {
    /* Digits or a point first: no sign, no spaces, no "inf" or "nan", no hexadecimal. */
    bool starts = (*text >= '0' && *text <= '9') || *text == '.';
    char *end = NULL;
    errno = 0;
    double number = starts ? strtod(text, &end) : 0;
    bool hexadecimal = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (!starts || hexadecimal || errno || end == text || *end || !isfinite(number) || number < minimum ||
        number > maximum) {
        cli_usage_error(command, "%s needs a number of seconds from %g to %g, not '%s'", option, minimum, maximum,
                        text);
        return false;
    }
    *value = number;
    return true;
}
