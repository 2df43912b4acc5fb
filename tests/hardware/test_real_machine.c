/* The machine the tests run on, through the real seam: the derived class must be what the
 * kernel says of the CPU (x86-64: /proc/cpuinfo's flags, amd_genoa on the CI VMs, whose
 * hypervisor hides AMX; Arm: HWCAP and HWCAP2; RISC-V: the V bit of HWCAP; on Arm and RISC-V
 * cpuinfo must agree wherever it describes this architecture), available must be a subset of
 * compiled, and the info report must be valid JSON. Under qemu-user the emulated CPU model is
 * the machine (scripts/test-cross runs this test under several). */
#include "core/error.h"
#include "fixture.h"
#include "platform/platform.h"

static char flags[16384];

static int flag(const char *name) { return has_token(flags, name); }

static int all(const char *names) {
    char copy[512];
    snprintf(copy, sizeof copy, "%s", names);
    for (char *save = NULL, *f = strtok_r(copy, " ", &save); f; f = strtok_r(NULL, " ", &save))
        if (!flag(f)) return 0;
    return 1;
}

/* The class a set of feature names implies, by the classes' feature bundles (Linux's /proc/cpuinfo names). */
static const char *class_of_flags(void) {
#if UFORM_ARCH_X86_64
    if (!all("avx2 fma f16c bmi2")) return "serial";
    int skylake = all("avx512f avx512cd avx512bw avx512dq avx512vl");
    int icelake = skylake && all("avx512_vnni avx512_vpopcntdq avx512ifma avx512vbmi avx512_vbmi2 avx512_bitalg");
    int genoa = icelake && flag("avx512_bf16");
    int sapphire = genoa && all("avx512_fp16 amx_tile amx_bf16 amx_int8");
    if (sapphire && flag("amx_fp16")) return "intel_granite";
    if (sapphire) return "intel_sapphire";
    if (genoa) return "amd_genoa";
    if (icelake) return "intel_icelake";
    if (skylake) return "intel_skylake";
    if (flag("avx_vnni")) return "intel_sierra";
    return "intel_haswell";
#elif UFORM_ARCH_ARM64
    if (!flag("asimd")) return "serial";
    int m2 = all("asimddp bf16 fphp asimdhp asimdfhm i8mm");
    if (m2 && flag("sve2")) return flag("f8dp4") ? "nvidia_vera" : "aws_g5";
    if (m2 && flag("sme")) return "apple_m4";
    return m2 ? "apple_m2" : "aws_g2";
#elif UFORM_ARCH_RISCV64
    return all("v") ? "alibaba_c930" : "serial";
#else
    return "serial";
#endif
}

#if UFORM_ARCH_ARM64 || UFORM_ARCH_RISCV64
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

/* The kernel's own word on the CPU, read here without the library's seam and with the kernel
 * headers' names: HWCAP/HWCAP2 on Arm, the single-letter bits of HWCAP on RISC-V. Written as
 * cpuinfo-style names into `flags`. */
#if UFORM_ARCH_ARM64 || UFORM_ARCH_RISCV64
static void flags_from_hwcap(void) {
    flags[0] = '\0';
#if UFORM_ARCH_ARM64
    unsigned long h1 = getauxval(AT_HWCAP), h2 = getauxval(AT_HWCAP2);
    static const struct { int word; unsigned long bit; const char *name; } bits[] = {
        {1, HWCAP_ASIMD, "asimd"}, {1, HWCAP_ASIMDDP, "asimddp"}, {1, HWCAP_FPHP, "fphp"},
        {1, HWCAP_ASIMDHP, "asimdhp"}, {1, HWCAP_ASIMDFHM, "asimdfhm"}, {2, HWCAP2_BF16, "bf16"},
        {2, HWCAP2_I8MM, "i8mm"}, {2, HWCAP2_SVE2, "sve2"},
#ifdef HWCAP2_SME
        {2, HWCAP2_SME, "sme"},
#else
        {2, 1ul << 23, "sme"},
#endif
#ifdef HWCAP2_F8DP4
        {2, HWCAP2_F8DP4, "f8dp4"},
#else
        {2, 1ul << 53, "f8dp4"}, /* headers before Linux 6.9 lack it; the bit is fixed ABI */
#endif
    };
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if ((bits[i].word == 1 ? h1 : h2) & bits[i].bit)
            snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s%s", flags[0] ? "," : "", bits[i].name);
#elif UFORM_ARCH_RISCV64
    unsigned long h1 = getauxval(AT_HWCAP);
    for (int letter = 0; letter < 26; letter++)
        if ((h1 >> letter) & 1ul)
            snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s%c", flags[0] ? "," : "", 'a' + letter);
#endif
}
#endif

