/* The CUDA driver test double's configuration: what the emulated machine has and which faults
 * it injects. Parsed once, from UFORM_CUDA_DOUBLE_CONFIG (see README.md). Later work adds
 * streams, memory and more faults as new line kinds and keys; unknown ones are refused. */
#ifndef UFORM_CUDA_EMULATED_CONFIG_H
#define UFORM_CUDA_EMULATED_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define EMULATED_MAX_DEVICES 64
#define EMULATED_MAX_MISSING 16
#define EMULATED_MAX_MULTICAST_FAULTS 8

/* The steps `fault multicast=<step>` can make fail: one entry point each. */
typedef enum {
    MULTICAST_STEP_GRANULARITY, /* cuMulticastGetGranularity */
    MULTICAST_STEP_CREATE,      /* cuMulticastCreate */
    MULTICAST_STEP_ADD,         /* cuMulticastAddDevice */
    MULTICAST_STEP_MEMCREATE,   /* cuMemCreate */
    MULTICAST_STEP_BIND,        /* cuMulticastBindMem */
    MULTICAST_STEP_UNBIND,      /* cuMulticastUnbind */
    MULTICAST_STEPS
} multicast_step_t;

typedef struct emulated_multicast_fault_t {
    multicast_step_t step;
    int device;      /* the driver ordinal the call concerns; -1: any */
    unsigned result; /* what the call answers */
} emulated_multicast_fault_t;

typedef struct emulated_device_t {
    int compute_major, compute_minor;
    int multiprocessors;
    uint64_t memory_bytes;
    unsigned pci_domain, pci_bus, pci_device, pci_function;
    char name[1024]; /* longer than any driver buffer, so truncation can be tested */
    int multicast;    /* `multicast=yes`: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED (default no) */
    int nvlink_group; /* `nvlink=<group>`: peers are the devices of one group; -1 none (default) */
    uint64_t allocation_granularity; /* `granularity=`: cuMemGetAllocationGranularity's answer (default 2M) */
} emulated_device_t;

typedef struct emulated_config_t {
    int driver_version;             /* `driver version=12080` */
    size_t device_count;            /* `device ...` lines, in the driver's (fastest-first) order */
    emulated_device_t devices[EMULATED_MAX_DEVICES];
    unsigned init_result;           /* `fault init=CUDA_ERROR_...`: what cuInit answers (0: succeeds) */
    size_t missing_count;           /* `fault missing=cuName`: hidden from cuGetProcAddress */
    char missing[EMULATED_MAX_MISSING][64];
    unsigned long alloc_fault;      /* `fault alloc=N`: the Nth cuMemAlloc answers OUT_OF_MEMORY (0: none) */
    unsigned long sticky_fault;     /* `fault sticky=N[:<error>]`: the Nth stream operation sticky-faults its context */
    unsigned sticky_result;         /* ...with this error (default CUDA_ERROR_ILLEGAL_ADDRESS) */
    int current_fault_ordinal;      /* `fault current=<ordinal>@N[:<error>]`: that device's context... */
    unsigned long current_fault;    /* ...made current by the Nth cuCtxSetCurrent to it (0: none) fails */
    unsigned current_result;        /* ...with this error (default CUDA_ERROR_INVALID_CONTEXT) */
    uint64_t link_bandwidth;        /* `link bandwidth=1G`: bytes per second of an async copy (0: unlimited) */
    size_t multicast_fault_count;   /* `fault multicast=<step>[@<ordinal>][:<CUDA error>]` */
    emulated_multicast_fault_t multicast_faults[EMULATED_MAX_MULTICAST_FAULTS];
    char error[256];                /* why the configuration was refused; "" when it was not */
} emulated_config_t;

/** Parses `text` (lines split by newline or ';'; `#` comments). Fills `error` on refusal. */
void emulated_config_parse(const char *text, emulated_config_t *config);

/** The name of a multicast step ("bind"), as `fault multicast=` spells it. */
const char *emulated_multicast_step_name(multicast_step_t step);

/** The CUresult number of a name ("CUDA_ERROR_UNKNOWN") or a decimal number; -1 if neither. */
long emulated_result_parse(const char *text);

#endif
