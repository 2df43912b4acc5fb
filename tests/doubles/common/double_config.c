/* What the test doubles' configuration parsers share (double_config.h). */
#include "double_config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t limit) {
    FILE *file = fopen(path, "r");
    if (!file) return NULL;
    char *text = calloc(1, limit);
    if (text) text[fread(text, 1, limit - 1, file)] = '\0';
    fclose(file);
    return text;
}

const char *double_config_text(const char *variable, size_t limit, char **owned, const char **unreadable) {
    const char *text = getenv(variable);
    *owned = NULL;
    *unreadable = NULL;
    if (text && text[0] == '@') {
        *owned = read_file(text + 1, limit);
        if (!*owned) *unreadable = text + 1;
        text = *owned;
    }
    return text;
}

void double_config_lines(char *text, void (*each)(char *line, size_t number, void *context), void *context) {
    size_t number = 0;
    for (char *save = NULL, *entry = strtok_r(text, "\n;", &save); entry; entry = strtok_r(NULL, "\n;", &save)) {
        number++;
        entry[strcspn(entry, "#")] = '\0';
        for (size_t n = strlen(entry); n && (entry[n - 1] == ' ' || entry[n - 1] == '\t' || entry[n - 1] == '\r'); n--)
            entry[n - 1] = '\0'; /* trailing blanks, so a comment after a name is not part of it */
        while (*entry == ' ' || *entry == '\t') entry++;
        if (*entry) each(entry, number, context);
    }
}

void double_config_refuse(char *error, size_t capacity, size_t line, const char *format, ...) {
    if (error[0]) return; /* the first refusal is the one that explains */
    int n = snprintf(error, capacity, "line %zu: ", line);
    va_list args;
    va_start(args, format);
    vsnprintf(error + n, capacity - (size_t)n, format, args);
    va_end(args);
}

int double_config_word(double_config_words_t *words, char **key, char **value) {
    if (words->cut) *words->cut = words->saved;
    words->cut = NULL;
    char *p = words->next;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return 0;
    *key = p;
    if (strncmp(p, "name=", 5) == 0) { /* the rest of the line: names have spaces */
        p[4] = '\0';
        *value = p + 5;
        words->next = *value + strlen(*value);
        return 1;
    }
    char *end = p + strcspn(p, " \t");
    words->saved = *end;
    words->cut = end;
    *end = '\0';
    words->next = end;
    *value = strchr(p, '=');
    if (*value) *(*value)++ = '\0';
    return 1;
}

void double_config_name(const char *text, char *name, size_t capacity) {
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < capacity; p++) {
        unsigned byte;
        if (p[0] == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) && isxdigit((unsigned char)p[3]) &&
            sscanf(p + 2, "%2x", &byte) == 1) {
            name[n++] = (char)byte;
            p += 3;
        } else {
            name[n++] = *p;
        }
    }
    name[n] = '\0';
}

int double_config_size_shift(const char *suffix) {
    int shift = 0;
    if (*suffix == 'K') shift = 10;
    else if (*suffix == 'M') shift = 20;
    else if (*suffix == 'G') shift = 30;
    else if (*suffix == 'T') shift = 40;
    else if (*suffix) return -1;
    if (shift && suffix[1]) return -1;
    return shift;
}

char *double_config_key_value(char **key) {
    while (**key == ' ') (*key)++;
    char *value = strchr(*key, '=');
    if (!value) return NULL;
    *value++ = '\0';
    value[strcspn(value, " \t")] = '\0';
    return value;
}

int double_config_count(const char *text, unsigned long *count) {
    char *end = NULL;
    unsigned long n = strtoul(text, &end, 10);
    if (end == text || *end || n == 0 || text[0] == '-') return 0;
    *count = n;
    return 1;
}

long double_config_error(const char *text, const double_config_error_t *errors, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (strcmp(text, errors[i].name) == 0) return errors[i].number;
    char *end = NULL;
    long number = strtol(text, &end, 10);
    return end != text && *end == '\0' && number >= 0 ? number : -1;
}
