/* Synthesized fixture: two Xeon Gold 6248 (Cascade Lake, 20 cores each) with Hyper-Threading:
 * node 0 holds CPUs 0-19 and their siblings 40-59, node 1 holds 20-39 and 60-79. */
#include "fixture.h"

int main(void) {
    use_fixture("two_socket_6248_smt");
    /* Cascade Lake adds AVX512-VNNI to Skylake, not the rest of the Icelake bundle. */
    CHECK_CLASS("intel_skylake");

    uform_numa_domain_t domains[4];
    size_t count = 0;
    CHECK_OK(uform_numa_domains(domains, 4, &count));
    CHECK_EQ_INT(count, 2);
    for (int n = 0; n < 2; n++) {
        CHECK_EQ_INT(domains[n].node, n);
        CHECK_EQ_INT(domains[n].usable_cpus, 40);
        CHECK_EQ_INT(domains[n].physical_cores, 20);
    }
    CHECK_EQ_INT(domains[0].memory_bytes, 196485624ull * 1024);
    CHECK_EQ_INT(domains[1].memory_bytes, 198172752ull * 1024);

    const uform__topology_t *t = topology();
    const uform__node_t *node1 = uform__topology_node(t, 1);
    CHECK(node1 != NULL);
    /* Physical first: cores 20-39, then their siblings 60-79. */
    for (int i = 0; i < 20; i++) CHECK_EQ_INT(node1->cpus[i], 20 + i);
    for (int i = 0; i < 20; i++) CHECK_EQ_INT(node1->cpus[20 + i], 60 + i);
    CHECK(uform__topology_node(t, 2) == NULL);
    CHECK_EQ_INT(t->usable_count, 80);
    CHECK_EQ_INT(uform_default_threads(), 70); /* 80 - 80/8 */

    /* Capacity smaller than the count: only what fits is written, the total still reported. */
    uform_numa_domain_t one[1];
    CHECK_OK(uform_numa_domains(one, 1, &count));
    CHECK_EQ_INT(count, 2);
    CHECK_OK(uform_numa_domains(NULL, 0, &count));
    CHECK_STATUS(uform_numa_domains(NULL, 1, &count), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_numa_domains(one, 1, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    TEST_DONE();
}
