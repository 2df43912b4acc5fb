/**
 * @file uform/vram.h
 * @brief What a VRAM executor adds to the verbs: device functions, staged copies, device scratch
 *        and pinned staging, and arenas in device memory.
 *
 * A VRAM executor (uform_executor_for_vram) is a RAM executor (its host threads, the "host
 * decoders", run every verb of executor.h) plus one non-blocking stream per device on that
 * device's primary context. The rules of executor.h hold unchanged: one call at a time, in
 * submission order; any call may be deferred; progress; drain; free; fork.
 *
 * Device memory is named by `void *` device pointers (a CUdeviceptr or a HIP device pointer,
 * cast). Everything below that takes a device index takes the position in the executor's own
 * devices (0 .. uform_executor_devices() - 1), not the position in uform_gpu_devices().
 *
 * Faults: a driver error becomes a status with the driver's error name in uform_last_error().
 * Out of device memory is OUT_OF_MEMORY and nothing else changes. A sticky fault (an illegal
 * address, a failed launch, an uncorrectable ECC error, ...) is DEVICE_FAULT, and from then on every
 * verb, drain and new arena of that executor answers DEVICE_FAULT until it is freed (arenas
 * already made still allocate: that touches no device); free
 * still releases everything. In a fork()ed child every call answers FORKED and the driver is
 * never called, including when a device function or a progress callback itself called fork():
 * the child's call returns FORKED at once.
 *
 * The calling thread's current CUDA context (HIP: current device) is the caller's: a CUDA
 * runtime on that thread (PyTorch, CuPy) keeps its device there. Every function here gives it
 * back as it found it (NULL included); a device function runs with its device's context current,
 * and the thread gets back what it had once the function returned (uform_executor_for_devices).
 */
#ifndef UFORM_VRAM_H
#define UFORM_VRAM_H

#include <stddef.h>
#include <stdint.h>

#include "uform/executor.h"
#include "uform/export.h"
#include "uform/hardware.h"
#include "uform/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One device of a VRAM executor, as a device function is given it. Valid during the call. */
typedef struct uform_device_slot_t {
    size_t device;           /**< its index among the executor's devices */
    int32_t ordinal;         /**< its position in uform_gpu_devices() */
    uint32_t vendor;         /**< a uform_gpu_vendor_t: which runtime the handles below belong to */
    int32_t native_device;   /**< CUdevice, or the HIP device id */
    void *native_context;    /**< CUDA: the primary CUcontext, current on this thread; HIP: NULL
                                  (the device is current: hipSetDevice) */
    void *stream;            /**< CUstream or hipStream_t: the executor's stream on this device */
    size_t thread;           /**< the host thread (logical slot) running the function */
} uform_device_slot_t;

/**
 * A host function for one device: it may enqueue any work on `device->stream` (its own kernels,
 * cuBLAS, a framework's external-stream wrapper) and returns OK or a status that fails the call.
 */
typedef uform_status_t (*uform_device_function_t)(void *context, const uform_device_slot_t *device);

/** Devices the executor drives: 0 for NULL and for RAM executors. */
UFORM_API size_t uform_executor_devices(const uform_executor_t *executor);

/** The GPU class its device calls dispatch as: the pin, or the devices' common class (NVIDIA
 *  devices of several classes share NVIDIA_AMPERE, the floor they all run); NONE for NULL, RAM
 *  executors and devices without a common class. */
UFORM_API uform_gpu_class_t uform_executor_gpu_class(const uform_executor_t *executor);

/**
 * Runs `function(context, slot)` once for every device of a VRAM executor, in parallel on the
 * host threads (devices split over them as uform_executor_for_n splits tasks), with that
 * device's context current on the thread running it while it runs (the thread, the caller's
 * included, gets back the context it had afterwards: a context uform releases at free is never
 * left current on a thread). The call finishes (for a deferred call: is finished) only once every
 * function returned and every device's stream has drained what was enqueued, whatever the
 * functions returned. Progress counts devices finished.
 * @return OK; the first non-OK status a function returned (the streams are still drained);
 *         DEVICE_FAULT (the stream faulted: sticky); INVALID_ARGUMENT (NULL function, NULL or RAM
 *         executor); CONTENDED; FORKED; for a deferred call OK means queued.
 */
UFORM_API uform_status_t uform_executor_for_devices(uform_executor_t *executor, const uform_call_t *call,
                                                    uform_device_function_t function, void *context);

