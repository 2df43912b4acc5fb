/* The per-class sum kernels agree with the serial one on every length (tails included), and
 * the dispatcher never hands a class a kernel it cannot run. */
#include <math.h>

#include "fixture.h"
#include "kernels/kernels.h"

int main(void) {
    enum { N = 100000 };
    float *values = malloc(N * sizeof *values);
    for (size_t i = 0; i < N; i++) values[i] = (float)((i * 7919u) % 1000) / 8.0f - 60.0f;

    /* Dispatch follows feature bundles, not numbers. */
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_SERIAL) == uform__sum_f32_serial);
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_AWS_G5) == uform__sum_f32_for(UFORM_CPU_CLASS_AWS_G5));
#if UFORM_KERNELS_INTEL_SKYLAKE
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_INTEL_SKYLAKE) == uform__sum_f32_intel_skylake);
#endif
#if UFORM_KERNELS_INTEL_SIERRA
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_INTEL_SIERRA) == uform__sum_f32_intel_sierra);
#endif
#if UFORM_KERNELS_INTEL_HASWELL && !UFORM_KERNELS_INTEL_SKYLAKE
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_INTEL_SKYLAKE) == uform__sum_f32_intel_haswell);
#endif
#if UFORM_KERNELS_INTEL_GRANITE
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_INTEL_DIAMOND) == uform__sum_f32_intel_granite);
#elif UFORM_KERNELS_INTEL_SAPPHIRE
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_INTEL_DIAMOND) == uform__sum_f32_intel_sapphire);
#endif
#if UFORM_ARCH_X86_64
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_AWS_G5) == uform__sum_f32_serial);
#endif
#if UFORM_KERNELS_AWS_G5
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_AWS_G5) == uform__sum_f32_aws_g5);
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_NVIDIA_VERA) == uform__sum_f32_aws_g5);
#endif
#if UFORM_KERNELS_APPLE_M4
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_APPLE_M4) == uform__sum_f32_apple_m4);
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_APPLE_M2) != uform__sum_f32_apple_m4); /* M2 has no SME */
#elif UFORM_KERNELS_APPLE_M2
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_APPLE_M4) == uform__sum_f32_apple_m2);
#endif
#if UFORM_KERNELS_ALIBABA_C930
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_ALIBABA_C930) == uform__sum_f32_alibaba_c930);
#endif
#if UFORM_KERNELS_WASM32_V128
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_WASM32_V128) == uform__sum_f32_wasm32_v128);
#else
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_WASM32_V128) == uform__sum_f32_serial);
#endif

    /* capabilities_compiled() names exactly the classes that have kernels here. */
    const char *compiled = uform_capabilities_compiled();
    for (int c = 1; c <= 18; c++) {
        const char *name = uform_cpu_class_name((uform_cpu_class_t)c);
        if (has_token(compiled, name) != (int)uform__kernels_compiled((uform_cpu_class_t)c))
            TEST_FAIL_("%s: compiled says %d, the dispatcher %d", name, has_token(compiled, name),
                       (int)uform__kernels_compiled((uform_cpu_class_t)c));
    }
    printf("compiled: %s\n", compiled);
    CHECK(uform__sum_f32_for(UFORM_CPU_CLASS_NONE) == uform__sum_f32_for(uform_cpu_class_derived()));

    /* Every compiled class this CPU runs: same sums as serial within rounding. */
    int tried = 0;
    for (int c = 1; c <= 18; c++) {
        if (!uform__kernels_compiled((uform_cpu_class_t)c) || !uform__cpu_class_runs((uform_cpu_class_t)c)) continue;
        uform__sum_f32_t sum = uform__sum_f32_for((uform_cpu_class_t)c);
        tried++;
        printf("checking %s's kernel\n", uform_cpu_class_name((uform_cpu_class_t)c));
        for (size_t n = 0; n < 130; n++) {
            double want = uform__sum_f32_serial(values + 1, n), got = sum(values + 1, n);
            if (fabs(want - got) > 1e-9 * (1 + fabs(want)))
                TEST_FAIL_("%s: n=%zu sum %.17g, serial %.17g", uform_cpu_class_name((uform_cpu_class_t)c), n, got,
                           want);
        }
        double want = uform__sum_f32_serial(values, N), got = sum(values, N);
        CHECK(fabs(want - got) <= 1e-9 * (1 + fabs(want)));
    }
    printf("checked the kernels of %d classes\n", tried);
    CHECK(tried >= 1);
    free(values);
    TEST_DONE();
}
