/* Synthesized fixture: Xeon W-2195 (Skylake-X), AVX-512 F/CD/BW/DQ/VL and nothing newer. */
#include "fixture.h"

int main(void) {
    use_fixture("skylake_x_w2195");
    CHECK_CLASS("intel_skylake");
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_INTEL_HASWELL));
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_SIERRA, "avxvnni");
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_ICELAKE,
                  "avx512vnni avx512vpopcntdq avx512ifma avx512vbmi avx512vbmi2 avx512bitalg");
    const uform__topology_t *t = topology();
    CHECK_EQ_INT(t->nodes[0].cpu_count, 36);
    CHECK_EQ_INT(t->nodes[0].physical_cores, 18);
    CHECK_EQ_INT(uform_default_threads(), 32);
    TEST_DONE();
}