/**
 * Copies `bytes` from host memory to `device_pointer` on the executor's device `device`.
 * Pageable memory is staged through the executor's pinned buffers in chunks (8 MiB, or
 * UFORM_STAGING_CHUNK_BYTES), double-buffered so the host-side copy of one chunk (spread over
 * the host threads from 1 MiB up) overlaps the DMA of the other; the staging grows to two
 * chunks once and is kept. Host memory already pinned or registered with the driver over the
 * whole range goes straight. One copy uses one device; copies to several devices are several
 * calls (deferred, they queue in submission order).
 * Progress counts bytes copied. `host` must stay valid (and, for copies to the host, unread)
 * until the call finishes.
 * @return OK (0 bytes: nothing done); INVALID_ARGUMENT (device out of range, NULL pointers with
 *         bytes, a device range the driver refuses); OUT_OF_MEMORY (no pinned staging);
 *         DEVICE_FAULT; CONTENDED; FORKED.
 */
UFORM_API uform_status_t uform_executor_copy_to_device(uform_executor_t *executor, const uform_call_t *call,
                                                       size_t device, void *device_pointer, const void *host,
                                                       size_t bytes);

/** As uform_executor_copy_to_device, from `device_pointer` on device `device` into `host`. */
UFORM_API uform_status_t uform_executor_copy_to_host(uform_executor_t *executor, const uform_call_t *call,
                                                     void *host, size_t device, const void *device_pointer,
                                                     size_t bytes);

/**
 * Device scratch: at least `bytes` of device memory on the device a device function was given,
 * 256-byte aligned, grown to a high-water mark and kept until the executor is freed. Call it
 * from that device function, with `slot->device`. Growing first waits for the stream, then
 * replaces the buffer: a pointer from an earlier, smaller request is then invalid.
 * @return OK; INVALID_ARGUMENT (NULL output, not a VRAM executor, not called from the device
 *         function of `device`); OUT_OF_MEMORY past the executor's scratch_limit or when the
 *         device is full (the old buffer stays valid then); DEVICE_FAULT.
 */
UFORM_API uform_status_t uform_executor_device_scratch(uform_executor_t *executor, size_t device, size_t bytes,
                                                       void **scratch);

/**
 * Pinned host staging of the device `device`, as uform_executor_device_scratch: at least
 * `bytes`, grown to a high-water mark, from that device's function only. The executor's staged
 * copies use the same buffers between calls, never during one.
 */
UFORM_API uform_status_t uform_executor_staging(uform_executor_t *executor, size_t device, size_t bytes,
                                                void **staging);

/**
 * Makes `stream`, a stream of the caller's own on the executor's device `device` (a framework's:
 * PyTorch's current stream, CuPy's), wait on the device for the work of every call submitted to
 * the executor before this one, deferred calls still queued on the host included: work the caller
 * queues on `stream` afterwards starts only once that work has completed, so a kernel reading an
 * arena never sees a copy still writing it. What the earlier calls have not yet queued on the
 * device's stream (a deferred call still waiting for its turn, or still copying into staging) is
 * waited for on the host; then an event recorded on the executor's stream, and
 * cuStreamWaitEvent / hipStreamWaitEvent, order `stream` after it without blocking the host.
 * This is the order DLPack's `__dlpack__(stream=...)` promises a consumer.
 * @param stream CUDA: a CUstream of the device's primary context; NULL, or CU_STREAM_LEGACY
 *        ((void *)1), is the legacy default stream, CU_STREAM_PER_THREAD ((void *)2) the calling
 *        thread's per-thread default stream. HIP: a hipStream_t of the device; NULL is its null
 *        stream.
 * @return OK; INVALID_ARGUMENT (NULL or RAM executor, device out of range, called from one of
 *         this executor's own callbacks, free under way, a stream handle the driver refuses);
 *         CONTENDED (another thread's synchronous call holds the executor); DEVICE_FAULT (the
 *         executor faulted: sticky); FORKED (in a fork()ed child: the driver is not called).
 */
UFORM_API uform_status_t uform_executor_order_stream(uform_executor_t *executor, size_t device, void *stream);

/* ------------------------------------------------------------------------------------------- */
/* Device arenas                                                                                */

/*
 * uform_arena_new_in() on a VRAM executor reserves `capacity` bytes of device memory on every
 * one of its devices: the arena is symmetric. uform_arena_allocate() takes the same offset on
 * each device and answers device 0's pointer; uform_arena_device_pointer() turns it into
 * another device's. A device arena holds its executor: uform_executor_free() then drains it and
 * answers OK, and the last live device arena's uform_arena_free() closes it. Host arenas
 * (RAM or NULL executor) have no devices.
 */

/** Devices an arena spans: 0 for a host arena. NULL answers 0. */
UFORM_API size_t uform_arena_devices(const uform_arena_t *arena);

/**
 * The twin on device `device` of `pointer`, a pointer into device 0's reservation of a device
 * arena (as uform_arena_allocate gave it, or any address inside it).
 * @return OK; INVALID_ARGUMENT (NULL, host arena, device out of range, pointer outside).
 */
UFORM_API uform_status_t uform_arena_device_pointer(const uform_arena_t *arena, size_t device, const void *pointer,
                                                    void **device_pointer);

#ifdef __cplusplus
}
#endif

#endif /* UFORM_VRAM_H */
