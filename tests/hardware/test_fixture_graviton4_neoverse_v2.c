/* Synthesized fixture: AWS Graviton4 (Neoverse V2): SVE2 on top of the M2 bundle, no FP8. */
#include "fixture.h"

int main(void) {
    use_fixture("graviton4_neoverse_v2");
    CHECK_CLASS("aws_g5");
    CHECK_MISSING(UFORM_CPU_CLASS_NVIDIA_VERA, "f8dp4");
    CHECK_MISSING(UFORM_CPU_CLASS_APPLE_M4, "sme");
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_APPLE_M2));
    TEST_DONE();
}
