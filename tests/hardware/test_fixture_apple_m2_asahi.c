/* Synthesized fixture: Apple M2 under Asahi Linux: Armv8.6 with I8MM and BF16, no SVE, no SME. */
#include "fixture.h"

int main(void) {
    use_fixture("apple_m2_asahi");
    CHECK_CLASS("apple_m2");
    CHECK_MISSING(UFORM_CPU_CLASS_APPLE_M4, "sme");
    CHECK_MISSING(UFORM_CPU_CLASS_AWS_G5, "sve2");
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_AWS_G2));
    CHECK_EQ_INT(uform_default_threads(), 7);
    TEST_DONE();
}
