/* Growing a device's staging (or scratch) from its device function while the stream still reads
 * the old buffer, against the CUDA driver test double: the growth must wait for the stream
 * before it frees the old buffer (vram.h: the buffers grow to a high-water mark; nothing of the
 * stream's may still use the one it replaces). The device function queues, behind a gate, a DMA
 * from its 1 MiB staging (and from device scratch to host), then asks for 4 MiB of each; a
 * thread opens the gate 50 ms later. Freed too early, the DMA reads freed memory: a crash, an
 * ASan report, or a wrong pattern on the device.
 * Two things keep it safe, and this checks the whole: uform waits for the stream before it
 * frees, and the driver's own frees wait for the context's queued work (cuMemFree is documented
 * to; the double does so for cuMemFreeHost too). Either alone suffices here, so removing uform's
 * wait alone does not fail this test; a change to a free that does not synchronise (such as
 * cuMemFreeAsync) without the wait would. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vram_double.h"

#define SMALL (1u << 20)
#define LARGE (4u << 20)

static cuda_double_t cu;
static uform_executor_t *executor;
static gate_t gate = GATE_INIT;
static void *target;                  /* SMALL bytes on device 0, from an arena */
static unsigned char readback[SMALL]; /* the scratch's bytes, copied out by the stream */

static void *open_later(void *argument) {
    (void)argument;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    gate_open(&gate);
    return NULL;
}

static uform_status_t grow_under_dma(void *context, const uform_device_slot_t *slot) {
    (void)context;
    if (slot->device != 0) return UFORM_STATUS_OK;
    void *staging = NULL, *scratch = NULL;
    uform_status_t status = uform_executor_staging(executor, 0, SMALL, &staging);
    if (status == UFORM_STATUS_OK) status = uform_executor_device_scratch(executor, 0, SMALL, &scratch);
    if (status != UFORM_STATUS_OK) return status;
    fill(staging, SMALL, 11);
    uform_cuStream stream = (uform_cuStream)slot->stream;
    CHECK_CU(cu.cuMemcpyHtoDAsync((uform_cuDevicePtr)(uintptr_t)scratch, staging, SMALL, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &gate), UFORM_CUDA_SUCCESS);
    /* Behind the gate: both old buffers are read. */
    CHECK_CU(cu.cuMemcpyHtoDAsync((uform_cuDevicePtr)(uintptr_t)target, staging, SMALL, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(readback, (uform_cuDevicePtr)(uintptr_t)scratch, SMALL, stream), UFORM_CUDA_SUCCESS);
    pthread_t opener;
    CHECK(pthread_create(&opener, NULL, open_later, NULL) == 0);
    void *larger_staging = NULL, *larger_scratch = NULL;
    status = uform_executor_staging(executor, 0, LARGE, &larger_staging);
    if (status == UFORM_STATUS_OK) status = uform_executor_device_scratch(executor, 0, LARGE, &larger_scratch);
    pthread_join(opener, NULL);
    CHECK(larger_staging != staging && larger_scratch != scratch); /* they did grow */
    return status;
}

int main(void) {
    cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    executor = vram_executor(NULL, 0, 0);
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 2 * SMALL, &arena));
    CHECK_OK(uform_arena_allocate(arena, SMALL, 0, &target));
    CHECK_OK(uform_executor_for_devices(executor, NULL, grow_under_dma, NULL));
    CHECK_EQ_INT((int)first_mismatch(readback, SMALL, 11), (int)SMALL);
    static unsigned char back[SMALL];
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, target, SMALL));
    CHECK_EQ_INT((int)first_mismatch(back, SMALL, 11), (int)SMALL);
    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
