/* Arm64 sum kernels. NEON is the Armv8 baseline (aws_g2); apple_m2 compiles the same body for
 * Armv8.6-A (dot product, BF16, I8MM) with FP16 and FHM, so the compiler may use and schedule
 * for them; aws_g5 is SVE code (its bundle has SVE2, hence SVE). */
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
