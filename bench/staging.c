/*
 * `uform bench --staging`: copies of pageable host memory to and from GPU 0 through uform's
 * pinned staging (uform_executor_copy_to_device / _to_host), beside the driver's raw copies of
 * the same size from pinned memory (the ceiling: the link's speed) and from pageable memory
 * (what a program gets without staging of its own), all in one process, one run. Best of
 * --staging-reps copies each. Without a GPU it says so and measures nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "gpu/cuda/cuda_loader.h"
#include "modes.h"
#include "uform.h"

typedef struct raw_t {
    const uform__cuda_execution_api_t *api;
    uform_cuDevice device;
    uform_cuStream stream;
} raw_t;

/* One raw copy on the driver's own stream, waited for. */
static int raw_copy(raw_t *raw, int to_device, void *device_pointer, void *host, size_t bytes) {
    uform_cuResult result =
        to_device ? raw->api->cuMemcpyHtoDAsync((uform_cuDevicePtr)(uintptr_t)device_pointer, host, bytes, raw->stream)
                  : raw->api->cuMemcpyDtoHAsync(host, (uform_cuDevicePtr)(uintptr_t)device_pointer, bytes, raw->stream);
    if (result == UFORM_CUDA_SUCCESS) result = raw->api->cuStreamSynchronize(raw->stream);
    return result == UFORM_CUDA_SUCCESS ? 0 : (int)result;
}

typedef struct figures_t {
    double pinned, pageable, staged; /* GB/s */
} figures_t;

static double best_rate(double best_seconds, size_t bytes) { return best_seconds > 0 ? (double)bytes / best_seconds / 1e9 : 0; }

static int measure(options_t const *o, uform_executor_t *executor, raw_t *raw, int to_device, void *device_pointer,
                   void *pinned, void *pageable, size_t bytes, figures_t *out) {
    double best[3] = {1e30, 1e30, 1e30};
    /* One untimed round first: page faults, staging growth, first-touch of the driver paths. */
    for (int rep = 0; rep <= o->staging_reps; rep++) {
        double start = bench_now_seconds();
        if (raw_copy(raw, to_device, device_pointer, pinned, bytes)) return 1;
        double pinned_time = bench_now_seconds() - start;
        start = bench_now_seconds();
        if (raw_copy(raw, to_device, device_pointer, pageable, bytes)) return 1;
        double pageable_time = bench_now_seconds() - start;
        start = bench_now_seconds();
        uform_status_t status = to_device
                                    ? uform_executor_copy_to_device(executor, NULL, 0, device_pointer, pageable, bytes)
                                    : uform_executor_copy_to_host(executor, NULL, pageable, 0, device_pointer, bytes);
        double staged_time = bench_now_seconds() - start;
        if (status != UFORM_STATUS_OK) {
            fprintf(stderr, "uform bench: staged copy failed: %s\n", uform_last_error());
            return 1;
        }
        if (!rep) continue;
        if (pinned_time < best[0]) best[0] = pinned_time;
        if (pageable_time < best[1]) best[1] = pageable_time;
        if (staged_time < best[2]) best[2] = staged_time;
    }
    out->pinned = best_rate(best[0], bytes);
    out->pageable = best_rate(best[1], bytes);
    out->staged = best_rate(best[2], bytes);
    return 0;
}

