/* Synthesized fixture: Xeon Platinum 8480+ on Linux that grants the AMX tile permission. */
#include "fixture.h"

int main(void) {
    use_fixture("sapphire_8480_amx_granted");
    CHECK_CLASS("intel_sapphire");
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_GRANITE, "amx-fp16");
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_AMD_GENOA));
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_INTEL_SIERRA));
    CHECK_EQ_INT(uform_default_threads(), 98); /* 112 - 14 */
    TEST_DONE();
}
