/* A CUDA driver lacking the multicast entry points (the double configured not to resolve
 * cuMulticastCreate and cuDeviceCanAccessPeer, as a driver older than 12.1 or a stripped one
 * might): VRAM executors still work, the extent is 1 (peers cannot be asked), and the probe
 * says no, naming the missing entry point, every time. */
#include "mesh/mesh_multicast_double.h"

static const char config[] = "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "fault missing=cuMulticastCreate\nfault missing=cuDeviceCanAccessPeer\n";

int main(void) {
    cuda_double_t cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    char why[512];
    for (int attempt = 0; attempt < 2; attempt++) {
        CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 1);
        CHECK(!probe_leaves_nothing(&cu, 2, executor, why, sizeof why));
        CHECK_WHY_NAMES(why, "lacks cuMulticastCreate");
    }

    /* The executor works: a round trip through each device. */
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    void *slot = NULL;
    CHECK_OK(uform_arena_allocate(arena, 4096, 256, &slot));
    for (size_t device = 0; device < 2; device++) {
        void *target = NULL;
        CHECK_OK(uform_arena_device_pointer(arena, device, slot, &target));
        unsigned char host[4096], back[4096];
        fill(host, sizeof host, (unsigned)device);
        CHECK_OK(uform_executor_copy_to_device(executor, NULL, device, target, host, sizeof host));
        CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, device, target, sizeof back));
        CHECK_EQ_INT(first_mismatch(back, sizeof back, (unsigned)device), sizeof back);
    }
    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
