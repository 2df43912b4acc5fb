/* The CPU-list parser on good, odd and hostile text. */
#include "hardware/cpulist.h"
#include "test.h"

static size_t parse(const char *text, uform_status_t expected, int32_t **cpus) {
    size_t count = 0;
    *cpus = NULL;
    CHECK_STATUS(uform__cpulist_parse(text, "test", cpus, &count), expected);
    return count;
}

int main(void) {
    int32_t *cpus;
    size_t n = parse("0-3,8,10-11\n", UFORM_STATUS_OK, &cpus);
    CHECK_EQ_INT(n, 7);
    int32_t expected[] = {0, 1, 2, 3, 8, 10, 11};
    for (size_t i = 0; i < n; i++) CHECK_EQ_INT(cpus[i], expected[i]);
    char text[64];
    CHECK_EQ_INT(uform__cpulist_format(cpus, n, text, sizeof text), strlen("0-3,8,10-11"));
    CHECK_EQ_STR(text, "0-3,8,10-11");
    /* Truncated formatting stays terminated and reports the full length. */
    CHECK_EQ_INT(uform__cpulist_format(cpus, n, text, 4), 11);
    CHECK(strlen(text) < 4);
    CHECK(uform__cpulist_contains(cpus, n, 10) && !uform__cpulist_contains(cpus, n, 9));
    free(cpus);

    /* Whitespace, overlaps and out-of-order pieces: sorted and deduplicated. */
    n = parse("  5 , 1-2,2-3 ,0\n\n", UFORM_STATUS_OK, &cpus);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(cpus[0], 0);
    CHECK_EQ_INT(cpus[4], 5);
    free(cpus);

    /* Empty and blank lists are valid: a CPU-less node's cpulist is just "\n". */
    CHECK_EQ_INT(parse("", UFORM_STATUS_OK, &cpus), 0);
    CHECK(cpus == NULL);
    CHECK_EQ_INT(parse(" \n", UFORM_STATUS_OK, &cpus), 0);

    const char *bad[] = {"0-", "-3", "3-1", "1,,2", "1,", ",1", "x", "0-3,a", "1 2", "0x10", "1-2-3",
                         "1048577", "0-99999999", "99999999999999999999", "4294967296", "1:2", "1;2", "\x01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        parse(bad[i], UFORM_STATUS_MALFORMED, &cpus);
        CHECK(strstr(uform_last_error(), "test: malformed CPU list") != NULL);
    }
    /* The largest allowed number still parses. */
    n = parse("1048576", UFORM_STATUS_OK, &cpus);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(cpus[0], 1 << 20);
    free(cpus);
    CHECK_STATUS(uform__cpulist_parse(NULL, "test", &cpus, &n), UFORM_STATUS_INVALID_ARGUMENT);
    TEST_DONE();
}
