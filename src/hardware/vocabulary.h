/* Internal: the class and vendor vocabularies, each written once as an X-macro list that
 * feeds the names tables (cpu_class.c), the capability tokens (report/capabilities.c), the
 * static checks against the public enums and the check of the Python and Rust faces
 * (tests/tools/print_vocabulary.c). The public headers spell the enums out for their readers;
 * cpu_class.c asserts, member by member, that they equal these lists. Numbers are the public
 * ones, pinned: a list adds at its end. */
#ifndef UFORM_HARDWARE_VOCABULARY_H
#define UFORM_HARDWARE_VOCABULARY_H

/* X(MEMBER, number, snake_name, isa, required features). The last two columns are read only
 * by cpu_class.c, where the feature bundles (HASWELL, BIT(...)) are defined: the ISA a class
 * runs on (UFORM_ISA_OTHER: any ISA for serial, none for the WASM and monoversioned classes,
 * which no CPU feature test derives) and the features its kernels need, cumulative along
 * each family. intel_sierra's "without AVX-512" describes the chips, not its kernels: an
 * AVX-512 CPU with AVX-VNNI runs them too, and derivation prefers the higher classes. */
#define UFORM__CPU_CLASSES(X)                                                                      \
    X(SERIAL, 1, serial, UFORM_ISA_OTHER, 0)                                                       \
    X(INTEL_HASWELL, 2, intel_haswell, UFORM_ISA_X86_64, HASWELL)                                  \
    X(INTEL_SIERRA, 3, intel_sierra, UFORM_ISA_X86_64, HASWELL | BIT(AVX_VNNI))                    \
    X(INTEL_SKYLAKE, 4, intel_skylake, UFORM_ISA_X86_64, SKYLAKE)                                  \
    X(INTEL_ICELAKE, 5, intel_icelake, UFORM_ISA_X86_64, ICELAKE)                                  \
    X(AMD_GENOA, 6, amd_genoa, UFORM_ISA_X86_64, GENOA)                                            \
    X(INTEL_SAPPHIRE, 7, intel_sapphire, UFORM_ISA_X86_64, SAPPHIRE)                               \
    X(INTEL_GRANITE, 8, intel_granite, UFORM_ISA_X86_64, GRANITE)                                  \
    X(INTEL_DIAMOND, 9, intel_diamond, UFORM_ISA_X86_64, GRANITE | BIT(AVX10_2))                   \
    X(AWS_G2, 10, aws_g2, UFORM_ISA_ARM64, BIT(NEON))                                              \
    X(APPLE_M2, 11, apple_m2, UFORM_ISA_ARM64, M2)                                                 \
    X(APPLE_M4, 12, apple_m4, UFORM_ISA_ARM64, M2 | BIT(SME))                                      \
    X(AWS_G5, 13, aws_g5, UFORM_ISA_ARM64, G5)                                                     \
    X(NVIDIA_VERA, 14, nvidia_vera, UFORM_ISA_ARM64, G5 | BIT(FP8DOT))                             \
    X(ALIBABA_C930, 15, alibaba_c930, UFORM_ISA_RISCV64, BIT(RVV))                                 \
    X(WASM32_V128, 16, wasm32_v128, UFORM_ISA_OTHER, 0)                                            \
    X(WASM64_EXTENDED, 17, wasm64_extended, UFORM_ISA_OTHER, 0)                                    \
    X(MONOVERSIONED, 18, monoversioned, UFORM_ISA_OTHER, 0)

/* X(MEMBER, number, snake_name) */
#define UFORM__GPU_CLASSES(X)                                                                      \
    X(NVIDIA_AMPERE, 1, nvidia_ampere)                                                             \
    X(NVIDIA_ADA, 2, nvidia_ada)                                                                   \
    X(NVIDIA_HOPPER, 3, nvidia_hopper)                                                             \
    X(NVIDIA_BLACKWELL, 4, nvidia_blackwell)                                                       \
    X(NVIDIA_BLACKWELLRTX, 5, nvidia_blackwellrtx)                                                 \
    X(NVIDIA_RUBIN, 6, nvidia_rubin)                                                               \
    X(AMD_CDNA3, 7, amd_cdna3)                                                                     \
    X(AMD_CDNA4, 8, amd_cdna4)                                                                     \
    X(AMD_CDNA5, 9, amd_cdna5)                                                                     \
    X(APPLE_METAL7, 10, apple_metal7)                                                              \
    X(APPLE_METAL9, 11, apple_metal9)                                                              \
    X(APPLE_METAL10, 12, apple_metal10)

/* X(MEMBER, number, snake_name) */
#define UFORM__GPU_VENDORS(X)                                                                      \
    X(NVIDIA, 1, nvidia)                                                                           \
    X(AMD, 2, amd)                                                                                 \
    X(APPLE, 3, apple)

/* Counts of each list: one past the highest number, as the numbers run 1, 2, ... */
#define UFORM__VOCABULARY_ONE_(...) +1
enum {
    UFORM__CPU_CLASS_COUNT = 1 UFORM__CPU_CLASSES(UFORM__VOCABULARY_ONE_),
    UFORM__GPU_CLASS_COUNT = 1 UFORM__GPU_CLASSES(UFORM__VOCABULARY_ONE_),
    UFORM__GPU_VENDOR_COUNT = 1 UFORM__GPU_VENDORS(UFORM__VOCABULARY_ONE_),
};

/** "nvidia", "amd", "apple"; NULL for NONE or a number that is no vendor. */
const char *uform__gpu_vendor_name(int vendor);

#endif
