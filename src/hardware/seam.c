/* The seam: the real machine (files, CPUID, XGETBV, arch_prctl, auxv, affinity) or a fixture
 * directory recorded from one. Fixture format (tests/fixtures/README.md):
 *   <dir>/sys/..., <dir>/proc/...  the machine's files, read in place of /sys and /proc;
 *   <dir>/cpuid.txt                "leaf subleaf eax ebx ecx edx" in hex, one leaf a line;
 *   <dir>/seam.txt                 "isa x86_64|arm64|riscv64|other", "xcr0 0x..",
 *                                  "amx_permission 0|1", "hwcap 0x..", "hwcap2 0x..",
 *                                  "affinity <cpulist>".
 * '#' starts a comment in both text files. */
#include "hardware/seam.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "hardware/cpulist.h"
#include "platform/platform.h"

#if UFORM_ARCH_X86_64
#include <cpuid.h>
#include <sys/syscall.h>
#endif
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#if defined(__EMSCRIPTEN__)
#include <emscripten/threading.h>
#endif

/* Leaves a fixture may hold; real CPUs answer a few dozen at most. */
#define FIXTURE_LEAVES 128

typedef struct leaf_t {
    uint32_t leaf, subleaf;
    uform__cpuid_t value;
} leaf_t;

typedef struct fixture_t {
    char directory[PATH_MAX];
    uform__isa_t isa;
    uint64_t xcr0;
    bool amx_permission;
    unsigned long hwcap, hwcap2;
    int32_t *affinity;
    size_t affinity_count;
    size_t leaf_count;
    leaf_t leaves[FIXTURE_LEAVES];
} fixture_t;

/* NULL on the real machine. Swapped only by uform__seam_use_fixture, which tests call alone. */
static fixture_t *fixture;

static void fixture_free(fixture_t *f) {
    if (!f) return;
    free(f->affinity);
    free(f);
}

/* Reads a file by its real path, no mapping. */
static uform_status_t read_path(const char *path, char *buffer, size_t capacity, size_t *length) {
    if (!buffer || capacity == 0) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: no buffer", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int error = errno;
        return uform__fail_errno(error == ENOENT || error == ENOTDIR ? UFORM_STATUS_NOT_FOUND : UFORM_STATUS_IO_ERROR,
                                 error, "cannot open %s", path);
    }
    size_t total = 0;
    for (;;) {
        /* Read one byte past the room so an oversized file is noticed, not silently cut. */
        char spill;
        char *target = total < capacity - 1 ? buffer + total : &spill;
        size_t room = total < capacity - 1 ? capacity - 1 - total : 1;
        ssize_t got = read(fd, target, room);
        if (got < 0) {
            if (errno == EINTR) continue;
            int error = errno;
            close(fd);
            buffer[total < capacity ? total : capacity - 1] = '\0';
            return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "cannot read %s", path);
        }
        if (got == 0) break;
        if (target == &spill) {
            close(fd);
            buffer[capacity - 1] = '\0';
            return uform__fail(UFORM_STATUS_MALFORMED, "%s is larger than the %zu bytes expected", path, capacity - 1);
        }
        total += (size_t)got;
    }
    close(fd);
    buffer[total] = '\0';
    if (length) *length = total;
    return UFORM_STATUS_OK;
}

uform_status_t uform__seam_read(const char *path, char *buffer, size_t capacity, size_t *length) {
    if (!path) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "seam read: NULL path");
    if (!fixture) return read_path(path, buffer, capacity, length);
    /* A fixture holds the machine's absolute paths under its own directory. */
    char mapped[PATH_MAX + 256];
    int n = snprintf(mapped, sizeof mapped, "%s%s%s", fixture->directory, path[0] == '/' ? "" : "/", path);
    if (n < 0 || (size_t)n >= sizeof mapped) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "path too long: %s", path);
    return read_path(mapped, buffer, capacity, length);
}

/* ---- fixture text files ---- */

