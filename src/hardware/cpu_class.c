/* CPU class derivation: which feature bundles this CPU and its OS offer. The CPU is
 * read once through the seam into a feature set; each class is a set of required features,
 * cumulative along its family, so "can run" is a subset test and the missing features fall
 * out as the set difference. This file is compiled without any ISA target: it must run on
 * every CPU, including the ones it rejects. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "hardware/cpu_class.h"
#include "hardware/seam.h"
#include "hardware/topology.h"
#include "hardware/vocabulary.h"
#include "platform/platform.h"

/* One bit per feature; names are the ones Linux's /proc/cpuinfo and compilers use. */
#define FEATURES(X)                                                                                \
    X(AVX2, "avx2") X(FMA, "fma") X(F16C, "f16c") X(BMI2, "bmi2") X(AVX_VNNI, "avxvnni")         \
    X(AVX512F, "avx512f") X(AVX512CD, "avx512cd") X(AVX512BW, "avx512bw") X(AVX512DQ, "avx512dq") \
    X(AVX512VL, "avx512vl") X(AVX512VNNI, "avx512vnni") X(AVX512VPOPCNTDQ, "avx512vpopcntdq")     \
    X(AVX512IFMA, "avx512ifma") X(AVX512VBMI, "avx512vbmi") X(AVX512VBMI2, "avx512vbmi2")         \
    X(AVX512BITALG, "avx512bitalg") X(AVX512BF16, "avx512bf16") X(AVX512FP16, "avx512fp16")       \
    X(AMX_TILE, "amx-tile") X(AMX_BF16, "amx-bf16") X(AMX_INT8, "amx-int8") X(AMX_FP16, "amx-fp16") \
    X(AVX10_2, "avx10.2") X(NEON, "asimd") X(DOTPROD, "asimddp") X(BF16, "bf16")                 \
    X(FP16, "fphp+asimdhp") X(FHM, "asimdfhm") X(I8MM, "i8mm") X(SME, "sme") X(SVE2, "sve2")       \
    X(FP8DOT, "f8dp4") X(RVV, "rvv1.0")

enum {
#define FEATURE_ENUM_(name, text) F_##name,
    FEATURES(FEATURE_ENUM_)
#undef FEATURE_ENUM_
    F_COUNT_
};
_Static_assert(F_COUNT_ <= 64, "features fit one 64-bit set");

static const char *const feature_names[] = {
#define FEATURE_NAME_(name, text) text,
    FEATURES(FEATURE_NAME_)
#undef FEATURE_NAME_
};

#define BIT(f) ((uint64_t)1 << F_##f)

#define HASWELL (BIT(AVX2) | BIT(FMA) | BIT(F16C) | BIT(BMI2))
#define SKYLAKE (HASWELL | BIT(AVX512F) | BIT(AVX512CD) | BIT(AVX512BW) | BIT(AVX512DQ) | BIT(AVX512VL))
#define ICELAKE                                                                                    \
    (SKYLAKE | BIT(AVX512VNNI) | BIT(AVX512VPOPCNTDQ) | BIT(AVX512IFMA) | BIT(AVX512VBMI) | BIT(AVX512VBMI2) | \
     BIT(AVX512BITALG))
#define GENOA (ICELAKE | BIT(AVX512BF16))
#define SAPPHIRE (GENOA | BIT(AVX512FP16) | BIT(AMX_TILE) | BIT(AMX_BF16) | BIT(AMX_INT8))
#define GRANITE (SAPPHIRE | BIT(AMX_FP16))
#define M2 (BIT(NEON) | BIT(DOTPROD) | BIT(BF16) | BIT(FP16) | BIT(FHM) | BIT(I8MM))
#define G5 (M2 | BIT(SVE2))

typedef struct class_info_t {
    const char *name;       /* snake-case; parsing also takes the UPPER member name, same letters */
    uform__isa_t isa;
    uint64_t requires;
} class_info_t;

