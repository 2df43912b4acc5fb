/* Synthesized fixture: Xeon Platinum 8380 (Ice Lake-SP): the Icelake bundle, no AVX512-BF16. */
#include "fixture.h"

int main(void) {
    use_fixture("icelake_sp_8380");
    CHECK_CLASS("intel_icelake");
    CHECK_MISSING(UFORM_CPU_CLASS_AMD_GENOA, "avx512bf16");
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_INTEL_SKYLAKE));
    const uform__topology_t *t = topology();
    CHECK_EQ_INT(t->nodes[0].physical_cores, 40);
    CHECK_EQ_INT(uform_default_threads(), 70);
    TEST_DONE();
}
