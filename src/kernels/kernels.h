/* Internal: per-class kernels and the dispatcher that picks one for a CPU class. Each kernel
 * is compiled for its class with a per-function target attribute, so one binary carries them
 * all and runs on any CPU of its ISA; which ones exist depends on what the compiler can
 * target, recorded here as UFORM_KERNELS_<CLASS> (always defined, 0 or 1). */
#ifndef UFORM_KERNELS_H
#define UFORM_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "platform/platform.h"
#include "uform/hardware.h"

#if defined(__clang__)
#define UFORM_KERNELS_CC_(gcc, clang) (__clang_major__ >= (clang))
#elif defined(__GNUC__)
#define UFORM_KERNELS_CC_(gcc, clang) (__GNUC__ >= (gcc))
#else
#define UFORM_KERNELS_CC_(gcc, clang) 0
#endif

#define UFORM_KERNELS_SERIAL 1
#define UFORM_KERNELS_X86_(gcc, clang) (UFORM_ARCH_X86_64 && UFORM_KERNELS_CC_(gcc, clang))
/* First compiler versions that know each class's target features (and their intrinsics). */
#define UFORM_KERNELS_INTEL_HASWELL UFORM_KERNELS_X86_(5, 4)
#define UFORM_KERNELS_INTEL_SIERRA UFORM_KERNELS_X86_(11, 12)   /* avxvnni */
#define UFORM_KERNELS_INTEL_SKYLAKE UFORM_KERNELS_X86_(8, 7)
#define UFORM_KERNELS_INTEL_ICELAKE UFORM_KERNELS_X86_(8, 7)
#define UFORM_KERNELS_AMD_GENOA UFORM_KERNELS_X86_(10, 9)       /* avx512bf16 */
#define UFORM_KERNELS_INTEL_SAPPHIRE UFORM_KERNELS_X86_(12, 14) /* avx512fp16, amx-* */
#define UFORM_KERNELS_INTEL_GRANITE UFORM_KERNELS_X86_(13, 16)  /* amx-fp16 */
#define UFORM_KERNELS_INTEL_DIAMOND 0                           /* avx10.2: not yet */
#define UFORM_KERNELS_AWS_G2 UFORM_ARCH_ARM64                   /* NEON is the Armv8 baseline */
#define UFORM_KERNELS_APPLE_M2 (UFORM_ARCH_ARM64 && UFORM_KERNELS_CC_(10, 16)) /* "arch=armv8.6-a+ext" strings */
#define UFORM_KERNELS_AWS_G5 (UFORM_ARCH_ARM64 && UFORM_KERNELS_CC_(10, 16))   /* +sve2, arm_sve.h */
/* SME: the ACLE (arm_sme.h, __arm_streaming) needs GCC 14 or clang 18, which Debian 12 lacks, so
 * apple_m4's kernel is inline assembly in streaming SVE mode under ".arch_extension sme"
 * (binutils 2.38+), which GCC passes through; clang's integrated assembler is left out, as for
 * RVV. Apple's M4 has SME with streaming SVE but no SVE2 outside it: the kernel uses only
 * instructions that are legal in streaming mode. */
#define UFORM_KERNELS_APPLE_M4 (UFORM_ARCH_ARM64 && UFORM_KERNELS_CC_(10, 9999))
#define UFORM_KERNELS_NVIDIA_VERA 0 /* FP8 dot products: no compiler here targets them */
/* RVV 1.0: GCC 12 has no RVV intrinsics (GCC 13 does), so the kernel is inline assembly under
 * ".option arch, +v" (binutils 2.38+), which GCC passes through; clang's assembler reads that
 * directive only from LLVM 17, so clang builds go without. */
#define UFORM_KERNELS_ALIBABA_C930 (UFORM_ARCH_RISCV64 && UFORM_KERNELS_CC_(12, 9999))
/* WebAssembly SIMD128 (wasm_simd128.h): a wasm32 build compiled with -msimd128. A WebAssembly
 * module is validated whole, so the class is the build's, not a per-function target. */
#if UFORM_ARCH_WASM32 && defined(__wasm_simd128__)
#define UFORM_KERNELS_WASM32_V128 1
#else
#define UFORM_KERNELS_WASM32_V128 0
#endif
/* memory64 + relaxed SIMD: Debian's Emscripten 3.1.6 runs clang 14, whose wasm64 backend cannot
 * select SIMD lane accesses (an i64 lane index): wasm64 SIMD code does not compile there. */
#define UFORM_KERNELS_WASM64_EXTENDED 0
/* A monoversioned build has one class and no dispatch, so a multiversioned one carries none. */
#define UFORM_KERNELS_MONOVERSIONED 0

/** Sums `n` floats, accumulating in double. */
typedef double (*uform__sum_f32_t)(const float *values, size_t n);

double uform__sum_f32_serial(const float *values, size_t n);
#if UFORM_KERNELS_INTEL_HASWELL
double uform__sum_f32_intel_haswell(const float *values, size_t n);
#endif
#if UFORM_KERNELS_INTEL_SIERRA
double uform__sum_f32_intel_sierra(const float *values, size_t n);
#endif
#if UFORM_KERNELS_INTEL_SKYLAKE
double uform__sum_f32_intel_skylake(const float *values, size_t n);
#endif
#if UFORM_KERNELS_INTEL_ICELAKE
double uform__sum_f32_intel_icelake(const float *values, size_t n);
#endif
#if UFORM_KERNELS_AMD_GENOA
double uform__sum_f32_amd_genoa(const float *values, size_t n);
#endif
#if UFORM_KERNELS_INTEL_SAPPHIRE
double uform__sum_f32_intel_sapphire(const float *values, size_t n);
#endif
#if UFORM_KERNELS_INTEL_GRANITE
double uform__sum_f32_intel_granite(const float *values, size_t n);
#endif
#if UFORM_KERNELS_AWS_G2
double uform__sum_f32_aws_g2(const float *values, size_t n);
#endif
#if UFORM_KERNELS_APPLE_M2
double uform__sum_f32_apple_m2(const float *values, size_t n);
#endif
#if UFORM_KERNELS_APPLE_M4
double uform__sum_f32_apple_m4(const float *values, size_t n);
#endif
#if UFORM_KERNELS_AWS_G5
double uform__sum_f32_aws_g5(const float *values, size_t n);
#endif
#if UFORM_KERNELS_ALIBABA_C930
double uform__sum_f32_alibaba_c930(const float *values, size_t n);
#endif
#if UFORM_KERNELS_WASM32_V128
double uform__sum_f32_wasm32_v128(const float *values, size_t n);
#endif

/** Whether this build has kernels for `cpu_class` (SERIAL always). */
bool uform__kernels_compiled(uform_cpu_class_t cpu_class);

/**
 * The best compiled sum kernel whose class `cpu_class` includes (NONE: the derived class).
 * Never NULL: the serial kernel is the floor. The caller checks the CPU can run `cpu_class`.
 */
uform__sum_f32_t uform__sum_f32_for(uform_cpu_class_t cpu_class);

#endif
