/* Internal: the CUDA driver, loaded at run time. One load per process: dlopen of
 * libcuda.so.1 (or UFORM_CUDA_LIBRARY), every entry point of UFORM_CUDA_ENTRY_POINTS bound,
 * cuInit(0), and a snapshot of the devices in PCI bus order. The backend code calls the
 * driver only through `api`. */
#ifndef UFORM_GPU_CUDA_LOADER_H
#define UFORM_GPU_CUDA_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/dynamic_library.h"
#include "gpu/cuda/cuda_abi.h"
#include "uform/hardware.h"
#include "uform/status.h"

/** The bound entry points, one field per UFORM_CUDA_ENTRY_POINTS row. */
typedef struct uform__cuda_api_t {
#define UFORM_CUDA_API_FIELD_(field, base, version, symbol, type) type field;
    UFORM_CUDA_ENTRY_POINTS(UFORM_CUDA_API_FIELD_)
#undef UFORM_CUDA_API_FIELD_
} uform__cuda_api_t;

/** The execution entry points (contexts, memory, streams, events), bound on first use. */
typedef struct uform__cuda_execution_api_t {
#define UFORM_CUDA_EXECUTION_FIELD_(field, base, version, symbol, type) type field;
    UFORM_CUDA_EXECUTION_ENTRY_POINTS(UFORM_CUDA_EXECUTION_FIELD_)
#undef UFORM_CUDA_EXECUTION_FIELD_
} uform__cuda_execution_api_t;

/** The peer-link entry points, for the report's GPU table: optional, NULL where the driver lacks
 *  one (cuDeviceCanAccessPeer as in the multicast list, then cuda_abi.h's peer list). */
typedef struct uform__cuda_peer_api_t {
    uform_cuDeviceCanAccessPeer_t cuDeviceCanAccessPeer;
#define UFORM_CUDA_PEER_FIELD_(field, base, version, symbol, type) type field;
    UFORM_CUDA_PEER_ENTRY_POINTS(UFORM_CUDA_PEER_FIELD_)
#undef UFORM_CUDA_PEER_FIELD_
} uform__cuda_peer_api_t;

/** One device as the driver describes it at load time. */
typedef struct uform__cuda_device_t {
    uform_cuDevice handle;   /**< the driver's ordinal (in CUDA_DEVICE_ORDER), for later calls */
    int32_t compute_major, compute_minor;
    uint32_t multiprocessors;
    uint64_t memory_bytes;
    uint32_t pci_domain, pci_bus, pci_device, pci_function;
    char name[UFORM_GPU_NAME_CAPACITY]; /**< valid UTF-8, cut at a character boundary */
} uform__cuda_device_t;

typedef struct uform__cuda_t {
    uform__cuda_api_t api;
    int driver_version;      /**< cuDriverGetVersion: 1000 * major + 10 * minor */
    uint32_t fork_generation; /**< the process generation that loaded the driver and called cuInit */
    size_t device_count;
    const uform__cuda_device_t *devices; /**< PCI bus order (domain, bus, device, function) */
} uform__cuda_t;

/**
 * The loaded driver, loading it on the first call (thread-safe; later calls only read). No
 * driver library, or a driver that sees no device, is OK with `*cuda` NULL: zero devices.
 * A driver lacking an entry point is UNSUPPORTED naming it; a failing cuInit or device query
 * is DEVICE_FAULT with the driver's error name. A failure is the process's answer from then
 * on (same status, same message). A child forked after the load keeps the parent's snapshot
 * and must not call the driver (check `fork_generation`); one forked before loads afresh.
 */
uform_status_t uform__cuda_get(const uform__cuda_t **cuda);

/**
 * The execution entry points, bound once (thread-safe) after a successful load that found
 * devices. NOT_FOUND without devices; UNSUPPORTED naming the first entry point the driver
 * lacks (discovery keeps working then); the load's own failure otherwise.
 */
uform_status_t uform__cuda_execution(const uform__cuda_execution_api_t **api);

/**
 * Binds a further table of driver entry points (cuda_abi.h's multicast list) once, through the
 * same resolver as the others, under the loader's lock: see uform__library_bind_once. NOT_FOUND
 * without devices; the load's own failure otherwise.
 */
uform_status_t uform__cuda_bind_once(uform__library_table_t *state, const uform__library_entry_t *entries,
                                     size_t count, void *table, size_t table_size);

/** The peer-link table, bound once (thread-safe) like the execution one; every entry optional.
 *  NOT_FOUND without devices; the load's own failure otherwise. */
uform_status_t uform__cuda_peers(const uform__cuda_peer_api_t **api);

/** The driver's load, loading it if no call did yet: its status, message, note and whether a
 *  library was found (`handle`), for gpu_devices.c's per-vendor discovery. Read only. */
const uform__library_t *uform__cuda_library(void);

/** Why there are no CUDA devices, in words ("libcuda.so.1: cannot open ..."); "" when there are. */
const char *uform__cuda_note(void);

/** The driver's name for `result` ("CUDA_ERROR_INVALID_VALUE"), or "CUresult <n>". Static or
 *  driver-owned; `buffer` (at least 32 bytes) holds the fallback. */
const char *uform__cuda_error_name(const uform__cuda_api_t *api, uform_cuResult result, char *buffer, size_t capacity);

#endif
