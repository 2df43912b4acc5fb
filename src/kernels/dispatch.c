/* Picks a kernel for a class. A kernel fits a class when its class's feature bundle is inside
 * that class's bundle: numbering is not enough (intel_sierra, 3, needs AVX-VNNI, which an
 * intel_skylake, 4, lacks). */
#include "kernels/kernels.h"

#include "hardware/cpu_class.h"

typedef struct entry_t {
    uform_cpu_class_t cpu_class;
    uform__sum_f32_t sum_f32;
} entry_t;

/* Ascending class order; the search runs from the top. */
static const entry_t kernels[] = {
    {UFORM_CPU_CLASS_SERIAL, uform__sum_f32_serial},
#if UFORM_KERNELS_INTEL_HASWELL
    {UFORM_CPU_CLASS_INTEL_HASWELL, uform__sum_f32_intel_haswell},
#endif
#if UFORM_KERNELS_INTEL_SIERRA
    {UFORM_CPU_CLASS_INTEL_SIERRA, uform__sum_f32_intel_sierra},
#endif
#if UFORM_KERNELS_INTEL_SKYLAKE
    {UFORM_CPU_CLASS_INTEL_SKYLAKE, uform__sum_f32_intel_skylake},
#endif
#if UFORM_KERNELS_INTEL_ICELAKE
    {UFORM_CPU_CLASS_INTEL_ICELAKE, uform__sum_f32_intel_icelake},
#endif
#if UFORM_KERNELS_AMD_GENOA
    {UFORM_CPU_CLASS_AMD_GENOA, uform__sum_f32_amd_genoa},
#endif
#if UFORM_KERNELS_INTEL_SAPPHIRE
    {UFORM_CPU_CLASS_INTEL_SAPPHIRE, uform__sum_f32_intel_sapphire},
#endif
#if UFORM_KERNELS_INTEL_GRANITE
    {UFORM_CPU_CLASS_INTEL_GRANITE, uform__sum_f32_intel_granite},
#endif
#if UFORM_KERNELS_AWS_G2
    {UFORM_CPU_CLASS_AWS_G2, uform__sum_f32_aws_g2},
#endif
#if UFORM_KERNELS_APPLE_M2
    {UFORM_CPU_CLASS_APPLE_M2, uform__sum_f32_apple_m2},
#endif
#if UFORM_KERNELS_APPLE_M4
    {UFORM_CPU_CLASS_APPLE_M4, uform__sum_f32_apple_m4},
#endif
#if UFORM_KERNELS_AWS_G5
    {UFORM_CPU_CLASS_AWS_G5, uform__sum_f32_aws_g5},
#endif
#if UFORM_KERNELS_ALIBABA_C930
    {UFORM_CPU_CLASS_ALIBABA_C930, uform__sum_f32_alibaba_c930},
#endif
#if UFORM_KERNELS_WASM32_V128
    {UFORM_CPU_CLASS_WASM32_V128, uform__sum_f32_wasm32_v128},
#endif
};

#define KERNEL_COUNT (sizeof kernels / sizeof kernels[0])

bool uform__kernels_compiled(uform_cpu_class_t cpu_class) {
    for (size_t i = 0; i < KERNEL_COUNT; i++)
        if (kernels[i].cpu_class == cpu_class) return true;
    return false;
}

uform__sum_f32_t uform__sum_f32_for(uform_cpu_class_t cpu_class) {
    if (cpu_class == UFORM_CPU_CLASS_NONE) cpu_class = uform_cpu_class_derived();
    for (size_t i = KERNEL_COUNT; i-- > 0;)
        if (uform__cpu_class_within(kernels[i].cpu_class, cpu_class)) return kernels[i].sum_f32;
    return uform__sum_f32_serial;
}
