/* Device functions against the CUDA driver test double: one per device, each with its own
 * stream and context; the call ends only once the work they enqueued has run (the double runs
 * a stream's work on a host thread, so a host function the test enqueues really is pending);
 * deferred calls and progress; failures; device scratch (limit, growth) and pinned staging. */
#include <stdatomic.h>
#include <time.h>

#include "vram_double.h"

static const char config[] = "device cc=9.0 memory=256M\ndevice cc=9.0 memory=256M\ndevice cc=9.0 memory=256M\n";

static cuda_double_t cu;

typedef struct seen_t {
    _Atomic int calls[3];
    void *streams[3];
    void *contexts[3];
    int32_t ordinals[3];
    _Atomic int finished[3]; /* set by a host function enqueued on the device's stream */
} seen_t;

static void mark_finished(void *argument) {
    struct timespec pause = {0, 20 * 1000 * 1000}; /* the stream is busy for 20 ms */
    nanosleep(&pause, NULL);
    atomic_store((_Atomic int *)argument, 1);
}

static uform_status_t record(void *context, const uform_device_slot_t *slot) {
    seen_t *seen = context;
    atomic_fetch_add(&seen->calls[slot->device], 1);
    seen->streams[slot->device] = slot->stream;
    seen->contexts[slot->device] = slot->native_context;
    seen->ordinals[slot->device] = slot->ordinal;
    /* The device's context is current on this thread. */
    uform_cuContext current = NULL;
    CHECK_CU(cu.cuCtxGetCurrent(&current), UFORM_CUDA_SUCCESS);
    CHECK(current == slot->native_context);
    CHECK_EQ_INT(slot->vendor, UFORM_GPU_VENDOR_NVIDIA);
    CHECK(slot->thread < 64);
    CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, mark_finished, &seen->finished[slot->device]),
             UFORM_CUDA_SUCCESS);
    return UFORM_STATUS_OK;
}

static uform_status_t fail_on_one(void *context, const uform_device_slot_t *slot) {
    seen_t *seen = context;
    CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, mark_finished, &seen->finished[slot->device]),
             UFORM_CUDA_SUCCESS);
    return slot->device == 1 ? UFORM_STATUS_IO_ERROR : UFORM_STATUS_OK;
}

typedef struct scratch_case_t {
    uform_executor_t *executor;
    size_t bytes;
    uform_status_t status;
    void *pointer;
    void *staging;
} scratch_case_t;

