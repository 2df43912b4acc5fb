/* Staged copies are double-buffered: while the host copies one chunk into (or out of) the
 * pinned staging, the DMA of the neighbouring chunk is still in flight. Against the CUDA driver
 * test double with a slow emulated link (64 MiB/s: a 1 MiB chunk's DMA takes ~16 ms, the host's
 * memcpy of it well under 1 ms), a hook before each host copy asks the driver whether that
 * neighbouring DMA's event has completed. A copy that waited for each DMA before the next host
 * copy (no overlap) sees every one completed, and fails here. */
#include "gpu/vram_internal.h"
#include "vram_double.h"

#define MIB (1u << 20)
#define CHUNKS 4

static cuda_double_t cu;
static _Atomic int in_flight, asked;

static void look(const uform__gpu_device_t *device, size_t chunk, size_t chunks, bool to_device) {
    /* To the device: chunk - 1's DMA (the other half) should still run while chunk is filled.
     * To the host: chunk + 1's DMA (issued before chunk is drained) should still run. */
    size_t neighbour = to_device ? chunk - 1 : chunk + 1;
    if ((to_device && chunk == 0) || (!to_device && chunk + 1 >= chunks)) return;
    atomic_fetch_add(&asked, 1);
    /* A copy leaves no context of its own current between its driver calls: the hook makes the
     * device's current for its query (the double asks for one), and gives the thread its own back. */
    uform_cuContext previous = NULL;
    CHECK_CU(cu.cuCtxGetCurrent(&previous), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent((uform_cuContext)device->native_context), UFORM_CUDA_SUCCESS);
    uform_cuResult result = cu.cuEventQuery((uform_cuEvent)device->events[neighbour % UFORM_STAGING_BUFFERS]);
    CHECK_CU(cu.cuCtxSetCurrent(previous), UFORM_CUDA_SUCCESS);
    if (result == UFORM_CUDA_ERROR_NOT_READY) atomic_fetch_add(&in_flight, 1);
    else CHECK_CU(result, UFORM_CUDA_SUCCESS);
}

int main(void) {
    setenv("UFORM_STAGING_CHUNK_BYTES", "1048576", 1);
    cu = vram_double_open("device cc=9.0 memory=64M\nlink bandwidth=64M\n");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uform_arena_t *arena = NULL;
    void *target = NULL;
    CHECK_OK(uform_arena_new_in(executor, CHUNKS * MIB, &arena));
    CHECK_OK(uform_arena_allocate(arena, CHUNKS * MIB, 0, &target));
    unsigned char *host = malloc(CHUNKS * MIB), *back = malloc(CHUNKS * MIB);
    CHECK(host && back);
    fill(host, CHUNKS * MIB, 11);

    uform__test_before_host_copy = look;
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, target, host, CHUNKS * MIB));
    CHECK_EQ_INT(atomic_load(&asked), CHUNKS - 1);
    CHECK_EQ_INT(atomic_load(&in_flight), CHUNKS - 1);

    atomic_store(&asked, 0);
    atomic_store(&in_flight, 0);
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, target, CHUNKS * MIB));
    CHECK_EQ_INT(atomic_load(&asked), CHUNKS - 1);
    CHECK_EQ_INT(atomic_load(&in_flight), CHUNKS - 1);
    uform__test_before_host_copy = NULL;
    CHECK_EQ_INT(first_mismatch(back, CHUNKS * MIB, 11), CHUNKS * MIB);

    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    free(host);
    free(back);
    TEST_DONE();
}
