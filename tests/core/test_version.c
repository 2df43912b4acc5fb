/* The run-time version is the compile-time one. */
#include "test.h"

int main(void) {
    CHECK_EQ_STR(uform_version(), UFORM_VERSION_STRING);
    CHECK_EQ_INT(uform_version_number(), UFORM_VERSION_NUMBER);
    CHECK_EQ_INT(UFORM_VERSION_NUMBER, UFORM_VERSION_MAJOR * 10000 + UFORM_VERSION_MINOR * 100 + UFORM_VERSION_PATCH);
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d%s%s", UFORM_VERSION_MAJOR, UFORM_VERSION_MINOR, UFORM_VERSION_PATCH,
             UFORM_VERSION_SUFFIX[0] ? "-" : "", UFORM_VERSION_SUFFIX);
    CHECK_EQ_STR(uform_version(), expected);
    TEST_DONE();
}
