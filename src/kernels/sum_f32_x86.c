/* x86-64 sum kernels, one per class, each compiled for its class alone through a function
 * target attribute. The bodies are shared (a reduction is bandwidth-bound; the class decides
 * the register width and lets the compiler schedule for it). Floats widen to double before
 * adding so long sums keep their precision. */
#include "kernels/kernels.h"

#if UFORM_ARCH_X86_64
#include <immintrin.h>

#define HASWELL_TARGET "avx2,fma,f16c,bmi2"
#define SKYLAKE_TARGET HASWELL_TARGET ",avx512f,avx512cd,avx512bw,avx512dq,avx512vl"
#define ICELAKE_TARGET                                                                             \
    SKYLAKE_TARGET ",avx512vnni,avx512vpopcntdq,avx512ifma,avx512vbmi,avx512vbmi2,avx512bitalg"
#define GENOA_TARGET ICELAKE_TARGET ",avx512bf16"
#define SAPPHIRE_TARGET GENOA_TARGET ",avx512fp16,amx-tile,amx-bf16,amx-int8"
#define GRANITE_TARGET SAPPHIRE_TARGET ",amx-fp16"

#define SUM_F32_AVX2(name, features)                                                                 \
    __attribute__((target(features))) double name(const float *values, size_t n) {                   \
        __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;                               \
        size_t i = 0;                                                                              \
        for (; i + 16 <= n; i += 16) {                                                             \
            __m256 v0 = _mm256_loadu_ps(values + i), v1 = _mm256_loadu_ps(values + i + 8);          \
            a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v0)));                   \
            a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v0, 1)));                 \
            a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm256_castps256_ps128(v1)));                   \
            a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm256_extractf128_ps(v1, 1)));                 \
        }                                                                                          \
        double lanes[4];                                                                           \
        _mm256_storeu_pd(lanes, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));      \
        double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);                                \
        for (; i < n; i++) sum += values[i];                                                       \
        return sum;                                                                                \
    }

#define SUM_F32_AVX512(name, features)                                                               \
    __attribute__((target(features))) double name(const float *values, size_t n) {                   \
        __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;                               \
        size_t i = 0;                                                                              \
        for (; i + 32 <= n; i += 32) {                                                             \
            __m512 v0 = _mm512_loadu_ps(values + i), v1 = _mm512_loadu_ps(values + i + 16);        \
            a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm512_castps512_ps256(v0)));                   \
            a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v0, 1)));                \
            a2 = _mm512_add_pd(a2, _mm512_cvtps_pd(_mm512_castps512_ps256(v1)));                   \
            a3 = _mm512_add_pd(a3, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v1, 1)));                \
        }                                                                                          \
        /* The tail in one masked step: lanes past the end load as zero. */                       \
        for (; i < n; i += 8) {                                                                    \
            size_t left = n - i < 8 ? n - i : 8;                                                   \
            __mmask8 mask = (__mmask8)((1u << left) - 1u);                                         \
            a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, values + i)));      \
        }                                                                                          \
        return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3))); \
    }

#if UFORM_KERNELS_INTEL_HASWELL
SUM_F32_AVX2(uform__sum_f32_intel_haswell, HASWELL_TARGET)
#endif
#if UFORM_KERNELS_INTEL_SIERRA
SUM_F32_AVX2(uform__sum_f32_intel_sierra, HASWELL_TARGET ",avxvnni")
#endif
#if UFORM_KERNELS_INTEL_SKYLAKE
SUM_F32_AVX512(uform__sum_f32_intel_skylake, SKYLAKE_TARGET)
#endif
#if UFORM_KERNELS_INTEL_ICELAKE
SUM_F32_AVX512(uform__sum_f32_intel_icelake, ICELAKE_TARGET)
#endif
#if UFORM_KERNELS_AMD_GENOA
SUM_F32_AVX512(uform__sum_f32_amd_genoa, GENOA_TARGET)
#endif
#if UFORM_KERNELS_INTEL_SAPPHIRE
SUM_F32_AVX512(uform__sum_f32_intel_sapphire, SAPPHIRE_TARGET)
#endif
#if UFORM_KERNELS_INTEL_GRANITE
SUM_F32_AVX512(uform__sum_f32_intel_granite, GRANITE_TARGET)
#endif

#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int uform__sum_f32_x86_empty_;
#endif
