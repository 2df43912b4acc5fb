/* Internal: the seam between the VRAM executor (src/gpu/vram_*.c, vendor-neutral) and a GPU
 * runtime (src/gpu/cuda/, src/gpu/hip/). The executor keeps one uform__gpu_device_t per device
 * and calls the runtime only through its backend's table, so a second vendor is a second table.
 *
 * Every operation answers a uform_status_t and, on failure, leaves the runtime's own error name
 * in uform_last_error() (`verb: cuMemAlloc_v2 answered CUDA_ERROR_OUT_OF_MEMORY`). Statuses:
 *   OUT_OF_MEMORY     the runtime's out-of-memory (device or pinned host);
 *   INVALID_ARGUMENT  the runtime refused an argument (a bad device range, a bad handle);
 *   DEVICE_FAULT      anything else; when the error is one the runtime keeps answering for the
 *                     context (illegal address, launch failure, ECC, ...), the backend also sets
 *                     `device->faulted`, which the executor makes sticky for the whole executor.
 * Threads: most operations run on the caller's own thread (drain, arenas, synchronous copies,
 * free; open at creation), some on uform's (device functions, deferred calls). The current
 * context (CUDA) or device (HIP) is the calling thread's, and a caller's CUDA or HIP runtime
 * (PyTorch, CuPy) keeps its device in that same slot: so every operation but make_current makes
 * the device's context current only for its own duration and gives the thread back the one it
 * had (NULL included); none relies on an earlier make_current. Device functions run inside
 * enter/leave, with the device current for their duration only. */
#ifndef UFORM_GPU_BACKEND_H
#define UFORM_GPU_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uform.h"

struct uform__gpu_backend_t;

/** The number of pinned staging halves a staged copy alternates between. */
#define UFORM_STAGING_BUFFERS 2

/**
 * One device of a VRAM executor: runtime handles, scratch and staging.
 *
 * A device has four numbers, each meaning one thing wherever it appears (the public
 * uform_device_slot_t and uform_gpu_device_t carry the same names):
 *   index           its position among this executor's devices (0 .. device_count - 1), the
 *                   order the caller named them in; uform_device_slot_t calls it `device`.
 *   ordinal         its position in uform_gpu_devices(): NVIDIA first, then AMD, each vendor in
 *                   PCI bus order. What the caller names devices by, and what messages say
 *                   ("GPU 3").
 *   vendor_ordinal  its position among its own vendor's devices in PCI bus order (nvidia-smi's
 *                   and rocm-smi's numbering): the index into the loader's device snapshot.
 *   native_device   the runtime's own handle for it (a CUdevice, or a HIP device id), in the
 *                   order CUDA_DEVICE_ORDER / HIP_VISIBLE_DEVICES give the runtime: what is
 *                   passed to the runtime's calls, and nowhere else.
 */
typedef struct uform__gpu_device_t {
    const struct uform__gpu_backend_t *backend;
    size_t index;           /* see above */
    int32_t ordinal;        /* see above */
    uint32_t vendor;        /* uform_gpu_vendor_t */
    int32_t vendor_ordinal; /* see above */
    int32_t native_device;  /* see above; filled by open */
    void *native_context;  /* CUcontext (retained primary) or NULL */
    void *stream;          /* CUstream or hipStream_t, non-blocking */
    void *events[UFORM_STAGING_BUFFERS]; /* one per staging half: "the DMA from/to it finished" */
    void *wait_event;      /* stream_wait records it and waits on it */
    void *order_event;     /* order_stream records it for another stream to wait on */
    /* The VRAM call running now (a staged copy, a device function) enqueues nothing more on this
     * device's stream: it only waits for the stream from here on. Set by that call's body, cleared
     * before it returns (vram_verbs.c); read by uform_executor_order_stream (vram_order.c). */
    _Atomic bool settled;
    bool opened;           /* open() succeeded: close() must run */
    _Atomic bool faulted;  /* a sticky runtime error was seen on this device */
    /* Grown to high-water marks by the executor (vram_memory.c) and released by it
     * (the VRAM executor's close, vram_executor.c) before close: never the backend's to free. */
    void *scratch;
    size_t scratch_bytes;
    void *staging;
    size_t staging_bytes;
} uform__gpu_device_t;

/** What a thread had current (CUDA: its context, as an integer; HIP: its device id) before an
 *  operation made a device current, for the operation to give back (gpu_call.h). */
typedef struct uform__gpu_scope_t {
    intptr_t previous;
    bool switched; /**< the device was made current: leaving restores `previous` */
} uform__gpu_scope_t;

