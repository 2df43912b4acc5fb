/* Recorded fixture: the 2-vCPU CI VM (Emerald Rapids family). The CPU has AVX512-FP16 but the
 * hypervisor hides AMX, so it is a Genoa-class machine, not a Sapphire one. */
#include "fixture.h"
#include "kernels/kernels.h"

int main(void) {
    use_fixture("emerald_vm_2cpu");
    CHECK_CLASS("amd_genoa");
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_INTEL_SIERRA)); /* it has AVX-VNNI */
    CHECK_MISSING(UFORM_CPU_CLASS_INTEL_SAPPHIRE, "amx-tile amx-bf16 amx-int8");
    CHECK(!strstr(uform_last_error(), "avx512fp16"));
    CHECK_MISSING(UFORM_CPU_CLASS_AWS_G2, "arm64");

    const uform__topology_t *t = topology();
    CHECK(t->has_numa);
    CHECK_EQ_INT(t->node_count, 1);
    CHECK_EQ_INT(t->usable_count, 2);
    CHECK_EQ_INT(t->nodes[0].cpu_count, 2);
    CHECK_EQ_INT(t->nodes[0].physical_cores, 2);
    CHECK(t->nodes[0].memory_bytes > ((uint64_t)1 << 30));
    CHECK(t->quota_cpus == 0);
    CHECK_EQ_INT(uform_default_threads(), 2);

    /* Available is what this build carries and the fixture's CPU runs: on an x86-64 build the
     * fixture's classes; on an Arm or RISC-V build (which carries no x86 kernels) none of them,
     * the fixture's CPUID leaves being data all the same. */
    const char *available = uform_capabilities_available(), *compiled = uform_capabilities_compiled();
    CHECK_EQ_INT(has_token(available, "amd_genoa"), has_token(compiled, "amd_genoa"));
    CHECK_EQ_INT(has_token(available, "intel_sierra"), has_token(compiled, "intel_sierra"));
    CHECK_EQ_INT(has_token(compiled, "amd_genoa"), UFORM_ARCH_X86_64 && UFORM_KERNELS_AMD_GENOA);
    CHECK(!has_token(available, "aws_g2") && !has_token(available, "alibaba_c930"));
    CHECK(!has_token(available, "intel_sapphire"));
#if defined(__linux__)
    CHECK(has_token(available, "numa")); /* a WebAssembly build has no NUMA */
#endif
    TEST_DONE();
}
