/* uform__utf8_cut: text from outside becomes valid UTF-8 by cutting, never by rewriting. */
#include "core/utf8.h"
#include "test.h"

static const char *cut(const char *text, size_t capacity) {
    static char buffer[64];
    memset(buffer, 'Z', sizeof buffer);
    memcpy(buffer, text, strlen(text) + 1 < sizeof buffer ? strlen(text) + 1 : sizeof buffer);
    uform__utf8_cut(buffer, capacity);
    return buffer;
}

int main(void) {
    CHECK_EQ_STR(cut("plain", 64), "plain");
    CHECK_EQ_STR(cut("", 64), "");
    CHECK_EQ_STR(cut("caf\xC3\xA9", 64), "caf\xC3\xA9");
    CHECK_EQ_STR(cut("caf\xC3", 64), "caf");                 /* split two-byte character */
    CHECK_EQ_STR(cut("x\xE2\x82", 64), "x");                 /* split three-byte character */
    CHECK_EQ_STR(cut("x\xF0\x9F\x9A", 64), "x");             /* split four-byte character */
    CHECK_EQ_STR(cut("a\x80z", 64), "a");                    /* stray continuation byte */
    CHECK_EQ_STR(cut("a\xC0\xAFz", 64), "a");                /* overlong '/' */
    CHECK_EQ_STR(cut("a\xED\xA0\x80z", 64), "a");            /* a surrogate */
    CHECK_EQ_STR(cut("a\xF4\x90\x80\x80z", 64), "a");        /* past U+10FFFF */
    CHECK_EQ_STR(cut("a\xFFz", 64), "a");
    /* No terminator within the buffer: the last byte becomes it, then the cut applies. */
    CHECK_EQ_STR(cut("abcdef", 4), "abc");
    CHECK_EQ_STR(cut("ab\xC3\xA9", 4), "ab");
    CHECK_EQ_INT(uform__utf8_cut(NULL, 4), 0);
    char one[1] = {'x'};
    CHECK_EQ_INT(uform__utf8_cut(one, 1), 0);
    CHECK_EQ_INT(one[0], 0);
    TEST_DONE();
}
