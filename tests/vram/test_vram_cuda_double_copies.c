/* Staged copies against the CUDA driver test double: pageable memory through the pinned
 * staging in many chunks (UFORM_STAGING_CHUNK_BYTES makes chunks small), sizes at and around
 * chunk boundaries, pinned and registered memory going straight, deferred copies with progress
 * counting bytes, and bad input. The device side is checked from outside uform, through the
 * double's own cuMemcpy. */
#include "vram_double.h"

static const char config[] = "device cc=9.0 memory=256M\ndevice cc=8.0 memory=256M\n";
static cuda_double_t cu;

#define CHUNK (64u * 1024u)

/* Reads device memory straight through the double (pinned: no staging of ours involved). */
static void read_device(uform_cuDevicePtr source, void *destination, size_t bytes, int device) {
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, device), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    uform_cuStream stream = NULL;
    CHECK_CU(cu.cuStreamCreate(&stream, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(destination, source, bytes, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(device), UFORM_CUDA_SUCCESS);
}

static _Atomic size_t last_done, reports;
static size_t expected_total;
static void on_progress(void *context, size_t done, size_t total) {
    (void)context;
    CHECK_EQ_INT(total, expected_total);
    CHECK(done >= atomic_load(&last_done) && done <= total);
    atomic_store(&last_done, done);
    atomic_fetch_add(&reports, 1);
}

int main(void) {
    setenv("UFORM_STAGING_CHUNK_BYTES", "65536", 1);
    cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 32u << 20, &arena));

    /* Round trips of pageable memory, one chunk and many, odd sizes around the boundaries. */
    static const size_t sizes[] = {1, 255, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 17, 20u << 20};
    unsigned char *host = malloc(20u << 20), *back = malloc(20u << 20), *check = malloc(20u << 20);
    CHECK(host && back && check);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t bytes = sizes[s];
        void *slot0 = NULL;
        CHECK_OK(uform_arena_allocate(arena, bytes, 256, &slot0));
        for (size_t device = 0; device < 2; device++) {
            void *target = NULL;
            CHECK_OK(uform_arena_device_pointer(arena, device, slot0, &target));
            fill(host, bytes, (unsigned)(s * 2 + device));
            CHECK_OK(uform_executor_copy_to_device(executor, NULL, device, target, host, bytes));
            memset(check, 0, bytes);
            read_device((uform_cuDevicePtr)(uintptr_t)target, check, bytes, (int)device);
            CHECK_EQ_INT(first_mismatch(check, bytes, (unsigned)(s * 2 + device)), bytes);
            memset(back, 0, bytes);
            CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, device, target, bytes));
            CHECK_EQ_INT(first_mismatch(back, bytes, (unsigned)(s * 2 + device)), bytes);
        }
        uform_arena_free(arena);
        CHECK_OK(uform_arena_new_in(executor, 32u << 20, &arena));
    }

    /* Pinned and registered host memory go straight: no staging grows for them. (The staging's
     * size is not visible; the double answers cuPointerGetAttribute for these ranges.) */
    void *pinned = NULL;
    CHECK_CU(cu.cuMemHostAlloc(&pinned, 3 * CHUNK, UFORM_CU_MEMHOSTALLOC_PORTABLE), UFORM_CUDA_SUCCESS);
    fill(pinned, 3 * CHUNK, 77);
    void *slot = NULL;
    CHECK_OK(uform_arena_allocate(arena, 3 * CHUNK, 0, &slot));
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, slot, pinned, 3 * CHUNK));
    memset(back, 0, 3 * CHUNK);
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, slot, 3 * CHUNK));
    CHECK_EQ_INT(first_mismatch(back, 3 * CHUNK, 77), 3 * CHUNK);
    memset(pinned, 0, 3 * CHUNK);
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, (char *)pinned + 5, 0, (char *)slot + 5, 3 * CHUNK - 5));
    CHECK_EQ_INT(((unsigned char *)pinned)[5], pattern(5, 77));
    CHECK_CU(cu.cuMemFreeHost(pinned), UFORM_CUDA_SUCCESS);
    unsigned char *registered = aligned_alloc(4096, 4 * CHUNK);
    CHECK(registered);
    CHECK_CU(cu.cuMemHostRegister(registered, 4 * CHUNK, 0), UFORM_CUDA_SUCCESS);
    fill(registered, 4 * CHUNK, 91);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, slot, registered, 3 * CHUNK));
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, slot, 3 * CHUNK));
    CHECK_EQ_INT(first_mismatch(back, 3 * CHUNK, 91), 3 * CHUNK);
    CHECK_CU(cu.cuMemHostUnregister(registered), UFORM_CUDA_SUCCESS);
    free(registered);

    /* Deferred, with progress in bytes ending at the total. */
    size_t bytes = 10 * CHUNK + 3;
    void *deferred_slot = NULL;
    CHECK_OK(uform_arena_allocate(arena, bytes, 0, &deferred_slot));
    fill(host, bytes, 5);
    uform_deferred_t *deferred = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &deferred;
    call.progress = on_progress;
    expected_total = bytes;
    CHECK_OK(uform_executor_copy_to_device(executor, &call, 0, deferred_slot, host, bytes));
    CHECK(deferred != NULL);
    CHECK_OK(uform_deferred_wait(deferred, -1));
    size_t done = 0, total = 0;
    CHECK_OK(uform_deferred_progress(deferred, &done, &total));
    CHECK_EQ_INT(done, bytes);
    CHECK_EQ_INT(total, bytes);
    CHECK_EQ_INT(atomic_load(&last_done), bytes);
    CHECK(atomic_load(&reports) >= 5); /* one per chunk or so, not one in all */
    uform_deferred_free(deferred);
    atomic_store(&last_done, 0);
    memset(back, 0, bytes);
    CHECK_OK(uform_executor_copy_to_host(executor, &call, back, 0, deferred_slot, bytes));
    CHECK_OK(uform_deferred_wait(deferred, -1));
    uform_deferred_free(deferred);
    CHECK_EQ_INT(first_mismatch(back, bytes, 5), bytes);

    /* Bad input: clear statuses, nothing copied, the executor fine after. */
    CHECK_STATUS(uform_executor_copy_to_device(executor, NULL, 2, slot, host, 16), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("device 2 of 2");
    CHECK_STATUS(uform_executor_copy_to_device(executor, NULL, 0, NULL, host, 16), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_copy_to_host(executor, NULL, NULL, 0, slot, 16), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_copy_to_device(NULL, NULL, 0, slot, host, 16), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, NULL, NULL, 0)); /* nothing to do */
    /* A device range the driver refuses: past the end of the arena's reservation. */
    CHECK_STATUS(uform_executor_copy_to_device(executor, NULL, 0, (char *)slot + (32u << 20), host, 4 * CHUNK),
                 UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("CUDA_ERROR_INVALID_VALUE");
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, slot, host, 16));

    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    free(host);
    free(back);
    free(check);
    TEST_DONE();
}
