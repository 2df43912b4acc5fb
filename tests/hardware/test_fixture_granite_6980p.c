/* Synthesized fixture: Xeon 6980P (Granite Rapids): AMX-FP16 and AVX10.1, but not AVX10.2. */
#include "fixture.h"

int main(void) {
    use_fixture("granite_6980p");
    CHECK_CLASS("intel_granite");
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_DIAMOND, "avx10.2");
    const uform__topology_t *t = topology();
    CHECK_EQ_INT(t->nodes[0].cpu_count, 256);
    CHECK_EQ_INT(t->nodes[0].physical_cores, 128);
    CHECK_EQ_INT(uform_default_threads(), 224);
    TEST_DONE();
}