static bool parse_u64(const char *text, uint64_t *value) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || end == text || *text == '-') return false;
    while (*end == ' ' || *end == '\t' || *end == '\r') end++;
    if (*end) return false;
    *value = v;
    return true;
}

static char *next_line(char **cursor) {
    char *line = *cursor;
    if (!*line) return NULL;
    char *end = strchr(line, '\n');
    if (end) {
        *end = '\0';
        *cursor = end + 1;
    } else {
        *cursor = line + strlen(line);
    }
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    while (*line == ' ' || *line == '\t') line++;
    return line;
}

static uform_status_t load_cpuid(fixture_t *f, char *text) {
    char *cursor = text, *line;
    for (size_t number = 1; (line = next_line(&cursor)); number++) {
        if (!*line || *line == '\r') continue;
        unsigned long long v[6];
        char extra;
        int got = sscanf(line, "%llx %llx %llx %llx %llx %llx %c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &extra);
        bool fits = true;
        for (int i = 0; i < 6 && i < got; i++) fits = fits && v[i] <= UINT32_MAX;
        if (got != 6 || !fits)
            return uform__fail(UFORM_STATUS_MALFORMED, "%s/cpuid.txt line %zu: expected 6 hex words, got \"%.60s\"",
                               f->directory, number, line);
        if (f->leaf_count == FIXTURE_LEAVES)
            return uform__fail(UFORM_STATUS_MALFORMED, "%s/cpuid.txt: more than %d leaves", f->directory, FIXTURE_LEAVES);
        leaf_t *leaf = &f->leaves[f->leaf_count++];
        leaf->leaf = (uint32_t)v[0];
        leaf->subleaf = (uint32_t)v[1];
        leaf->value = (uform__cpuid_t){(uint32_t)v[2], (uint32_t)v[3], (uint32_t)v[4], (uint32_t)v[5]};
    }
    return UFORM_STATUS_OK;
}

static uform_status_t load_seam(fixture_t *f, char *text) {
    char *cursor = text, *line;
    bool have_isa = false;
    for (size_t number = 1; (line = next_line(&cursor)); number++) {
        char *end = line + strlen(line);
        while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) *--end = '\0';
        if (!*line) continue;
        char *value = line + strcspn(line, " \t");
        if (*value) *value++ = '\0';
        while (*value == ' ' || *value == '\t') value++;
        uint64_t number_value = 0;
        bool numeric = parse_u64(value, &number_value);
        if (strcmp(line, "isa") == 0) {
            have_isa = true;
            if (strcmp(value, "x86_64") == 0) f->isa = UFORM_ISA_X86_64;
            else if (strcmp(value, "arm64") == 0) f->isa = UFORM_ISA_ARM64;
            else if (strcmp(value, "riscv64") == 0) f->isa = UFORM_ISA_RISCV64;
            else if (strcmp(value, "other") == 0) f->isa = UFORM_ISA_OTHER;
            else have_isa = false;
            if (!have_isa)
                return uform__fail(UFORM_STATUS_MALFORMED, "%s/seam.txt line %zu: unknown isa \"%.32s\"", f->directory,
                                   number, value);
        } else if (strcmp(line, "affinity") == 0) {
            free(f->affinity);
            f->affinity = NULL;
            uform_status_t status = uform__cpulist_parse(value, "seam.txt affinity", &f->affinity, &f->affinity_count);
            if (status != UFORM_STATUS_OK) return status;
        } else if (numeric && strcmp(line, "xcr0") == 0) {
            f->xcr0 = number_value;
        } else if (numeric && strcmp(line, "amx_permission") == 0 && number_value <= 1) {
            f->amx_permission = number_value == 1;
        } else if (numeric && strcmp(line, "hwcap") == 0) {
            f->hwcap = (unsigned long)number_value;
        } else if (numeric && strcmp(line, "hwcap2") == 0) {
            f->hwcap2 = (unsigned long)number_value;
        } else {
            return uform__fail(UFORM_STATUS_MALFORMED, "%s/seam.txt line %zu: cannot use \"%.32s %.32s\"", f->directory,
                               number, line, value);
        }
    }
    if (!have_isa) return uform__fail(UFORM_STATUS_MALFORMED, "%s/seam.txt names no isa", f->directory);
    if (!f->affinity_count) return uform__fail(UFORM_STATUS_MALFORMED, "%s/seam.txt names no affinity", f->directory);
    return UFORM_STATUS_OK;
}

