/* Arm64 sum kernels. NEON is the Armv8 baseline (aws_g2); the higher classes compile the same
 * body for their architecture level so the compiler may schedule for it. */
#include "kernels/kernels.h"

#if UFORM_ARCH_ARM64
#include <arm_neon.h>

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
__attribute__((target("arch=armv8.6-a+fp16+fp16fml+sve2"))) double uform__sum_f32_aws_g5(const float *values,
                                                                                         size_t n) SUM_F32_NEON_BODY
#endif

#else
typedef int uform__sum_f32_arm_empty_;
#endif
