/* Synthesized fixture: a Kubernetes pod on a 64-CPU EPYC 7B13 (Zen 3). The container's cgroup
 * cpuset is 8-11 and the pod's cgroup (a parent) caps cpu.max at 2.5 CPUs: the pool may run on
 * 4 CPUs but gets ceil(2.5) = 3 threads by default, never the machine's 64. */
#include "fixture.h"

int main(void) {
    use_fixture("container_epyc_cpuset_quota");
    CHECK_CLASS("intel_haswell"); /* Zen 3: AVX2, FMA, F16C, BMI2; no AVX-512, no AVX-VNNI */

    const uform__topology_t *t = topology();
    CHECK_EQ_INT(t->usable_count, 4);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(t->usable[i], 8 + i);
    CHECK(t->quota_cpus > 2.49 && t->quota_cpus < 2.51);
    CHECK_EQ_INT(t->node_count, 1);
    CHECK_EQ_INT(t->nodes[0].cpu_count, 4);
    CHECK_EQ_INT(t->default_threads, 3);
    CHECK_EQ_INT(uform_default_threads(), 3);

    size_t length = 0;
    char text[16384];
    CHECK_OK(uform_info_write(UFORM_INFO_TEXT, text, sizeof text, &length));
    CHECK(length < sizeof text);
    CHECK(strstr(text, "2.50 CPUs") != NULL);
    CHECK(strstr(text, "node 0: 4 usable CPUs (8-11)") != NULL);
    TEST_DONE();
}
