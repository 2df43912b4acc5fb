/* Synthesized fixture: Xeon E5-2680 v3 (Haswell-EP), 12 cores with Hyper-Threading. */
#include "fixture.h"

int main(void) {
    use_fixture("haswell_e5_2680v3");
    CHECK_CLASS("intel_haswell");
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_SIERRA, "avxvnni");
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_SKYLAKE, "avx512f avx512cd avx512bw avx512dq avx512vl");
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_SERIAL));

    const uform__topology_t *t = topology();
    CHECK_EQ_INT(t->node_count, 1);
    CHECK_EQ_INT(t->nodes[0].cpu_count, 24);
    CHECK_EQ_INT(t->nodes[0].physical_cores, 12);
    /* Physical first: one CPU per core (0-11), then the siblings (12-23). */
    for (int i = 0; i < 24; i++) CHECK_EQ_INT(t->nodes[0].cpus[i], i);
    CHECK_EQ_INT(uform_default_threads(), 21); /* 24 - 24/8 */
    TEST_DONE();
}