int bench_staging_run(options_t const *o) {
    size_t count = 0;
    if (uform_gpu_devices(NULL, 0, &count) != UFORM_STATUS_OK) {
        printf("staging: GPU discovery failed: %s\n", uform_last_error());
        return 1;
    }
    if (!count) {
        printf("staging: no GPU here (%s): nothing to measure\n", uform__cuda_note());
        return 0;
    }
    uform_gpu_device_t gpu;
    uform_gpu_devices(&gpu, 1, &count);
    if (gpu.vendor != UFORM_GPU_VENDOR_NVIDIA) {
        printf("staging: GPU 0 is not an NVIDIA GPU; the raw comparison uses the CUDA driver\n");
        return 0;
    }
    const int32_t first[] = {0};
    uform_executor_t *executor = NULL;
    if (uform_executor_for_vram(first, 1, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                &executor) != UFORM_STATUS_OK) {
        printf("staging: cannot open GPU 0: %s\n", uform_last_error());
        return 1;
    }
    size_t bytes = o->staging_mib << 20;
    uform_arena_t *arena = NULL;
    void *device_pointer = NULL;
    int failed = uform_arena_new_in(executor, bytes, &arena) != UFORM_STATUS_OK ||
                 uform_arena_allocate(arena, bytes, 0, &device_pointer) != UFORM_STATUS_OK;
    if (failed) printf("staging: no %zu MiB on GPU 0: %s\n", o->staging_mib, uform_last_error());

    /* The raw side: the driver's entry points through uform's loader, on GPU 0's primary context. */
    raw_t raw = {0};
    const uform__cuda_t *driver = NULL;
    void *pinned = NULL, *pageable = NULL;
    uform_cuContext context = NULL;
    if (!failed) {
        failed = uform__cuda_execution(&raw.api) != UFORM_STATUS_OK || uform__cuda_get(&driver) != UFORM_STATUS_OK;
        raw.device = failed ? 0 : driver->devices[0].handle;
        failed = failed || raw.api->cuDevicePrimaryCtxRetain(&context, raw.device) != UFORM_CUDA_SUCCESS ||
                 raw.api->cuCtxSetCurrent(context) != UFORM_CUDA_SUCCESS ||
                 raw.api->cuStreamCreate(&raw.stream, UFORM_CU_STREAM_NON_BLOCKING) != UFORM_CUDA_SUCCESS ||
                 raw.api->cuMemHostAlloc(&pinned, bytes, UFORM_CU_MEMHOSTALLOC_PORTABLE) != UFORM_CUDA_SUCCESS;
        pageable = failed ? NULL : malloc(bytes);
        if (failed || !pageable) {
            printf("staging: cannot set up the raw copies (%s)\n", uform_last_error());
            failed = 1;
        }
    }
    figures_t up = {0}, down = {0};
    if (!failed) {
        memset(pageable, 1, bytes); /* fault the pages in before anything is timed */
        memset(pinned, 1, bytes);
        failed = measure(o, executor, &raw, 1, device_pointer, pinned, pageable, bytes, &up) ||
                 measure(o, executor, &raw, 0, device_pointer, pinned, pageable, bytes, &down);
    }
    if (!failed) {
        const char *library = getenv("UFORM_CUDA_LIBRARY");
        printf("staging: %zu MiB of pageable memory, GPU 0 (%s), %zu host threads, best of %d%s%s\n", o->staging_mib,
               gpu.name, uform_executor_threads(executor), o->staging_reps, library ? ", driver " : "",
               library ? library : "");
        printf("%-16s %14s %14s %14s %16s\n", "direction", "raw pinned", "raw pageable", "uform staged",
               "staged/pinned");
        printf("%-16s %9.2f GB/s %9.2f GB/s %9.2f GB/s %15.2fx\n", "host to device", up.pinned, up.pageable, up.staged,
               up.pinned > 0 ? up.staged / up.pinned : 0);
        printf("%-16s %9.2f GB/s %9.2f GB/s %9.2f GB/s %15.2fx\n", "device to host", down.pinned, down.pageable,
               down.staged, down.pinned > 0 ? down.staged / down.pinned : 0);
    }
    if (raw.stream) raw.api->cuStreamDestroy(raw.stream);
    if (pinned) raw.api->cuMemFreeHost(pinned);
    if (context) raw.api->cuDevicePrimaryCtxRelease(raw.device);
    free(pageable);
    uform_arena_free(arena);
    uform_executor_free(executor);
    return failed;
}
