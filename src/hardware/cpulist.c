/* The CPU-list parser. Sysfs files are trusted no more than any input: fixtures, containers
 * and fuzzers hand us whatever they like, and a bad list must be a status, never a crash. */
#include "hardware/cpulist.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static const char *skip_space(const char *p) {
    while (is_space(*p)) p++;
    return p;
}

/* Reads one decimal number, refusing anything above UFORM_CPULIST_MAX before it can overflow. */
static const char *read_number(const char *p, int32_t *value) {
    if (*p < '0' || *p > '9') return NULL;
    int64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > UFORM_CPULIST_MAX) return NULL;
        p++;
    }
    *value = (int32_t)v;
    return p;
}

/* Walks the text once; calls `mark` for each range when `bits` is set, else finds the maximum. */
static uform_status_t walk(const char *text, const char *what, unsigned char *bits, int32_t *max) {
    const char *p = skip_space(text);
    if (*p == '\0') return UFORM_STATUS_OK;
    for (;;) {
        int32_t first, last;
        const char *start = p;
        p = read_number(p, &first);
        if (!p) goto malformed;
        last = first;
        p = skip_space(p);
        if (*p == '-') {
            p = read_number(skip_space(p + 1), &last);
            if (!p || last < first) goto malformed;
            p = skip_space(p);
        }
        if (last > *max) *max = last;
        if (bits)
            for (int32_t cpu = first; cpu <= last; cpu++) bits[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
        if (*p == '\0') return UFORM_STATUS_OK;
        if (*p != ',') goto malformed;
        p = skip_space(p + 1);
        continue;
    malformed:
        return uform__fail(UFORM_STATUS_MALFORMED, "%s: malformed CPU list near \"%.24s\" (in \"%.64s\")", what,
                           start, text);
    }
}

uform_status_t uform__cpulist_parse(const char *text, const char *what, int32_t **cpus, size_t *count) {
    if (!text || !cpus || !count) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "cpulist: NULL argument");
    int32_t max = -1;
    uform_status_t status = walk(text, what, NULL, &max);
    if (status != UFORM_STATUS_OK) return status;
    *cpus = NULL;
    *count = 0;
    if (max < 0) return UFORM_STATUS_OK;
    /* A bitmap sized to the largest number dedups and sorts overlapping ranges in one pass. */
    unsigned char *bits = calloc((size_t)max / 8 + 1, 1);
    if (!bits) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: no memory for a CPU list up to %d", what, max);
    walk(text, what, bits, &max);
    size_t n = 0;
    for (int32_t cpu = 0; cpu <= max; cpu++) n += (bits[cpu / 8] >> (cpu % 8)) & 1u;
    int32_t *list = malloc(n * sizeof *list);
    if (!list) {
        free(bits);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: no memory for %zu CPUs", what, n);
    }
    size_t i = 0;
    for (int32_t cpu = 0; cpu <= max; cpu++)
        if ((bits[cpu / 8] >> (cpu % 8)) & 1u) list[i++] = cpu;
    free(bits);
    *cpus = list;
    *count = n;
    return UFORM_STATUS_OK;
}

size_t uform__cpulist_format(const int32_t *cpus, size_t count, char *buffer, size_t capacity) {
    size_t length = 0;
    if (capacity) buffer[0] = '\0';
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (j + 1 < count && cpus[j + 1] == cpus[j] + 1) j++;
        char piece[32];
        int n = j == i ? snprintf(piece, sizeof piece, "%s%d", i ? "," : "", (int)cpus[i])
                       : snprintf(piece, sizeof piece, "%s%d-%d", i ? "," : "", (int)cpus[i], (int)cpus[j]);
        if (length + (size_t)n < capacity) memcpy(buffer + length, piece, (size_t)n + 1);
        else if (length < capacity) buffer[length] = '\0';
        length += (size_t)n;
        i = j + 1;
    }
    return length;
}

int uform__cpulist_contains(const int32_t *cpus, size_t count, int32_t cpu) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (cpus[mid] == cpu) return 1;
        if (cpus[mid] < cpu) low = mid + 1;
        else high = mid;
    }
    return 0;
}