typedef struct uform__gpu_backend_t {
    const char *name; /* "CUDA", "HIP": for messages */
    /** Retains the device's primary context, creates its non-blocking stream and events. Fills
     *  native_device, native_context, stream, events, wait_event, order_event; sets `opened`. On failure releases what it
     *  took. */
    uform_status_t (*open)(uform__gpu_device_t *device);
    /** Waits for the stream, destroys events and stream, releases the context. Never fails
     *  visibly (errors are ignored: free must release everything, a faulted device included). */
    void (*close)(uform__gpu_device_t *device);
    /** Makes the device current on the calling thread (cuCtxSetCurrent / hipSetDevice) and leaves
     *  it so: for device functions, documented (vram.h) to run with it current. Called on the
     *  caller's thread it changes what the caller's runtime sees afterwards. */
    uform_status_t (*make_current)(uform__gpu_device_t *device);
    /** A device function's bracket: enter makes the device current on the calling thread,
     *  remembering in `scope` what the thread had; leave gives it back (NULL included), so a
     *  caller's thread (thread 0) keeps its own context, and a context uform releases later is
     *  never left current on a thread. */
    uform_status_t (*enter)(uform__gpu_device_t *device, uform__gpu_scope_t *scope);
    void (*leave)(uform__gpu_device_t *device, const uform__gpu_scope_t *scope);
    /** What is current on the calling thread (CUDA: the context, NULL included; HIP: the device),
     *  for restore_current to give back after make_current calls on the caller's thread. */
    uform_status_t (*save_current)(uform__gpu_device_t *device, uintptr_t *saved);
    /** Makes `saved` current again; its error is not the caller's operation's, and is ignored. */
    void (*restore_current)(uform__gpu_device_t *device, uintptr_t saved);
    uform_status_t (*device_alloc)(uform__gpu_device_t *device, size_t bytes, void **pointer);
    /** Frees device memory; waits for the device's queued work as the runtimes do. */
    void (*device_free)(uform__gpu_device_t *device, void *pointer);
    uform_status_t (*host_alloc)(uform__gpu_device_t *device, size_t bytes, void **pointer); /* pinned, portable */
    void (*host_free)(uform__gpu_device_t *device, void *pointer);
    /** True when [host, host + bytes) lies inside one pinned or registered host range. */
    bool (*host_is_pinned)(uform__gpu_device_t *device, const void *host, size_t bytes);
    uform_status_t (*copy_to_device_async)(uform__gpu_device_t *device, void *destination, const void *source,
                                           size_t bytes);
    uform_status_t (*copy_to_host_async)(uform__gpu_device_t *device, void *destination, const void *source,
                                         size_t bytes);
    /* Every event a host thread waits on is a blocking-sync one (CU_EVENT_BLOCKING_SYNC,
     * hipEventBlockingSync): a staged copy's DMA or a drain lasts from microseconds to seconds,
     * and without the flag the runtimes spin the waiting thread's CPU all that time. */
    /** Records events[which] on the stream / waits on the host until it has completed. */
    uform_status_t (*event_record)(uform__gpu_device_t *device, size_t which);
    uform_status_t (*event_wait)(uform__gpu_device_t *device, size_t which);
    /** Waits for everything queued on the stream (through wait_event, so the thread blocks). */
    uform_status_t (*stream_wait)(uform__gpu_device_t *device);
    /** Records order_event on the device's stream and makes `foreign` (any stream of the
     *  runtime's, NULL the default one) wait for it on the device: work queued on `foreign`
     *  afterwards starts only once everything queued on the device's stream so far has
     *  completed. Never blocks the host. */
    uform_status_t (*order_stream)(uform__gpu_device_t *device, void *foreign);
    /* Optional (NULL where the vendor has no multicast: one-GPU NVLink domains). Called by
     * gpu_multicast.c with `count` devices all of this backend, opened by this process. Neither
     * is a status: both leave uform_last_error() as they found it. */
    /** How many of the devices form one NVLink domain: those that support multicast and can all
     *  access each other as peers; 1 when fewer than two do. */
    size_t (*multimem_extent)(const uform__gpu_device_t *devices, size_t count);
    /** Creates a multicast object over the devices, adds each, binds physical memory of each,
     *  releases everything: true only when every step succeeded; else the first failure in
     *  `why` (`capacity` bytes, may be NULL). */
    bool (*multicast_probe)(const uform__gpu_device_t *devices, size_t count, char *why, size_t capacity);
} uform__gpu_backend_t;

/** The CUDA backend (src/gpu/cuda/cuda_backend.c): NULL when the driver lacks an execution entry
 *  point, with *status UNSUPPORTED naming it. Loaded on first use, after discovery. */
const uform__gpu_backend_t *uform__cuda_backend(uform_status_t *status);
/** The HIP backend (src/gpu/hip/hip_backend.c), likewise. */
const uform__gpu_backend_t *uform__hip_backend(uform_status_t *status);

#endif
