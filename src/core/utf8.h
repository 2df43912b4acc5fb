/* Internal: cutting text that came from outside (a driver's device name) so it is valid UTF-8,
 * because every binding decodes it as such and a byte cut mid-character would fail there. */
#ifndef UFORM_CORE_UTF8_H
#define UFORM_CORE_UTF8_H

#include <stddef.h>

/**
 * Terminates `text` (a buffer of `capacity` bytes, capacity > 0) within the buffer and cuts it
 * before the first byte that does not begin a complete, well-formed UTF-8 character (a
 * character the driver's own truncation split, or a stray byte). Answers the new length.
 */
size_t uform__utf8_cut(char *text, size_t capacity);

#endif