/* Fixture text files are small; 64 KiB holds a full CPUID dump with room to spare. */
#define FIXTURE_TEXT 65536

static uform_status_t load_fixture(fixture_t *f) {
    char path[PATH_MAX + 16];
    char *text = malloc(FIXTURE_TEXT);
    if (!text) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory to load a fixture");
    snprintf(path, sizeof path, "%s/seam.txt", f->directory);
    uform_status_t status = read_path(path, text, FIXTURE_TEXT, NULL);
    if (status == UFORM_STATUS_OK) status = load_seam(f, text);
    if (status == UFORM_STATUS_OK) {
        /* An Arm or RISC-V machine has no CPUID, so its fixture has no cpuid.txt. */
        snprintf(path, sizeof path, "%s/cpuid.txt", f->directory);
        status = read_path(path, text, FIXTURE_TEXT, NULL);
        if (status == UFORM_STATUS_OK) status = load_cpuid(f, text);
        else if (status == UFORM_STATUS_NOT_FOUND && f->isa != UFORM_ISA_X86_64) status = UFORM_STATUS_OK;
    }
    free(text);
    return status;
}

/* Release: a reader that sees the new generation sees the new `fixture` too. */
static _Atomic uint64_t generation;

uint64_t uform__seam_generation(void) { return atomic_load_explicit(&generation, memory_order_acquire); }

static void moved(void) { atomic_fetch_add_explicit(&generation, 1, memory_order_acq_rel); }

uform_status_t uform__seam_use_fixture(const char *directory) {
    if (!directory) {
        fixture_free(fixture);
        fixture = NULL;
        moved();
        return UFORM_STATUS_OK;
    }
    struct stat info;
    if (stat(directory, &info) != 0 || !S_ISDIR(info.st_mode))
        return uform__fail(UFORM_STATUS_NOT_FOUND, "fixture directory %s does not exist", directory);
    if (strlen(directory) >= PATH_MAX - 64)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "fixture path too long: %s", directory);
    fixture_t *next = calloc(1, sizeof *next);
    if (!next) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for a fixture");
    strcpy(next->directory, directory);
    uform_status_t status = load_fixture(next);
    if (status != UFORM_STATUS_OK) {
        fixture_free(next);
        return status;
    }
    fixture_free(fixture);
    fixture = next;
    moved();
    return UFORM_STATUS_OK;
}

/* ---- CPU identity ---- */

uform__isa_t uform__seam_isa(void) {
    if (fixture) return fixture->isa;
#if UFORM_ARCH_X86_64
    return UFORM_ISA_X86_64;
#elif UFORM_ARCH_ARM64
    return UFORM_ISA_ARM64;
#elif UFORM_ARCH_RISCV64
    return UFORM_ISA_RISCV64;
#else
    return UFORM_ISA_OTHER;
#endif
}

bool uform__seam_cpuid(uint32_t leaf, uint32_t subleaf, uform__cpuid_t *out) {
    *out = (uform__cpuid_t){0, 0, 0, 0};
    if (fixture) {
        for (size_t i = 0; i < fixture->leaf_count; i++)
            if (fixture->leaves[i].leaf == leaf && fixture->leaves[i].subleaf == subleaf) {
                *out = fixture->leaves[i].value;
                return true;
            }
        return false;
    }
#if UFORM_ARCH_X86_64
    /* Past the highest leaf Intel CPUs repeat the highest one's data, so check the range. */
    if ((uint32_t)__get_cpuid_max(leaf & 0x80000000u, NULL) < leaf) return false;
    __cpuid_count(leaf, subleaf, out->eax, out->ebx, out->ecx, out->edx);
    return true;
#else
    (void)leaf;
    (void)subleaf;
    return false;
#endif
}

