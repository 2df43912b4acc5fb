/* The NCCL test double's configuration (UFORM_NCCL_DOUBLE_CONFIG, README.md), read once per
 * process, which symbols dlsym may see, and its log (UFORM_NCCL_DOUBLE_LOG). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/double_config.h"
#include "nccl_double_internal.h"

static config_t config = {.version = 22105, .delay_ms = 20, .init_rank = -1, .die_rank = -1};
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static const char *const result_names[] = {"ncclSuccess",      "ncclUnhandledCudaError", "ncclSystemError",
                                           "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
                                           "ncclRemoteError",  "ncclInProgress",         "ncclTimeout"};
#define RESULT_COUNT (sizeof result_names / sizeof result_names[0])

/* A result's name or a decimal number; -1 if neither. */
static long parse_result(const char *text) {
    for (size_t i = 0; i < RESULT_COUNT; i++)
        if (strcmp(text, result_names[i]) == 0) return (long)i;
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > 0xffff) return -1;
    return value;
}

static long parse_count(const char *text) {
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > 0x7fffffff) return -1;
    return value;
}

static void refuse(const char *what, const char *line) {
    if (!config.error[0]) snprintf(config.error, sizeof config.error, "%s: \"%s\"", what, line);
}

/* One line, its comment cut and its blanks trimmed by double_config_lines (a carriage return
 * before the kind is a blank here too). */
static void parse_line(char *line, size_t number, void *context) {
    while (*line == '\r' || *line == ' ' || *line == '\t') line++;
    char original[256];
    snprintf(original, sizeof original, "%s", line); /* for messages: tokenising cuts `line` */
    char *save = NULL;
    char *kind = strtok_r(line, " \t", &save), *value = strtok_r(NULL, " \t", &save);
    if (!kind || !value || strtok_r(NULL, " \t", &save)) {
        refuse("not `kind value`", original);
        return;
    }
    if (strcmp(kind, "version") == 0) {
        long version = parse_count(value);
        if (version < 0) refuse("bad version", original);
        else config.version = (int)version;
        return;
    }
    if (strcmp(kind, "delay") == 0) {
        long delay = parse_count(value);
        if (delay < 0 || delay > 600000) refuse("bad delay (milliseconds, at most 600000)", original);
        else config.delay_ms = delay;
        return;
    }
    if (strcmp(kind, "fault") != 0) {
        refuse("unknown line kind", original);
        return;
    }
    char *equals = strchr(value, '=');
    if (!equals || !equals[1]) {
        refuse("a fault is key=value", original);
        return;
    }
    *equals = '\0';
    const char *key = value, *argument = equals + 1;
    if (strcmp(key, "init") == 0) {
        long result = parse_result(argument);
        if (result <= 0) refuse("init takes an NCCL error name or number", original);
        config.init_fault = result > 0;
        config.init_result = (uform_ncclResult)(result > 0 ? result : 0);
    } else if (strcmp(key, "collective") == 0) {
        long result = parse_result(argument);
        if (result <= 0 || result == UFORM_NCCL_IN_PROGRESS)
            refuse("collective takes an NCCL error name or number", original);
        else config.collective_result = (uform_ncclResult)result;
    } else if (strcmp(key, "init_rank") == 0) {
        config.init_rank = parse_count(argument);
        if (config.init_rank < 0) refuse("init_rank takes a rank", original);
    } else if (strcmp(key, "init_dies") == 0) {
        config.die_rank = parse_count(argument);
        if (config.die_rank < 0) refuse("init_dies takes a rank", original);
    } else if (strcmp(key, "missing") == 0) {
        if (config.missing_count == MAX_MISSING || strlen(argument) >= sizeof config.missing[0])
            refuse("too many or too long missing symbols", original);
        else snprintf(config.missing[config.missing_count++], sizeof config.missing[0], "%s", argument);
    } else {
        refuse("unknown fault", original);
    }
}

static void load_config(void) {
    char *owned = NULL;
    const char *unreadable = NULL;
    const char *text = double_config_text("UFORM_NCCL_DOUBLE_CONFIG", 1 << 16, &owned, &unreadable);
    if (unreadable) snprintf(config.error, sizeof config.error, "cannot read %s", unreadable);
    if (text && !owned) owned = strdup(text); /* the lines are cut in place */
    if (owned) double_config_lines(owned, parse_line, NULL);
    free(owned);
    if (config.init_rank >= 0 && !config.init_fault) refuse("init_rank without init", "fault init_rank");
    if (config.error[0]) fprintf(stderr, "NCCL test double: configuration refused: %s\n", config.error);
}

const config_t *nccl_double_configuration(void) {
    pthread_once(&config_once, load_config);
    return &config;
}

int nccl_double_visible(const char *symbol) {
    const config_t *c = nccl_double_configuration();
    for (size_t i = 0; i < c->missing_count; i++)
        if (strcmp(c->missing[i], symbol) == 0) return 0;
    return 1;
}

/* One line per call, appended with one write() to a file opened O_APPEND, so lines of many
 * processes never interleave. */
void nccl_double_log(const char *line, size_t length) {
    const char *path = getenv("UFORM_NCCL_DOUBLE_LOG");
    if (!path || !*path) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    ssize_t written = write(fd, line, length);
    (void)written;
    close(fd);
}
