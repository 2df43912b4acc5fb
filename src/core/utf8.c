/* UTF-8 validation for cutting: the well-formed sequences of Unicode's table 3-7, so
 * overlong forms, surrogates and code points past U+10FFFF end the text as a stray byte does. */
#include "core/utf8.h"

#include <string.h>

/* The length of the well-formed character at `p` (at most `left` bytes), or 0. */
static size_t character_length(const unsigned char *p, size_t left) {
    unsigned char b = p[0];
    if (b < 0x80) return 1;
    size_t n;
    unsigned char low = 0x80, high = 0xBF; /* the allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) n = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0) low = 0xA0;  /* no overlong forms */
        if (b == 0xED) high = 0x9F; /* no surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0) low = 0x90;
        if (b == 0xF4) high = 0x8F; /* nothing past U+10FFFF */
    } else {
        return 0;
    }
    if (left < n || p[1] < low || p[1] > high) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

size_t uform__utf8_cut(char *text, size_t capacity) {
    if (!text || !capacity) return 0;
    size_t length = strnlen(text, capacity);
    if (length == capacity) length = capacity - 1; /* no terminator within the buffer */
    const unsigned char *p = (const unsigned char *)text;
    size_t at = 0;
    while (at < length) {
        size_t n = character_length(p + at, length - at);
        if (!n) break;
        at += n;
    }
    text[at] = '\0';
    return at;
}
