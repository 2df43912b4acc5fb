/* Internal: the HIP runtime, loaded at run time. One load per process: dlopen of the library
 * UFORM_HIP_LIBRARY names, else libamdhip64.so from the default search, $ROCM_PATH/lib or
 * /opt/rocm/lib (the unversioned name, then .so.7, then .so.6), every entry point of
 * UFORM_HIP_ENTRY_POINTS bound with dlsym, hipInit(0), and a snapshot of the devices in PCI bus
 * order. The backend calls the runtime only through `api` and uform__hip_execution's table. */
#ifndef UFORM_GPU_HIP_LOADER_H
#define UFORM_GPU_HIP_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/dynamic_library.h"
#include "gpu/hip/hip_abi.h"
#include "uform/hardware.h"
#include "uform/status.h"

/** The bound entry points, one field per UFORM_HIP_ENTRY_POINTS row. */
typedef struct uform__hip_api_t {
#define UFORM_HIP_API_FIELD_(field, symbol, type) type field;
    UFORM_HIP_ENTRY_POINTS(UFORM_HIP_API_FIELD_)
#undef UFORM_HIP_API_FIELD_
} uform__hip_api_t;

/** The execution entry points (devices, memory, streams, events), bound on first use. */
typedef struct uform__hip_execution_api_t {
#define UFORM_HIP_EXECUTION_FIELD_(field, symbol, type) type field;
    UFORM_HIP_EXECUTION_ENTRY_POINTS(UFORM_HIP_EXECUTION_FIELD_)
#undef UFORM_HIP_EXECUTION_FIELD_
} uform__hip_execution_api_t;

/** Capacity of a device's gcnArchName copy ("gfx942:sramecc+:xnack-"), terminator included. */
#define UFORM_HIP_ARCH_CAPACITY 64

/** One device as the runtime describes it at load time. */
typedef struct uform__hip_device_t {
    int handle;                   /**< the runtime's device id (HIP_VISIBLE_DEVICES order), for later calls */
    int32_t major, minor;         /**< hipDeviceProp_t's major.minor (9.4 for gfx942) */
    uint32_t compute_units;       /**< multiProcessorCount */
    uint64_t memory_bytes;        /**< totalGlobalMem */
    uint32_t pci_domain, pci_bus, pci_device, pci_function;
    char arch[UFORM_HIP_ARCH_CAPACITY];   /**< gcnArchName, cut to the capacity */
    char name[UFORM_GPU_NAME_CAPACITY];   /**< valid UTF-8, cut at a character boundary */
} uform__hip_device_t;

typedef struct uform__hip_t {
    uform__hip_api_t api;
    void *library;            /**< the dlopen handle, kept for the process's life */
    const char *path;         /**< the name the library was opened by */
    uint32_t fork_generation; /**< the process generation that called hipInit */
    size_t device_count;
    const uform__hip_device_t *devices; /**< PCI bus order (domain, bus, device, function) */
} uform__hip_t;

/**
 * The loaded runtime, loading it on the first call (thread-safe; later calls only read). No HIP
 * library, or a runtime that sees no device, is OK with `*hip` NULL: zero devices. A runtime
 * lacking an entry point is UNSUPPORTED naming it; a failing hipInit or device query is
 * DEVICE_FAULT with the runtime's error name. A failure is the process's answer from then on
 * (same status, same message). A child forked after the load keeps the parent's snapshot and
 * must not call the runtime (check `fork_generation`); one forked before loads afresh.
 */
uform_status_t uform__hip_get(const uform__hip_t **hip);

/**
 * The execution entry points, bound once (thread-safe) after a successful load that found
 * devices. NOT_FOUND without devices; UNSUPPORTED naming the first entry point the runtime lacks
 * (discovery keeps working then); the load's own failure otherwise.
 */
uform_status_t uform__hip_execution(const uform__hip_execution_api_t **api);

/** The runtime's load, loading it if no call did yet (as uform__cuda_library). Read only. */
const uform__library_t *uform__hip_library(void);

/** Why there are no HIP devices, in words ("no HIP runtime: libamdhip64.so: cannot open ..."); "" when there are. */
const char *uform__hip_note(void);

/** The runtime's name for `error` ("hipErrorOutOfMemory"), or "hipError_t <n>" in `buffer` (at
 *  least 32 bytes) when there is no runtime to ask. */
const char *uform__hip_error_name(const uform__hip_api_t *api, uform_hipError error, char *buffer, size_t capacity);

#endif
