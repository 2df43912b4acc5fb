/* GPUs without multicast (the double's default, as most GPUs sit on no NVSwitch), even
 * NVLink peers: the extent is 1 and the probe says no, naming the driver's
 * CUDA_ERROR_NOT_SUPPORTED, with nothing left allocated; VRAM work goes on. */
#include "mesh/mesh_multicast_double.h"

static const char config[] = "device nvlink=0\ndevice nvlink=0\ndevice nvlink=0\ndevice nvlink=0\n";

int main(void) {
    cuda_double_t cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    char why[256];
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 1);
    CHECK(!probe_leaves_nothing(&cu, 4, executor, why, sizeof why));
    CHECK_WHY_NAMES(why, "answered CUDA_ERROR_NOT_SUPPORTED");
    CHECK_WHY_NAMES(why, "cuMulticast");
    /* A short reason buffer is cut, never overrun (probe_leaves_nothing checks the end). */
    char short_why[8];
    CHECK(!probe_leaves_nothing(&cu, 4, executor, short_why, sizeof short_why));
    CHECK_EQ_INT(strlen(short_why), sizeof short_why - 1);

    /* The executor still works. */
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    void *slot = NULL, *target = NULL;
    CHECK_OK(uform_arena_allocate(arena, 4096, 256, &slot));
    CHECK_OK(uform_arena_device_pointer(arena, 3, slot, &target));
    unsigned char host[4096], back[4096];
    fill(host, sizeof host, 7);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 3, target, host, sizeof host));
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 3, target, sizeof back));
    CHECK_EQ_INT(first_mismatch(back, sizeof back, 7), sizeof back);
    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
