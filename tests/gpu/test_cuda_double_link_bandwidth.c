/* The CUDA driver test double's `link bandwidth=`: an async copy takes bytes / bandwidth seconds
 * on its stream's thread, so a test can watch host work overlap a DMA, as double buffering
 * needs. At 1G (2^30 bytes per second) a 64 MiB copy takes 62.5 ms each way; the caller's
 * enqueue does not pay it. */
#include <string.h>
#include <time.h>

#include "cuda_double_driver.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(void) {
    cuda_double_t cu = cuda_double_open("device memory=256M\nlink bandwidth=1G");
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    enum { BYTES = 64 << 20 };
    const double copy_ms = 62.5, slack_ms = 2.5; /* clock granularity; the sleep itself never ends early */
    uform_cuDevicePtr device_memory = 0;
    CHECK_CU(cu.cuMemAlloc(&device_memory, BYTES), UFORM_CUDA_SUCCESS);
    unsigned char *source = NULL, *back = NULL;
    CHECK_CU(cu.cuMemHostAlloc((void **)&source, BYTES, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemHostAlloc((void **)&back, BYTES, 0), UFORM_CUDA_SUCCESS);
    for (size_t i = 0; i < BYTES; i++) source[i] = (unsigned char)(i * 131u >> 7);
    uform_cuStream stream = NULL;
    uform_cuEvent copied = NULL;
    CHECK_CU(cu.cuStreamCreate(&stream, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&copied, UFORM_CU_EVENT_DISABLE_TIMING), UFORM_CUDA_SUCCESS);

    /* Held behind a gate, the copy is queued and the caller goes on: its time is the stream's. */
    gate_t gate = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &gate), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyHtoDAsync(device_memory, source, BYTES, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(copied, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(copied), UFORM_CUDA_ERROR_NOT_READY);
    double opened = now_ms();
    gate_open(&gate);
    /* The host works while the DMA runs: the copy has 62.5 ms to go, so the first look finds it
     * still in flight (only a caller stalled that long could miss it); meanwhile the host
     * clears the buffer the copy back will fill, and then waits for the copy. */
    CHECK_CU(cu.cuEventQuery(copied), UFORM_CUDA_ERROR_NOT_READY);
    memset(back, 0, BYTES);
    CHECK_CU(cu.cuEventSynchronize(copied), UFORM_CUDA_SUCCESS);
    double took = now_ms() - opened;
    CHECK_CU(cu.cuEventQuery(copied), UFORM_CUDA_SUCCESS);
    if (took < copy_ms - slack_ms) TEST_FAIL_("a 64 MiB copy at 1G/s took %.1f ms, not >= %.1f", took, copy_ms);

    /* Device to host, unheld: cuStreamSynchronize waits out the link too, and the bytes arrive. */
    double started = now_ms();
    CHECK_CU(cu.cuMemcpyDtoHAsync(back, device_memory, BYTES, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(stream), UFORM_CUDA_SUCCESS);
    took = now_ms() - started;
    if (took < copy_ms - slack_ms) TEST_FAIL_("a 64 MiB copy back took %.1f ms, not >= %.1f", took, copy_ms);
    CHECK(memcmp(source, back, BYTES) == 0);

    /* Two copies in a row on one stream take twice as long: the link time is per copy. */
    started = now_ms();
    CHECK_CU(cu.cuMemcpyHtoDAsync(device_memory, source, BYTES / 2, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyHtoDAsync(device_memory + BYTES / 2, source, BYTES / 2, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(stream), UFORM_CUDA_SUCCESS);
    took = now_ms() - started;
    if (took < copy_ms - slack_ms) TEST_FAIL_("two 32 MiB copies took %.1f ms, not >= %.1f", took, copy_ms);

    CHECK_CU(cu.cuEventDestroy(copied), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFreeHost(source), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFreeHost(back), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFree(device_memory), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