static const class_info_t classes[UFORM__CPU_CLASS_COUNT] = {
#define CLASS_INFO_(member, number, name, isa, requires) [number] = {#name, isa, requires},
    UFORM__CPU_CLASSES(CLASS_INFO_)
#undef CLASS_INFO_
};

/* The public enum spells the classes out for its readers; it must equal the list. */
#define CLASS_MATCHES_(member, number, name, isa, requires)                                        \
    _Static_assert(UFORM_CPU_CLASS_##member == number, "uform_cpu_class_t and UFORM__CPU_CLASSES differ at " #member);
UFORM__CPU_CLASSES(CLASS_MATCHES_)
#undef CLASS_MATCHES_
_Static_assert(UFORM_CPU_CLASS_MONOVERSIONED + 1 == UFORM__CPU_CLASS_COUNT, "the CPU class list ends at monoversioned");

static bool is_wasm_or_mono(uform_cpu_class_t c) {
    return c == UFORM_CPU_CLASS_WASM32_V128 || c == UFORM_CPU_CLASS_WASM64_EXTENDED ||
           c == UFORM_CPU_CLASS_MONOVERSIONED;
}

static bool is_class(int c) { return c > 0 && c < UFORM__CPU_CLASS_COUNT; }

bool uform__cpu_class_within(uform_cpu_class_t inner, uform_cpu_class_t outer) {
    if (inner == UFORM_CPU_CLASS_SERIAL) return is_class((int)outer);
    if (!is_class((int)inner) || !is_class((int)outer) || is_wasm_or_mono(inner) || is_wasm_or_mono(outer))
        return inner == outer && is_class((int)inner);
    const class_info_t *a = &classes[inner], *b = &classes[outer];
    return a->isa == b->isa && (a->requires & b->requires) == a->requires;
}

/* ---- reading the CPU ---- */

static bool has(uint32_t word, int bit) { return (word >> bit) & 1u; }

static uint64_t x86_features(void) {
    uform__cpuid_t l0, l1, l7, l71, l24;
    uform__seam_cpuid(0, 0, &l0);
    uint32_t max_leaf = l0.eax; /* the highest basic leaf */
    if (max_leaf < 1 || !uform__seam_cpuid(1, 0, &l1)) return 0;
    if (max_leaf < 7 || !uform__seam_cpuid(7, 0, &l7)) l7 = (uform__cpuid_t){0, 0, 0, 0};
    if (max_leaf < 7 || l7.eax < 1 || !uform__seam_cpuid(7, 1, &l71)) l71 = (uform__cpuid_t){0, 0, 0, 0};

    /* The CPU having a unit is not enough: the OS must save its registers (XCR0). */
    uint64_t xcr0 = has(l1.ecx, 27) ? uform__seam_xcr0() : 0;
    bool ymm = (xcr0 & 0x6) == 0x6;
    bool zmm = ymm && (xcr0 & 0xE0) == 0xE0;
    bool tiles = (xcr0 & 0x60000) == 0x60000;

    uint64_t f = 0;
    if (ymm && has(l1.ecx, 28)) {
        if (has(l7.ebx, 5)) f |= BIT(AVX2);
        if (has(l1.ecx, 12)) f |= BIT(FMA);
        if (has(l1.ecx, 29)) f |= BIT(F16C);
        if (has(l71.eax, 4)) f |= BIT(AVX_VNNI);
    }
    if (has(l7.ebx, 8)) f |= BIT(BMI2);
    if (zmm) {
        static const struct { int word, bit, feature; } avx512[] = {
            {0, 16, F_AVX512F},       {0, 28, F_AVX512CD},  {0, 30, F_AVX512BW},   {0, 17, F_AVX512DQ},
            {0, 31, F_AVX512VL},      {0, 21, F_AVX512IFMA}, {1, 1, F_AVX512VBMI},  {1, 6, F_AVX512VBMI2},
            {1, 11, F_AVX512VNNI},    {1, 12, F_AVX512BITALG}, {1, 14, F_AVX512VPOPCNTDQ},
            {2, 23, F_AVX512FP16},    {3, 5, F_AVX512BF16},
        };
        for (size_t i = 0; i < sizeof avx512 / sizeof avx512[0]; i++) {
            uint32_t word = avx512[i].word == 0 ? l7.ebx : avx512[i].word == 1 ? l7.ecx
                          : avx512[i].word == 2 ? l7.edx : l71.eax;
            if (has(word, avx512[i].bit)) f |= (uint64_t)1 << avx512[i].feature;
        }
        /* AVX10.2: the AVX10 flag (7.1:EDX[19]) and version >= 2 in leaf 0x24. */
        if (has(l71.edx, 19) && max_leaf >= 0x24 && uform__seam_cpuid(0x24, 0, &l24) && (l24.ebx & 0xFF) >= 2)
            f |= BIT(AVX10_2);
    }
    uint64_t amx = 0;
    if (has(l7.edx, 24)) amx |= BIT(AMX_TILE);
    if (has(l7.edx, 22)) amx |= BIT(AMX_BF16);
    if (has(l7.edx, 25)) amx |= BIT(AMX_INT8);
    if (has(l71.eax, 21)) amx |= BIT(AMX_FP16);
    /* Tiles need the OS state and, on Linux, this process's permission; ask only if present. */
    if (amx && tiles && uform__seam_amx_permission()) f |= amx;
    return f;
}

/* Linux arm64 HWCAP bits (arch/arm64/include/uapi/asm/hwcap.h), spelled out so an x86 build
 * can read an Arm fixture. */
enum {
    HWCAP_ASIMD_ = 1, HWCAP_FPHP_ = 9, HWCAP_ASIMDHP_ = 10, HWCAP_ASIMDDP_ = 20, HWCAP_ASIMDFHM_ = 23,
    HWCAP2_SVE2_ = 1, HWCAP2_I8MM_ = 13, HWCAP2_BF16_ = 14, HWCAP2_SME_ = 23, HWCAP2_F8DP4_ = 53,
};
/* RISC-V: one bit per single-letter extension; 'V' is RVV 1.0 (the kernel reports it only
 * for the ratified version). */
enum { HWCAP_RISCV_V_ = 'V' - 'A' };

static bool hw(unsigned long word, int bit) { return (word >> bit) & 1ul; }

static uint64_t arm_features(void) {
    unsigned long h1 = uform__seam_hwcap(1), h2 = uform__seam_hwcap(2);
    uint64_t f = 0;
    if (hw(h1, HWCAP_ASIMD_)) f |= BIT(NEON);
    if (hw(h1, HWCAP_ASIMDDP_)) f |= BIT(DOTPROD);
    if (hw(h1, HWCAP_FPHP_) && hw(h1, HWCAP_ASIMDHP_)) f |= BIT(FP16);
    if (hw(h1, HWCAP_ASIMDFHM_)) f |= BIT(FHM);
    if (hw(h2, HWCAP2_BF16_)) f |= BIT(BF16);
    if (hw(h2, HWCAP2_I8MM_)) f |= BIT(I8MM);
    if (hw(h2, HWCAP2_SVE2_)) f |= BIT(SVE2);
    if (hw(h2, HWCAP2_SME_)) f |= BIT(SME);
    if (((uint64_t)h2 >> HWCAP2_F8DP4_) & 1u) f |= BIT(FP8DOT); /* 64-bit word: bit 53 */
    return f;
}

/* Read once per seam generation. Each value is stored before its generation (+1, so 0 is
 * "never read"), with release: a reader that sees the generation sees the value. Racing
 * readers compute the same value, so a second store changes nothing. */
static _Atomic uint64_t cached_features, features_generation;
static _Atomic int cached_class;
static _Atomic uint64_t class_generation;

static uint64_t features(void) {
    uint64_t now = uform__seam_generation() + 1;
    if (atomic_load_explicit(&features_generation, memory_order_acquire) == now)
        return atomic_load_explicit(&cached_features, memory_order_relaxed);
    uint64_t f;
    switch (uform__seam_isa()) {
    case UFORM_ISA_X86_64: f = x86_features(); break;
    case UFORM_ISA_ARM64: f = arm_features(); break;
    case UFORM_ISA_RISCV64: f = hw(uform__seam_hwcap(1), HWCAP_RISCV_V_) ? BIT(RVV) : 0; break;
    default: f = 0; break;
    }
    atomic_store_explicit(&cached_features, f, memory_order_relaxed);
    atomic_store_explicit(&features_generation, now, memory_order_release);
    return f;
}

/* wasm32_v128 is the class of a wasm32 build compiled with SIMD128 (the runtime validated the
 * whole module, so the CPU runs it), on the real machine: a fixture names another ISA. */
static bool wasm32_v128_here(void) {
#if UFORM_ARCH_WASM32 && defined(__wasm_simd128__)
    return uform__seam_isa() == UFORM_ISA_OTHER;
#else
    return false;
#endif
}

bool uform__cpu_class_runs(uform_cpu_class_t cpu_class) {
    if (cpu_class == UFORM_CPU_CLASS_NONE || cpu_class == UFORM_CPU_CLASS_SERIAL) return true;
    if (cpu_class == UFORM_CPU_CLASS_WASM32_V128 && wasm32_v128_here()) return true;
    if (!is_class((int)cpu_class) || is_wasm_or_mono(cpu_class)) return false;
    const class_info_t *info = &classes[cpu_class];
    if (info->isa != uform__seam_isa()) return false;
    return (features() & info->requires) == info->requires;
}

void uform__cpu_class_missing(uform_cpu_class_t cpu_class, char *buffer, size_t capacity) {
    if (!capacity) return;
    buffer[0] = '\0';
    if (!is_class((int)cpu_class)) return;
    uint64_t missing = classes[cpu_class].requires & ~features();
    size_t used = 0;
    for (int i = 0; i < F_COUNT_ && used < capacity; i++)
        if ((missing >> i) & 1u) {
            int n = snprintf(buffer + used, capacity - used, "%s%s", used ? " " : "", feature_names[i]);
            if (n < 0) break;
            used += (size_t)n;
        }
}

static const char *isa_name(uform__isa_t isa) {
    switch (isa) {
    case UFORM_ISA_X86_64: return "x86-64";
    case UFORM_ISA_ARM64: return "arm64";
    case UFORM_ISA_RISCV64: return "riscv64";
    default: return "an unknown ISA";
    }
}

uform_status_t uform__cpu_class_check(uform_cpu_class_t cpu_class) {
    if (cpu_class != UFORM_CPU_CLASS_NONE && !is_class((int)cpu_class))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%d is not a CPU class", (int)cpu_class);
    if (uform__cpu_class_runs(cpu_class)) return UFORM_STATUS_OK;
    const class_info_t *info = &classes[cpu_class];
    if (cpu_class == UFORM_CPU_CLASS_MONOVERSIONED)
        return uform__fail(UFORM_STATUS_UNSUPPORTED, "monoversioned is the class of single-target builds only");
    if (is_wasm_or_mono(cpu_class))
        return uform__fail(UFORM_STATUS_UNSUPPORTED, "%s exists only in WebAssembly builds", info->name);
    if (info->isa != uform__seam_isa())
        return uform__fail(UFORM_STATUS_UNSUPPORTED, "%s is a %s class; this CPU is %s", info->name,
                           isa_name(info->isa), isa_name(uform__seam_isa()));
    char missing[256];
    uform__cpu_class_missing(cpu_class, missing, sizeof missing);
    return uform__fail(UFORM_STATUS_UNSUPPORTED, "%s needs %s, which this CPU or OS does not offer", info->name,
                       missing);
}

uform_cpu_class_t uform_cpu_class_derived(void) {
    uint64_t now = uform__seam_generation() + 1;
    if (atomic_load_explicit(&class_generation, memory_order_acquire) == now)
        return (uform_cpu_class_t)atomic_load_explicit(&cached_class, memory_order_relaxed);
    int c = UFORM_CPU_CLASS_SERIAL;
    /* The highest class whose bundle is complete; WASM classes derive only in WASM builds,
     * monoversioned never. */
    if (wasm32_v128_here()) c = UFORM_CPU_CLASS_WASM32_V128;
    else
    for (int k = UFORM_CPU_CLASS_ALIBABA_C930; k > UFORM_CPU_CLASS_SERIAL; k--)
        if (uform__cpu_class_runs((uform_cpu_class_t)k)) {
            c = k;
            break;
        }
    atomic_store_explicit(&cached_class, c, memory_order_relaxed);
    atomic_store_explicit(&class_generation, now, memory_order_release);
    return (uform_cpu_class_t)c;
}

const char *uform_cpu_class_name(uform_cpu_class_t cpu_class) {
    return is_class((int)cpu_class) ? classes[cpu_class].name : NULL;
}

uform_status_t uform_cpu_class_parse(const char *name, uform_cpu_class_t *cpu_class) {
    if (!name || !cpu_class) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_cpu_class_parse: NULL argument");
    for (int c = 1; c < UFORM__CPU_CLASS_COUNT; c++)
        if (strcasecmp(name, classes[c].name) == 0) {
            *cpu_class = (uform_cpu_class_t)c;
            return UFORM_STATUS_OK;
        }
    return uform__fail(UFORM_STATUS_NOT_FOUND, "\"%.64s\" is not a CPU class", name);
}

/* ---- GPU class and vendor names: tables beside the CPU one, same rules ---- */

static const char *const gpu_names[UFORM__GPU_CLASS_COUNT] = {
#define GPU_NAME_(member, number, name) [number] = #name,
    UFORM__GPU_CLASSES(GPU_NAME_)
#undef GPU_NAME_
};
#define GPU_MATCHES_(member, number, name)                                                         \
    _Static_assert(UFORM_GPU_CLASS_##member == number, "uform_gpu_class_t and UFORM__GPU_CLASSES differ at " #member);
UFORM__GPU_CLASSES(GPU_MATCHES_)
#undef GPU_MATCHES_
_Static_assert(UFORM_GPU_CLASS_APPLE_METAL10 + 1 == UFORM__GPU_CLASS_COUNT, "the GPU class list ends at apple_metal10");

static const char *const vendor_names[UFORM__GPU_VENDOR_COUNT] = {
#define VENDOR_NAME_(member, number, name) [number] = #name,
    UFORM__GPU_VENDORS(VENDOR_NAME_)
#undef VENDOR_NAME_
};
#define VENDOR_MATCHES_(member, number, name)                                                      \
    _Static_assert(UFORM_GPU_VENDOR_##member == number, "uform_gpu_vendor_t and UFORM__GPU_VENDORS differ at " #member);
UFORM__GPU_VENDORS(VENDOR_MATCHES_)
#undef VENDOR_MATCHES_
_Static_assert(UFORM_GPU_VENDOR_APPLE + 1 == UFORM__GPU_VENDOR_COUNT, "the vendor list ends at apple");

const char *uform__gpu_vendor_name(int vendor) {
    return vendor > 0 && vendor < UFORM__GPU_VENDOR_COUNT ? vendor_names[vendor] : NULL;
}

const char *uform_gpu_class_name(uform_gpu_class_t gpu_class) {
    return (int)gpu_class > 0 && (int)gpu_class < UFORM__GPU_CLASS_COUNT ? gpu_names[gpu_class] : NULL;
}

uform_status_t uform_gpu_class_parse(const char *name, uform_gpu_class_t *gpu_class) {
    if (!name || !gpu_class) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_gpu_class_parse: NULL argument");
    for (int c = 1; c < UFORM__GPU_CLASS_COUNT; c++)
        if (strcasecmp(name, gpu_names[c]) == 0) {
            *gpu_class = (uform_gpu_class_t)c;
            return UFORM_STATUS_OK;
        }
    return uform__fail(UFORM_STATUS_NOT_FOUND, "\"%.64s\" is not a GPU class", name);
}