uint64_t uform__seam_xcr0(void) {
    if (fixture) return fixture->xcr0;
#if UFORM_ARCH_X86_64
    uform__cpuid_t one;
    /* XGETBV faults unless the OS set CR4.OSXSAVE, which CPUID.1:ECX[27] mirrors. */
    if (!uform__seam_cpuid(1, 0, &one) || !(one.ecx & (1u << 27))) return 0;
    uint32_t eax, edx;
    /* The opcode bytes of xgetbv, so no -mxsave target is needed for this function. */
    __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
#else
    return 0;
#endif
}

bool uform__seam_amx_permission(void) {
    if (fixture) return fixture->amx_permission;
#if UFORM_ARCH_X86_64 && defined(__linux__) && defined(SYS_arch_prctl)
    /* Linux 5.16+ keeps AMX tile data off until a process asks; the grant is per process and
     * idempotent, so asking again is cheap. Older kernels answer EINVAL: no AMX for us. */
    enum { ARCH_GET_XCOMP_PERM_ = 0x1022, ARCH_REQ_XCOMP_PERM_ = 0x1023, XFEATURE_XTILEDATA_ = 18 };
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM_, XFEATURE_XTILEDATA_) != 0) return false;
    unsigned long permitted = 0;
    if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM_, &permitted) != 0) return false;
    return (permitted & (1ul << XFEATURE_XTILEDATA_)) != 0;
#else
    return false;
#endif
}

unsigned long uform__seam_hwcap(int which) {
    if (fixture) return which == 2 ? fixture->hwcap2 : which == 1 ? fixture->hwcap : 0;
#if defined(__linux__) && defined(AT_HWCAP2)
    if (which == 1) return getauxval(AT_HWCAP);
    if (which == 2) return getauxval(AT_HWCAP2);
#endif
    return 0;
}

uform_status_t uform__seam_affinity(int32_t *cpus, size_t capacity, size_t *count) {
    if (!count || (!cpus && capacity)) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "seam affinity: bad arguments");
    if (fixture) {
        for (size_t i = 0; i < fixture->affinity_count && i < capacity; i++) cpus[i] = fixture->affinity[i];
        *count = fixture->affinity_count;
        return UFORM_STATUS_OK;
    }
#if defined(__EMSCRIPTEN__)
    /* WebAssembly has no affinity: every CPU the host reports (navigator.hardwareConcurrency,
     * os.cpus() under Node) is usable. */
    int online = emscripten_num_logical_cores();
    if (online < 1) online = 1;
    for (int cpu = 0; cpu < online && (size_t)cpu < capacity; cpu++) cpus[cpu] = cpu;
    *count = (size_t)online;
    return UFORM_STATUS_OK;
#endif
    /* The kernel refuses a mask smaller than its own CPU count, so grow until it fits. */
    for (int size = 1024; size <= UFORM_CPULIST_MAX; size *= 2) {
        cpu_set_t *set = CPU_ALLOC((size_t)size);
        if (!set) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "no memory for an affinity mask");
        size_t bytes = CPU_ALLOC_SIZE((size_t)size);
        if (sched_getaffinity(0, bytes, set) != 0) {
            int error = errno;
            CPU_FREE(set);
            if (error == EINVAL) continue;
            return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "sched_getaffinity");
        }
        size_t n = 0;
        for (int cpu = 0; cpu < size; cpu++)
            if (CPU_ISSET_S((size_t)cpu, bytes, set)) {
                if (n < capacity) cpus[n] = cpu;
                n++;
            }
        CPU_FREE(set);
        *count = n;
        return UFORM_STATUS_OK;
    }
    return uform__fail(UFORM_STATUS_IO_ERROR, "sched_getaffinity: no mask size accepted");
}
