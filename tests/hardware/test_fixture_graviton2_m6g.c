/* Synthesized fixture: AWS Graviton2 (Neoverse N1): NEON and dot product, but no BF16, FHM or
 * I8MM, so the Armv8.0 floor class. */
#include "fixture.h"

int main(void) {
    use_fixture("graviton2_m6g");
    CHECK_CLASS("aws_g2");
    CHECK_MISSING(UFORM_CPU_CLASS_APPLE_M2, "bf16 asimdfhm i8mm");
    CHECK(!strstr(uform_last_error(), "asimddp"));
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_HASWELL, "x86-64");
    CHECK_EQ_INT(uform_default_threads(), 56);
    TEST_DONE();
}
