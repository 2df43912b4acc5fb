/* A staged copy's host CPU time is its memcpy's and little more: the thread waiting for a DMA
 * blocks (CU_EVENT_BLOCKING_SYNC events) instead of spinning its CPU for the DMA's length. The
 * double's link (`link bandwidth=8M`) makes each 16 MiB DMA last 2 s of wall time, which a
 * spinning wait would spend on the CPU (the double spins on events without the flag, as cuda.h
 * says the driver does); the process's CPU time (getrusage) over a copy each way must stay under
 * 100 ms (300 ms under a sanitizer), which even a spin given a sixth of a CPU by a loaded machine
 * exceeds while a 16 MiB memcpy stays below it. Waiting for a stream (stream_wait, 1 s of queued host work) is held
 * to 50 ms likewise. The figures are printed for the record. */
#include <stdio.h>

#include "vram/vram_double.h"
#include "gpu/cpu_time.h"

/* Host work a kernel would be: a host function holding the stream for `ms` milliseconds of
 * sleep, so a drain waits that long with nothing for the CPU to do. */
static void sleep_on_stream(void *ms) {
    struct timespec t = {.tv_sec = 0, .tv_nsec = (long)(*(const int *)ms) * 1000000L};
    nanosleep(&t, NULL);
}

typedef struct drain_t {
    const cuda_double_t *cu;
    int ms;
} drain_t;

static uform_status_t enqueue_sleep(void *context, const uform_device_slot_t *slot) {
    drain_t *drain = context;
    return drain->cu->cuLaunchHostFunc((uform_cuStream)slot->stream, sleep_on_stream, &drain->ms) == UFORM_CUDA_SUCCESS
               ? UFORM_STATUS_OK
               : UFORM_STATUS_DEVICE_FAULT;
}

/* A sanitizer instruments the 16 MiB memcpy itself: under ThreadSanitizer one CI run read 112 ms of
 * CPU for a copy whose wait blocked. A spinning wait still spends most of the 2000 ms DMA, far
 * above either bound. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) /* as test_executor_fork.c tells */
#define COPY_CPU_MS 300.0
#else
#define COPY_CPU_MS 100.0
#endif

int main(void) {
    enum { BYTES = 16 << 20 };
    const double dma_ms = 2000.0, copy_cpu_ms = COPY_CPU_MS; /* 16 MiB at 8 MiB/s */
    cuda_double_t cu = vram_double_open("device memory=512M\nlink bandwidth=8M");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, BYTES + (1u << 20), &arena));
    void *slot = NULL, *target = NULL;
    CHECK_OK(uform_arena_allocate(arena, BYTES, 256, &slot));
    CHECK_OK(uform_arena_device_pointer(arena, 0, slot, &target));
    unsigned char *host = malloc(BYTES), *back = malloc(BYTES);
    CHECK(host && back);
    fill(host, BYTES, 7);
    memset(back, 0, BYTES);
    /* One copy each way first, so the staging is grown and touched (and, under a sanitizer, its
     * shadow mapped) outside the measurement. */
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, target, host, BYTES));
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, target, BYTES));
    memset(back, 0, BYTES);

    double cpu0 = cpu_ms(), wall0 = wall_ms();
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, target, host, BYTES));
    double cpu1 = cpu_ms(), wall1 = wall_ms();
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, target, BYTES));
    double cpu2 = cpu_ms(), wall2 = wall_ms();
    CHECK_EQ_INT(first_mismatch(back, BYTES, 7), BYTES);
    printf("staged copy of 16 MiB at 8 MiB/s: to device %.0f ms wall, %.0f ms CPU; to host %.0f ms wall, %.0f ms CPU\n",
           wall1 - wall0, cpu1 - cpu0, wall2 - wall1, cpu2 - cpu1);
    CHECK(wall1 - wall0 >= dma_ms * 0.95 && wall2 - wall1 >= dma_ms * 0.95); /* the link was in the way */
    if (cpu1 - cpu0 > copy_cpu_ms || cpu2 - cpu1 > copy_cpu_ms)
        TEST_FAIL_("a staged copy spent %.0f / %.0f ms of CPU over a %.0f ms DMA: its wait spins", cpu1 - cpu0,
                   cpu2 - cpu1, dma_ms);

    /* A device function's 1 s of stream work, which for_devices waits for (stream_wait)
     * before it returns, spends next to no CPU either. */
    drain_t drain = {.cu = &cu, .ms = 999};
    double cpu3 = cpu_ms(), wall3 = wall_ms();
    CHECK_OK(uform_executor_for_devices(executor, NULL, enqueue_sleep, &drain));
    double cpu4 = cpu_ms(), wall4 = wall_ms();
    printf("for_devices over 1 s of stream work: %.0f ms wall, %.0f ms CPU\n", wall4 - wall3, cpu4 - cpu3);
    CHECK(wall4 - wall3 >= 950);
    if (cpu4 - cpu3 > 50)
        TEST_FAIL_("waiting for the stream spent %.0f ms of CPU over %.0f ms: its wait spins", cpu4 - cpu3,
                   wall4 - wall3);

    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    free(host);
    free(back);
    TEST_DONE();
}
