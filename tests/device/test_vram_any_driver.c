/* The VRAM executor end to end against whatever CUDA driver loads: the real one on a machine
 * with a GPU (scripts/device-check), or, registered a second time in tests.cmake, the CUDA driver
 * test double. The test asks nothing of the driver beyond its documented semantics, so a
 * faithful double and a real GPU must both pass it. Without any GPU it is skipped (exit 77). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_loader.h"
#include "test.h"

static const uform__cuda_execution_api_t *cu;

#define CHECK_CU_OK(call) CHECK_EQ_INT((call), UFORM_CUDA_SUCCESS)

typedef struct device_case_t {
    uform_executor_t *executor;
    unsigned char *staging[64];
    uform_status_t over_limit[64];
    void *context0; /* device 0's primary context, for a stream of the test's own */
} device_case_t;

/* Fills 32 MiB of device scratch with device+1 on the stream, then brings 4 KiB of it back into
 * the pinned staging: both only happen once the stream runs, after this function returned. */
static uform_status_t fill_scratch(void *context, const uform_device_slot_t *slot) {
    device_case_t *c = context;
    void *scratch = NULL, *staging = NULL;
    uform_status_t status = uform_executor_device_scratch(c->executor, slot->device, 32u << 20, &scratch);
    if (status != UFORM_STATUS_OK) return status;
    c->over_limit[slot->device] = uform_executor_device_scratch(c->executor, slot->device, 65u << 20, &scratch);
    status = uform_executor_staging(c->executor, slot->device, 4096, &staging);
    if (status != UFORM_STATUS_OK) return status;
    c->staging[slot->device] = staging;
    if (slot->device == 0) c->context0 = slot->native_context;
    memset(staging, 0, 4096);
    uform_cuStream stream = (uform_cuStream)slot->stream;
    if (cu->cuMemsetD8Async((uform_cuDevicePtr)(uintptr_t)scratch, (unsigned char)(slot->device + 1), 32u << 20,
                            stream) != UFORM_CUDA_SUCCESS ||
        cu->cuMemcpyDtoHAsync(staging, (uform_cuDevicePtr)(uintptr_t)scratch + 4096, 4096, stream) != UFORM_CUDA_SUCCESS)
        return UFORM_STATUS_DEVICE_FAULT;
    return UFORM_STATUS_OK;
}

static _Atomic size_t progress_last;
static void on_progress(void *context, size_t done, size_t total) {
    CHECK(done <= total && done >= atomic_load(&progress_last));
    atomic_store(&progress_last, done);
}

static unsigned char byte_at(size_t i, size_t seed) { return (unsigned char)(i * 131 + seed * 7 + (i >> 12)); }

int main(void) {
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    if (!count) {
        printf("SKIPPED: no GPU (%s)\n", uform__cuda_note());
        return 77;
    }
    if (count > 64) count = 64;
    CHECK_OK(uform__cuda_execution(&cu));
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 64u << 20,
                                     0, &executor));
    size_t devices = uform_executor_devices(executor);
    CHECK(devices >= 1);
    printf("%zu GPUs, %zu host threads, GPU class %s\n", devices, uform_executor_threads(executor),
           uform_gpu_class_name(uform_executor_gpu_class(executor)));

    /* Device functions: scratch within and past the 64 MiB limit, staging, work on the stream. */
    device_case_t c = {.executor = executor};
    CHECK_OK(uform_executor_for_devices(executor, NULL, fill_scratch, &c));
    for (size_t d = 0; d < devices; d++) {
        CHECK_STATUS(c.over_limit[d], UFORM_STATUS_OUT_OF_MEMORY);
        for (size_t i = 0; i < 4096; i++)
            if (c.staging[d][i] != d + 1) TEST_FAIL_("device %zu staging byte %zu is %u", d, i, c.staging[d][i]);
    }

    /* Staged copies, pageable memory, sizes around the chunk and large, on every device. */
    /* 256 MiB on a real GPU; the double's run (tests.cmake) asks for less, as sanitizers slow it. */
    const char *mib = getenv("UFORM_TEST_COPY_MIB");
    size_t largest = (size_t)(mib && atoi(mib) >= 16 ? atoi(mib) : 256) << 20;
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, largest, &arena));
    CHECK_EQ_INT(uform_arena_devices(arena), devices);
    void *slot = NULL;
    CHECK_OK(uform_arena_allocate(arena, largest, 256, &slot));
    unsigned char *host = malloc(largest), *back = malloc(largest);
    CHECK(host && back);
    const size_t sizes[] = {1, 4097, (8u << 20) - 1, (8u << 20) + 3, largest};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t d = 0; d < devices; d++) {
            size_t bytes = sizes[s];
            void *target = NULL;
            CHECK_OK(uform_arena_device_pointer(arena, d, slot, &target));
            for (size_t i = 0; i < bytes; i++) host[i] = byte_at(i, s + d);
            memset(back, 0, bytes);
            CHECK_OK(uform_executor_copy_to_device(executor, NULL, d, target, host, bytes));
            CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, d, target, bytes));
            if (memcmp(host, back, bytes)) TEST_FAIL_("round trip of %zu bytes on device %zu differs", bytes, d);
        }

    /* Deferred, with progress in bytes. */
    uform_deferred_t *deferred = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &deferred;
    call.progress = on_progress;
    CHECK_OK(uform_executor_copy_to_device(executor, &call, 0, slot, host, largest));
    CHECK_OK(uform_deferred_wait(deferred, 60));
    size_t done = 0, total = 0;
    CHECK_OK(uform_deferred_progress(deferred, &done, &total));
    CHECK_EQ_INT(done, largest);
    CHECK_EQ_INT(atomic_load(&progress_last), largest);
    uform_deferred_free(deferred);

    /* A stream of the caller's own (a framework's) ordered after a deferred copy: the copy back
     * queued on it reads only what the copy wrote, whether or not the copy finished by then. */
    for (size_t i = 0; i < largest; i++) host[i] = byte_at(i, 99);
    memset(back, 0, largest);
    CHECK_CU_OK(cu->cuCtxSetCurrent((uform_cuContext)c.context0));
    uform_cuStream consumer = NULL;
    CHECK_CU_OK(cu->cuStreamCreate(&consumer, UFORM_CU_STREAM_NON_BLOCKING));
    uform_call_t ordered = UFORM_CALL_INIT;
    ordered.deferred = &deferred;
    CHECK_OK(uform_executor_copy_to_device(executor, &ordered, 0, slot, host, largest));
    CHECK_OK(uform_executor_order_stream(executor, 0, consumer));
    CHECK_CU_OK(cu->cuMemcpyDtoHAsync(back, (uform_cuDevicePtr)(uintptr_t)slot, largest, consumer));
    CHECK_CU_OK(cu->cuStreamSynchronize(consumer));
    if (memcmp(host, back, largest)) TEST_FAIL_("the ordered stream read %zu bytes before the copy wrote them", largest);
    CHECK_OK(uform_deferred_wait(deferred, 60));
    uform_deferred_free(deferred);
    CHECK_CU_OK(cu->cuStreamDestroy(consumer));
    CHECK_CU_OK(cu->cuCtxSetCurrent(NULL));

    /* Drain; free while the arena lives (OK, closed by the arena); the arena's free closes it. */
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    CHECK_OK(uform_executor_free(executor));
    uform_arena_free(arena);
    free(host);
    free(back);
    TEST_DONE();
}