static uform_status_t take_scratch(void *context, const uform_device_slot_t *slot) {
    scratch_case_t *c = &((scratch_case_t *)context)[slot->device];
    c->status = uform_executor_device_scratch(c->executor, slot->device, c->bytes, &c->pointer);
    /* Another device's buffers are not this function's to touch. */
    void *other = NULL;
    CHECK_STATUS(uform_executor_device_scratch(c->executor, (slot->device + 1) % 3, 1, &other),
                 UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_OK(uform_executor_staging(c->executor, slot->device, 4096, &c->staging));
    memset(c->staging, 0x5A, 4096); /* pinned host memory: the host may write it */
    /* The scratch is device memory of this device: a memset on the stream accepts it. */
    if (c->status == UFORM_STATUS_OK)
        CHECK_CU(cu.cuMemsetD8Async((uform_cuDevicePtr)(uintptr_t)c->pointer, 0, c->bytes, (uform_cuStream)slot->stream),
                 UFORM_CUDA_SUCCESS);
    return UFORM_STATUS_OK;
}

static _Atomic size_t last_done, reports;
static void count_progress(void *context, size_t done, size_t total) {
    (void)context;
    CHECK_EQ_INT(total, 3);
    CHECK(done >= atomic_load(&last_done));
    atomic_store(&last_done, done);
    atomic_fetch_add(&reports, 1);
}

int main(void) {
    cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 8u << 20);

    /* Synchronous: every device once, distinct streams and contexts, and all work drained. */
    seen_t seen = {0};
    CHECK_OK(uform_executor_for_devices(executor, NULL, record, &seen));
    for (int d = 0; d < 3; d++) {
        CHECK_EQ_INT(atomic_load(&seen.calls[d]), 1);
        CHECK_EQ_INT(atomic_load(&seen.finished[d]), 1);
        CHECK_EQ_INT(seen.ordinals[d], d);
        CHECK(seen.streams[d] != NULL && seen.contexts[d] != NULL);
        for (int e = 0; e < d; e++) CHECK(seen.streams[d] != seen.streams[e] && seen.contexts[d] != seen.contexts[e]);
    }
    /* The streams are non-blocking: the double knows them and they are idle now. */
    for (int d = 0; d < 3; d++) {
        CHECK_CU(cu.cuCtxSetCurrent((uform_cuContext)seen.contexts[d]), UFORM_CUDA_SUCCESS);
        CHECK_CU(cu.cuStreamQuery((uform_cuStream)seen.streams[d]), UFORM_CUDA_SUCCESS);
    }
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);

    /* Deferred, with progress counting devices: finished only once the streams drained. */
    seen_t later = {0};
    uform_deferred_t *deferred = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &deferred;
    call.progress = count_progress;
    CHECK_OK(uform_executor_for_devices(executor, &call, record, &later));
    CHECK_OK(uform_deferred_wait(deferred, -1));
    for (int d = 0; d < 3; d++) CHECK_EQ_INT(atomic_load(&later.finished[d]), 1);
    size_t done = 0, total = 0;
    CHECK_OK(uform_deferred_progress(deferred, &done, &total));
    CHECK_EQ_INT(done, 3);
    CHECK_EQ_INT(total, 3);
    CHECK_EQ_INT(atomic_load(&last_done), 3);
    CHECK(atomic_load(&reports) >= 1);
    uform_deferred_free(deferred);

    /* A function's failure is the call's, and the other devices' work still drained. */
    seen_t failing = {0};
    CHECK_STATUS(uform_executor_for_devices(executor, NULL, fail_on_one, &failing), UFORM_STATUS_IO_ERROR);
    CHECK_ERROR_NAMES("uform_executor_for_devices");
    for (int d = 0; d < 3; d++) CHECK_EQ_INT(atomic_load(&failing.finished[d]), 1);
    /* ...and the executor goes on. */
    seen_t again = {0};
    CHECK_OK(uform_executor_for_devices(executor, NULL, record, &again));

    /* Scratch: within the 8 MiB limit it grows; past it OUT_OF_MEMORY, and the old buffer stays. */
    scratch_case_t cases[3];
    for (int d = 0; d < 3; d++) cases[d] = (scratch_case_t){executor, (size_t)(d + 1) << 20, UFORM_STATUS_OK, NULL, NULL};
    CHECK_OK(uform_executor_for_devices(executor, NULL, take_scratch, cases));
    void *first_pointers[3];
    for (int d = 0; d < 3; d++) {
        CHECK_OK(cases[d].status);
        CHECK(cases[d].pointer != NULL && ((uintptr_t)cases[d].pointer & 255) == 0);
        first_pointers[d] = cases[d].pointer;
    }
    CHECK(vram_device_used(&cu, 0) >= (1u << 20));
    /* The same size again: the same buffer (a high-water mark, no reallocation). */
    CHECK_OK(uform_executor_for_devices(executor, NULL, take_scratch, cases));
    for (int d = 0; d < 3; d++) CHECK(cases[d].pointer == first_pointers[d]);
    cases[1].bytes = 9u << 20; /* past the limit */
    CHECK_OK(uform_executor_for_devices(executor, NULL, take_scratch, cases));
    CHECK_STATUS(cases[1].status, UFORM_STATUS_OUT_OF_MEMORY);
    cases[1].bytes = 2u << 20;
    CHECK_OK(uform_executor_for_devices(executor, NULL, take_scratch, cases));
    CHECK(cases[1].pointer == first_pointers[1]);
    cases[2].bytes = 8u << 20; /* exactly the limit: fine */
    CHECK_OK(uform_executor_for_devices(executor, NULL, take_scratch, cases));
    CHECK_OK(cases[2].status);

    /* Outside a device function, and bad input. */
    void *pointer = NULL;
    CHECK_STATUS(uform_executor_device_scratch(executor, 0, 16, &pointer), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("from the device function");
    CHECK_STATUS(uform_executor_staging(executor, 0, 16, &pointer), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_device_scratch(executor, 0, 16, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_device_scratch(NULL, 0, 16, &pointer), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_devices(executor, NULL, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_for_devices(NULL, NULL, record, &seen), UFORM_STATUS_INVALID_ARGUMENT);
    uform_executor_t *ram = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &ram));
    CHECK_STATUS(uform_executor_for_devices(ram, NULL, record, &seen), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("RAM executor");
    CHECK_OK(uform_executor_free(ram));

    CHECK_OK(uform_executor_free(executor));
    for (int d = 0; d < 3; d++) CHECK_EQ_INT(vram_device_used(&cu, d), 0); /* scratch given back */
    TEST_DONE();
}
