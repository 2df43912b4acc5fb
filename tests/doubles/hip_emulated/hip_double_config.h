/* The HIP runtime test double's configuration: what the emulated machine has and which faults it
 * injects. Parsed once, from UFORM_HIP_DOUBLE_CONFIG (see README.md); unknown lines, keys and
 * faults are refused. */
#ifndef UFORM_HIP_EMULATED_CONFIG_H
#define UFORM_HIP_EMULATED_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define HIP_DOUBLE_MAX_DEVICES 64
#define HIP_DOUBLE_MAX_MISSING 16

typedef struct hip_double_device_t {
    char arch[256];       /* gcnArchName, "gfx942:sramecc+:xnack-" */
    int major, minor;     /* hipDeviceProp_t's major.minor, derived from arch (gfx942: 9.4) */
    int compute_units;
    uint64_t memory_bytes;
    unsigned pci_domain, pci_bus, pci_device, pci_function;
    char name[1024];      /* longer than the runtime's 256 bytes, so truncation can be tested */
} hip_double_device_t;

typedef struct hip_double_config_t {
    size_t device_count;  /* `device ...` lines, in the runtime's device id order */
    hip_double_device_t devices[HIP_DOUBLE_MAX_DEVICES];
    unsigned init_result; /* `fault init=hipError...`: what initialisation answers (0: succeeds) */
    size_t missing_count; /* `fault missing=hipName`: dlsym finds no such symbol */
    char missing[HIP_DOUBLE_MAX_MISSING][64];
    unsigned long alloc_fault;  /* `fault alloc=N`: the Nth hipMalloc answers hipErrorOutOfMemory */
    unsigned long sticky_fault; /* `fault sticky=N`: the Nth stream operation faults its device */
    unsigned long get_device_fault; /* `fault get_device=N`: the Nth hipGetDevice and every later one answer
                                       hipErrorInvalidDevice */
    char error[256];            /* why the configuration was refused; "" when it was not */
} hip_double_config_t;

/** Parses `text` (lines split by newline or ';'; `#` comments). Fills `error` on refusal. */
void hip_double_config_parse(const char *text, hip_double_config_t *config);

/** The hipError_t number of a name ("hipErrorUnknown") or a decimal number; -1 if neither. */
long hip_double_error_parse(const char *text);

#endif
