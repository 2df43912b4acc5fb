/* Internal: the kernel's CPU-list text ("0-3,8,10-11"), used by every sysfs and cgroup file that
 * names CPUs or nodes. One parser, fuzzed (fuzz/fuzz_cpulist.c), so no reader rolls its own. */
#ifndef UFORM_HARDWARE_CPULIST_H
#define UFORM_HARDWARE_CPULIST_H

#include <stddef.h>
#include <stdint.h>

#include "uform/status.h"

/** Numbers above this are not CPUs or nodes of any machine; they are corrupt input. */
#define UFORM_CPULIST_MAX ((int32_t)1 << 20)

/**
 * Parses a list of non-negative numbers and ranges, tolerating surrounding whitespace and a
 * trailing newline; an empty (or blank) list is valid and holds nothing. On OK `*cpus` is a
 * malloc'd ascending, duplicate-free array of `*count` entries (NULL when empty) that the
 * caller frees. MALFORMED (with the offending text in uform_last_error) for garbage, reversed
 * ranges or numbers above UFORM_CPULIST_MAX; OUT_OF_MEMORY. `what` names the source in errors.
 */
uform_status_t uform__cpulist_parse(const char *text, const char *what, int32_t **cpus, size_t *count);

/** Writes `cpus` (ascending) as a CPU list ("0-3,8") into `buffer`, always NUL-terminated;
 *  answers the full length, snprintf-style. */
size_t uform__cpulist_format(const int32_t *cpus, size_t count, char *buffer, size_t capacity);

/** Whether ascending `cpus` holds `cpu` (binary search). */
int uform__cpulist_contains(const int32_t *cpus, size_t count, int32_t cpu);

#endif
