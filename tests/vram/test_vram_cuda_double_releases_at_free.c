/* uform_executor_free releases every buffer itself, even where another holder keeps the
 * devices' primary contexts alive (PyTorch does, in a real process): here the test holds its own
 * retain of both, so the CUDA driver test double cannot reclaim the executor's memory with the
 * context, and whatever free forgot shows: device scratch and arena memory in cuMemGetInfo, the
 * pinned staging in cuPointerGetAttribute (a freed pinned range is no longer the driver's). */
#include "vram_double.h"

static void *scratch[2], *staging[2];
static uform_executor_t *executor;

static uform_status_t grow_buffers(void *context, const uform_device_slot_t *slot) {
    (void)context;
    uform_status_t status = uform_executor_device_scratch(executor, slot->device, 1u << 20, &scratch[slot->device]);
    if (status == UFORM_STATUS_OK)
        status = uform_executor_staging(executor, slot->device, 1u << 20, &staging[slot->device]);
    return status;
}

int main(void) {
    cuda_double_t cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    uform_cuContext held[2] = {NULL, NULL};
    for (int d = 0; d < 2; d++) CHECK_CU(cu.cuDevicePrimaryCtxRetain(&held[d], d), UFORM_CUDA_SUCCESS);

    executor = vram_executor(NULL, 0, 0);
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 4u << 20, &arena));
    void *target = NULL;
    CHECK_OK(uform_arena_allocate(arena, 3u << 20, 0, &target));
    static unsigned char host[3u << 20];
    fill(host, sizeof host, 3);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 1, target, host, sizeof host)); /* staging grows */
    /* After the copy: the buffers as they are now (growing frees the old ones). */
    CHECK_OK(uform_executor_for_devices(executor, NULL, grow_buffers, NULL));
    for (int d = 0; d < 2; d++) CHECK(vram_device_used(&cu, d) >= (5u << 20)); /* scratch + arena */

    /* Pinned as the driver sees it (asked in each device's own context), before. */
    unsigned type = 0;
    for (int d = 0; d < 2; d++) {
        CHECK_CU(cu.cuCtxSetCurrent(held[d]), UFORM_CUDA_SUCCESS);
        CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uform_cuDevicePtr)staging[d]),
                 UFORM_CUDA_SUCCESS);
    }

    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    for (int d = 0; d < 2; d++) {
        CHECK_EQ_INT((int)vram_device_used(&cu, d), 0);
        CHECK_CU(cu.cuCtxSetCurrent(held[d]), UFORM_CUDA_SUCCESS);
        CHECK_CU(cu.cuPointerGetAttribute(&type, UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (uform_cuDevicePtr)staging[d]),
                 UFORM_CUDA_ERROR_INVALID_VALUE);
    }
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    for (int d = 0; d < 2; d++) CHECK_CU(cu.cuDevicePrimaryCtxRelease(d), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
