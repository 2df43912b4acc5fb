/* Synthesized fixture: NVIDIA GH200. Node 0: 72 Neoverse V2 cores and LPDDR5X. Node 1: the
 * Hopper's HBM3, memory without CPUs. Nodes 2-9 are online but empty (reserved for MIG), so
 * they are no domain: neither CPUs nor memory to place anything on. */
#include "fixture.h"

int main(void) {
    use_fixture("grace_hopper_gh200");
    CHECK_CLASS("aws_g5");

    uform_numa_domain_t domains[10];
    size_t count = 0;
    CHECK_OK(uform_numa_domains(domains, 10, &count));
    CHECK_EQ_INT(count, 2);
    CHECK_EQ_INT(domains[0].node, 0);
    CHECK_EQ_INT(domains[0].usable_cpus, 72);
    CHECK_EQ_INT(domains[0].physical_cores, 72);
    CHECK_EQ_INT(domains[1].node, 1);
    CHECK_EQ_INT(domains[1].usable_cpus, 0);
    CHECK_EQ_INT(domains[1].physical_cores, 0);
    CHECK_EQ_INT(domains[1].memory_bytes, 99000000ull * 1024);
    CHECK(uform__topology_node(topology(), 5) == NULL);
    CHECK_EQ_INT(uform_default_threads(), 63); /* 72 - 9 */

    char json[8192];
    size_t length = 0;
    CHECK_OK(uform_info_write(UFORM_INFO_JSON, json, sizeof json, &length));
    CHECK(strstr(json, "\"node\":1,\"usable_cpus\":0") != NULL);
    TEST_DONE();
}
