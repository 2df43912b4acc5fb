/* The report's writer (writer.h). */
#include "report/writer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hardware/cpulist.h"

void uform__put(uform__writer_t *w, const char *format, ...) {
    va_list args;
    va_start(args, format);
    size_t room = w->length < w->capacity ? w->capacity - w->length : 0;
    int n = vsnprintf(room ? w->buffer + w->length : NULL, room, format, args);
    va_end(args);
    if (n > 0) w->length += (size_t)n;
}

void uform__put_json_string(uform__writer_t *w, const char *text) {
    uform__put(w, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            uform__put(w, "\\%c", *p);
        else if (*p < 0x20)
            uform__put(w, "\\u%04x", *p);
        else
            uform__put(w, "%c", *p);
    }
    uform__put(w, "\"");
}

void uform__put_json_tokens(uform__writer_t *w, const char *tokens) {
    uform__put(w, "[");
    for (const char *p = tokens; *p;) {
        size_t n = strcspn(p, ",");
        char token[64];
        snprintf(token, sizeof token, "%.*s", (int)(n < sizeof token ? n : sizeof token - 1), p);
        uform__put(w, "%s", p == tokens ? "" : ",");
        uform__put_json_string(w, token);
        p += n;
        if (*p == ',') p++;
    }
    uform__put(w, "]");
}

void uform__put_json_ints(uform__writer_t *w, const int32_t *values, size_t count) {
    uform__put(w, "[");
    for (size_t i = 0; i < count; i++) uform__put(w, "%s%d", i ? "," : "", (int)values[i]);
    uform__put(w, "]");
}

static int ascending(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

void uform__put_cpulist(uform__writer_t *w, const int32_t *cpus, size_t count) {
    int32_t *sorted = malloc((count ? count : 1) * sizeof *sorted);
    char *text = sorted ? malloc(count * 12 + 1) : NULL;
    if (!sorted || !text) {
        uform__put(w, "?");
    } else {
        memcpy(sorted, cpus, count * sizeof *sorted);
        qsort(sorted, count, sizeof *sorted, ascending);
        size_t length = uform__cpulist_format(sorted, count, text, count * 12 + 1);
        uform__put(w, "%.*s", (int)length, text);
    }
    free(sorted);
    free(text);
}

void uform__put_size(uform__writer_t *w, uint64_t bytes) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024 && unit < 4) {
        value /= 1024;
        unit++;
    }
    /* Whole sizes print whole (32 KiB), others with one decimal (27.5 MiB), as lscpu does. */
    if (value == (double)(uint64_t)value)
        uform__put(w, "%llu %s", (unsigned long long)value, units[unit]);
    else
        uform__put(w, "%.1f %s", value, units[unit]);
}
