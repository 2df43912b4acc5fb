/* Internal to the report: an snprintf-style text writer that counts every byte and stores those
 * that fit, with the JSON and CPU-list pieces the report's two formats share. */
#ifndef UFORM_REPORT_WRITER_H
#define UFORM_REPORT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h" /* UFORM_PRINTF_ */

typedef struct uform__writer_t {
    char *buffer;
    size_t capacity, length;
} uform__writer_t;

UFORM_PRINTF_(2, 3) void uform__put(uform__writer_t *w, const char *format, ...);

/** A JSON string: quotes, backslashes and control characters escaped; other bytes as they are
 *  (the report's strings are UTF-8 already). */
void uform__put_json_string(uform__writer_t *w, const char *text);

/** A comma-separated token string ("serial,cuda") as a JSON array of strings. */
void uform__put_json_tokens(uform__writer_t *w, const char *tokens);

/** A JSON array of integers. */
void uform__put_json_ints(uform__writer_t *w, const int32_t *values, size_t count);

/** CPUs as the kernel's list ("0-19,40-59"), ascending whatever the input order. */
void uform__put_cpulist(uform__writer_t *w, const int32_t *cpus, size_t count);

/** A byte count as lscpu spells cache sizes: "32 KiB", "1 MiB", "27.5 MiB". */
void uform__put_size(uform__writer_t *w, uint64_t bytes);

#endif
