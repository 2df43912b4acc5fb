/* Internal: the one narrow interface through which uform reads the machine. Every /sys and
 * /proc read, CPUID leaf, XCR0, AMX permission, auxv word and affinity mask goes through
 * here, so tests can point it at a fixture directory recorded from a real machine
 * (tests/fixtures/<machine>/) instead of this one. */
#ifndef UFORM_HARDWARE_SEAM_H
#define UFORM_HARDWARE_SEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uform/status.h"

typedef struct uform__cpuid_t {
    uint32_t eax, ebx, ecx, edx;
} uform__cpuid_t;

/** Which instruction set the (real or fixture) machine runs. */
typedef enum uform__isa_t { UFORM_ISA_OTHER = 0, UFORM_ISA_X86_64, UFORM_ISA_ARM64, UFORM_ISA_RISCV64 } uform__isa_t;

/**
 * Points the seam at a fixture directory (NULL: back to the real machine) and bumps the
 * generation, so every reading cached from the previous machine goes stale. Not thread-safe:
 * tests call it first. NOT_FOUND if the directory does not exist (the seam stays where it was).
 */
uform_status_t uform__seam_use_fixture(const char *directory);

/**
 * Counts the seam's moves: 0 until the first uform__seam_use_fixture, one more after each
 * one that succeeds. A cache of anything read through the seam keeps the generation it was
 * built at and rebuilds when the two differ; the seam itself knows no cache (the layers
 * above it come and go without it naming them).
 */
uint64_t uform__seam_generation(void);

/** Reads a small text file (`/sys/...`, `/proc/...`) whole into `buffer`, NUL-terminated.
 *  NOT_FOUND if absent, IO_ERROR if unreadable, MALFORMED if larger than `capacity - 1`. */
uform_status_t uform__seam_read(const char *path, char *buffer, size_t capacity, size_t *length);

uform__isa_t uform__seam_isa(void);
/** CPUID leaf/subleaf; false where there is no CPUID (or the fixture lacks the leaf: zeros). */
bool uform__seam_cpuid(uint32_t leaf, uint32_t subleaf, uform__cpuid_t *out);
/** XCR0, 0 when XGETBV is unavailable (OSXSAVE clear). */
uint64_t uform__seam_xcr0(void);
/** Asks Linux for the AMX tile-data permission (arch_prctl ARCH_REQ_XCOMP_PERM); true if granted. */
bool uform__seam_amx_permission(void);
/** getauxval(AT_HWCAP) / getauxval(AT_HWCAP2); 0 elsewhere. */
unsigned long uform__seam_hwcap(int which /* 1 or 2 */);
/** The CPUs this process may run on (sched_getaffinity), ascending; stores the count. */
uform_status_t uform__seam_affinity(int32_t *cpus, size_t capacity, size_t *count);

#endif
