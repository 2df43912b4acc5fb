/* Arm64 sum kernels. NEON is the Armv8 baseline (aws_g2); apple_m2 compiles the same body for
 * Armv8.6-A (dot product, BF16, I8MM) with FP16 and FHM, so the compiler may use and schedule
 * for them; apple_m4 runs in SME's streaming SVE mode; aws_g5 is SVE code (its bundle has
 * SVE2, hence SVE). */
#include "kernels/kernels.h"

#if UFORM_ARCH_ARM64
#include <arm_neon.h>
#if UFORM_KERNELS_AWS_G5
#include <arm_sve.h>
#endif

#define SUM_F32_NEON_BODY                                                                          \
    {                                                                                              \
        float64x2_t a0 = vdupq_n_f64(0), a1 = a0, a2 = a0, a3 = a0;                                \
        size_t i = 0;                                                                              \
        for (; i + 8 <= n; i += 8) {                                                               \
            float32x4_t v0 = vld1q_f32(values + i), v1 = vld1q_f32(values + i + 4);                \
            a0 = vaddq_f64(a0, vcvt_f64_f32(vget_low_f32(v0)));                                    \
            a1 = vaddq_f64(a1, vcvt_high_f64_f32(v0));                                             \
            a2 = vaddq_f64(a2, vcvt_f64_f32(vget_low_f32(v1)));                                    \
            a3 = vaddq_f64(a3, vcvt_high_f64_f32(v1));                                             \
        }                                                                                          \
        double sum = vaddvq_f64(vaddq_f64(vaddq_f64(a0, a1), vaddq_f64(a2, a3)));                  \
        for (; i < n; i++) sum += values[i];                                                       \
        return sum;                                                                                \
    }

double uform__sum_f32_aws_g2(const float *values, size_t n) SUM_F32_NEON_BODY

#if UFORM_KERNELS_APPLE_M2
__attribute__((target("arch=armv8.6-a+fp16+fp16fml"))) double uform__sum_f32_apple_m2(const float *values,
                                                                                      size_t n) SUM_F32_NEON_BODY
#endif
#if UFORM_KERNELS_APPLE_M4
/* Streaming SVE (SME): smstart sm switches to the streaming vector length, where only the
 * streaming-legal subset runs (no NEON, no FADDA), and zeroes every Z and P register on entry
 * and exit. Hence the clobbers of v0-v31 (the callee-saved d8-d15 included: the compiler saves
 * them) and the result leaving through memory with an SVE store before smstop. Each float loads
 * into the low half of a 64-bit lane (ld1w zero-extending) and widens there, as aws_g5's does;
 * the loop is predicated end to end (whilelo), so there is no scalar tail. */
__attribute__((target("arch=armv8.6-a+fp16+fp16fml"))) double uform__sum_f32_apple_m4(const float *values,
                                                                                      size_t n) {
    double result = 0;
    __asm__ volatile(".arch_extension sme\n\t"
                     "smstart sm\n\t"
                     "ptrue p0.d\n\t"
                     "mov z0.d, #0\n\t"
                     "mov x9, #0\n\t"
                     "whilelo p1.d, x9, %[n]\n\t"
                     "b.none 2f\n"
                     "1:\n\t"
                     "ld1w {z2.d}, p1/z, [%[values], x9, lsl #2]\n\t"
                     "fcvt z2.d, p1/m, z2.s\n\t"
                     "fadd z0.d, p1/m, z0.d, z2.d\n\t"
                     "incd x9\n\t"
                     "whilelo p1.d, x9, %[n]\n\t"
                     "b.mi 1b\n" /* the first lane is active: more to do */
                     "2:\n\t"
                     "faddv d3, p0, z0.d\n\t"
                     "ptrue p2.d, vl1\n\t"
                     "st1d {z3.d}, p2, [%[result]]\n\t"
                     "smstop sm\n\t"
                     :
                     : [values] "r"(values), [n] "r"(n), [result] "r"(&result)
                     : "x9", "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",
                       "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",
                       "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "p0", "p1", "p2");
    return result;
}
#endif
#if UFORM_KERNELS_AWS_G5
/* SVE at whatever vector length the CPU has: each 32-bit float loads into the low half of a
 * 64-bit lane (ld1w zero-extending), widens in place (fcvt .s to .d reads the low half), and
 * the last strip is predicated instead of a scalar tail. */
__attribute__((target("arch=armv8.6-a+fp16+fp16fml+sve2"))) double uform__sum_f32_aws_g5(const float *values,
                                                                                         size_t n) {
    svfloat64_t a0 = svdup_f64(0), a1 = a0;
    size_t lanes = svcntd(), i = 0;
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
        svbool_t all = svptrue_b64();
        svfloat32_t v0 = svreinterpret_f32_u64(svld1uw_u64(all, (const uint32_t *)(values + i)));
        svfloat32_t v1 = svreinterpret_f32_u64(svld1uw_u64(all, (const uint32_t *)(values + i + lanes)));
        a0 = svadd_f64_x(all, a0, svcvt_f64_f32_x(all, v0));
        a1 = svadd_f64_x(all, a1, svcvt_f64_f32_x(all, v1));
    }
    for (; i < n; i += lanes) {
        svbool_t active = svwhilelt_b64_u64(i, n);
        svfloat32_t v = svreinterpret_f32_u64(svld1uw_u64(active, (const uint32_t *)(values + i)));
        a0 = svadd_f64_m(active, a0, svcvt_f64_f32_x(active, v));
    }
    return svaddv_f64(svptrue_b64(), svadd_f64_x(svptrue_b64(), a0, a1));
}
#endif

#else
typedef int uform__sum_f32_arm_empty_;
#endif