/* /proc/cpuinfo's features of this architecture into `flags`: x86 "flags", Arm "Features",
 * RISC-V the letters of "isa" (rv64imafdcv_zba... -> i,m,a,f,d,c,v). False if the file has no
 * such line: qemu-user 7.2 passes the host's own cpuinfo through, another architecture's. */
static int flags_from_cpuinfo(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    CHECK(f != NULL);
    char line[16384];
    int found = 0;
#if UFORM_ARCH_X86_64
    const char *key = "flags";
#elif UFORM_ARCH_ARM64
    const char *key = "Features";
#else
    const char *key = "isa";
#endif
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) || !strchr(line, ':')) continue;
        char *colon = strchr(line, ':');
        const char *text = colon + 1;
        while (*text == ' ' || *text == '\t') text++;
#if UFORM_ARCH_RISCV64
        if (strncmp(text, "rv64", 4)) continue;
        flags[0] = '\0';
        for (const char *p = text + 4; *p && *p != '_' && *p != '\n'; p++)
            snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%s%c", flags[0] ? "," : "", *p);
#else
        /* Space-separated on the line; make it the comma list has_token reads. */
        snprintf(flags, sizeof flags, "%s", text);
        for (char *p = flags; *p; p++)
            if (*p == ' ' || *p == '\n') *p = ',';
#endif
        found = 1;
    }
    fclose(f);
    return found;
}

static char expected[64];

/* The class this machine should derive: from cpuinfo on x86-64; from HWCAP on Arm and RISC-V,
 * checked against cpuinfo where cpuinfo is this architecture's (a real kernel, not qemu-user). */
static const char *expected_class(void) {
    if (expected[0]) return expected;
#if UFORM_ARCH_ARM64 || UFORM_ARCH_RISCV64
    flags_from_hwcap();
    printf("HWCAP features: %s\n", flags);
    snprintf(expected, sizeof expected, "%s", class_of_flags());
    if (flags_from_cpuinfo()) {
        printf("cpuinfo features: %s\n", flags);
        CHECK_EQ_STR(class_of_flags(), expected);
    } else {
        printf("/proc/cpuinfo has no line of this architecture (qemu-user shows the host's): HWCAP decides\n");
    }
#elif UFORM_ARCH_WASM32
    /* WebAssembly: no cpuinfo; the class is the build's (SIMD128 or not). */
    (void)flags_from_cpuinfo, (void)class_of_flags;
#if defined(__wasm_simd128__)
    snprintf(expected, sizeof expected, "wasm32_v128");
#else
    snprintf(expected, sizeof expected, "serial");
#endif
#else
    CHECK(flags_from_cpuinfo());
    snprintf(expected, sizeof expected, "%s", class_of_flags());
#endif
    return expected;
}

/* ---- a small strict JSON checker: answers the end of one value, or NULL ---- */
static const char *ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}
static const char *value(const char *p);
static const char *string(const char *p) {
    if (*p++ != '"') return NULL;
    for (; *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) return NULL;
        }
    }
    return p + 1;
}
static const char *number(const char *p) {
    const char *start = p;
    if (*p == '-') p++;
    if (*p < '0' || *p > '9') return NULL;
    while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-') p++;
    return p > start ? p : NULL;
}
static const char *value(const char *p) {
    p = ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (!(p = string(ws(p)))) return NULL;
                p = ws(p);
                if (*p++ != ':') return NULL;
            }
            if (!(p = value(p))) return NULL;
            p = ws(p);
            if (*p == close) return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (*p == '"') return string(p);
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    return number(p);
}

