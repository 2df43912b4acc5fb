/* Synthesized fixture: the same Sapphire Rapids, but Linux refused the AMX permission
 * (arch_prctl ARCH_REQ_XCOMP_PERM failed): without tiles it is a Genoa-class CPU. */
#include "fixture.h"

int main(void) {
    use_fixture("sapphire_8480_amx_refused");
    CHECK_CLASS("amd_genoa");
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_SAPPHIRE, "amx-tile amx-bf16 amx-int8");
    CHECK(!strstr(uform_last_error(), "avx512fp16"));
    CHECK(!has_token(uform_capabilities_available(), "intel_sapphire"));
    TEST_DONE();
}