int main(void) {
    (void)expected_class();
    printf("derived class: %s (the kernel's features imply %s)\n", uform_cpu_class_name(uform_cpu_class_derived()),
           expected_class());
    CHECK(uform_cpu_class_derived() != UFORM_CPU_CLASS_NONE);
    CHECK_EQ_STR(uform_cpu_class_name(uform_cpu_class_derived()), expected_class());
    CHECK_OK(uform__cpu_class_check(uform_cpu_class_derived()));
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_NONE));
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_SERIAL));
    CHECK_STATUS(uform__cpu_class_check((uform_cpu_class_t)99), UFORM_STATUS_INVALID_ARGUMENT);
#if UFORM_ARCH_WASM32 && defined(__wasm_simd128__)
    CHECK_OK(uform__cpu_class_check(UFORM_CPU_CLASS_WASM32_V128)); /* this build's own class */
#else
    CHECK_STATUS(uform__cpu_class_check(UFORM_CPU_CLASS_WASM32_V128), UFORM_STATUS_UNSUPPORTED);
#endif
    CHECK_STATUS(uform__cpu_class_check(UFORM_CPU_CLASS_MONOVERSIONED), UFORM_STATUS_UNSUPPORTED);

    /* Available is a subset of compiled, in the same order. */
    const char *compiled = uform_capabilities_compiled(), *available = uform_capabilities_available();
    printf("compiled:  %s\navailable: %s\n", compiled, available);
    CHECK(!strncmp(compiled, "serial", 6) && !strncmp(available, "serial", 6));
    const char *at = compiled;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", available);
    for (char *save = NULL, *token = strtok_r(copy, ",", &save); token; token = strtok_r(NULL, ",", &save)) {
        const char *found = strstr(at, token);
        CHECK(found != NULL && has_token(compiled, token));
        at = found;
    }
    if (has_token(compiled, expected_class())) CHECK(has_token(available, expected_class()));
    /* A success leaves the last error as it was, though probing failed inside. */
    CHECK_OK(uform__seam_use_fixture(NULL)); /* a new seam generation: available is probed again */
    uform__fail(UFORM_STATUS_TIMEOUT, "marker");
    (void)uform_capabilities_available();
    CHECK_EQ_STR(uform_last_error(), "marker");

    /* Topology: every usable CPU sits in exactly one node; the default follows n - n/8. */
    const uform__topology_t *t = topology();
    size_t affinity = 0;
    CHECK_OK(uform__seam_affinity(NULL, 0, &affinity));
    size_t in_nodes = 0;
    for (size_t i = 0; i < t->node_count; i++) in_nodes += t->nodes[i].cpu_count;
    CHECK_EQ_INT(in_nodes, t->usable_count);
    CHECK(t->usable_count >= 1 && t->usable_count <= affinity);
    CHECK(uform_default_threads() >= 1 && uform_default_threads() <= t->usable_count);

    /* The report, both formats, with the snprintf-style length protocol. */
    size_t length = 0;
    CHECK_OK(uform_info_write(UFORM_INFO_JSON, NULL, 0, &length));
    char *json = malloc(length + 1);
    size_t again = 0;
    CHECK_OK(uform_info_write(UFORM_INFO_JSON, json, length + 1, &again));
    CHECK_EQ_INT(again, length);
    CHECK_EQ_INT(strlen(json), length);
    const char *end = value(json);
    CHECK(end != NULL && *ws(end) == '\0');
    CHECK(strstr(json, "\"cpu_class\":\"") != NULL);
    free(json);
    char small[16];
    CHECK_OK(uform_info_write(UFORM_INFO_TEXT, small, sizeof small, &length));
    CHECK(length > sizeof small && strlen(small) == sizeof small - 1);
    char text[8192];
    CHECK_OK(uform_info_write(UFORM_INFO_TEXT, text, sizeof text, &length));
    printf("%s", text);
    CHECK(strstr(text, "GPUs:") != NULL);
    CHECK(strstr(text, UFORM_VERSION_STRING) != NULL);
    CHECK_STATUS(uform_info_write((uform_info_format_t)7, text, sizeof text, &length), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_info_write(UFORM_INFO_TEXT, NULL, 5, &length), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_info_write(UFORM_INFO_TEXT, text, sizeof text, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    TEST_DONE();
}
