/* The calling thread's current CUDA context is the caller's, not uform's: a caller that uses a
 * CUDA runtime on that thread (PyTorch, CuPy) keeps its device there. The verbs that run on the
 * caller's thread give it back as they found it: creating a VRAM executor, arenas made and freed
 * (device memory on both devices), synchronous copies to and from either device, drain, free, and
 * the close that the last reference's release runs (scratch and pinned staging freed, streams
 * destroyed, contexts released). With the caller's own context
 * current (device 0's primary context, made current by the test through the double; then device
 * 1's) and with none (NULL stays NULL). Only a device function runs with its device's context
 * current (vram.h), and the verbs it calls (scratch and staging growth, which wait and free)
 * leave it so. */
#include "vram_double.h"

static const char config[] = "device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n";
static cuda_double_t cu;

enum { BYTES = 3 * 65536 + 100 }; /* several staging chunks (UFORM_STAGING_CHUNK_BYTES below) */

/* A device function growing its scratch and its staging twice each (a second growth waits for
 * the stream and frees the first buffer): its device's context stays current throughout. */
static uform_status_t grow_buffers(void *context, const uform_device_slot_t *slot) {
    uform_executor_t *executor = context;
    CHECK(vram_current_context(&cu) == (uform_cuContext)slot->native_context);
    void *scratch = NULL;
    CHECK_OK(uform_executor_device_scratch(executor, slot->device, 1u << 20, &scratch));
    CHECK(vram_current_context(&cu) == (uform_cuContext)slot->native_context);
    CHECK_OK(uform_executor_device_scratch(executor, slot->device, 4u << 20, &scratch));
    CHECK(vram_current_context(&cu) == (uform_cuContext)slot->native_context);
    void *staging = NULL;
    CHECK_OK(uform_executor_staging(executor, slot->device, 1u << 20, &staging));
    CHECK_OK(uform_executor_staging(executor, slot->device, 4u << 20, &staging));
    CHECK(vram_current_context(&cu) == (uform_cuContext)slot->native_context);
    return UFORM_STATUS_OK;
}

/* Every verb that runs on the calling thread, with `mine` current on it. */
static void verbs_keep(uform_cuContext mine) {
    CHECK_CU(cu.cuCtxSetCurrent(mine), UFORM_CUDA_SUCCESS);
    CHECK_CURRENT_CONTEXT(&cu, mine, "cuCtxSetCurrent");

    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    CHECK_EQ_INT(uform_executor_devices(executor), 2);
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_executor_for_vram");

    /* An arena made and freed while the executor lives: device memory on both devices. */
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_arena_new_in");
    uform_arena_free(arena);
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_arena_free");
    /* One that outlives uform_executor_free below, so that its free closes the executor. */
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_arena_new_in");
    void *on_zero = NULL, *on_one = NULL;
    CHECK_OK(uform_arena_allocate(arena, BYTES, 256, &on_zero));
    CHECK_OK(uform_arena_device_pointer(arena, 1, on_zero, &on_one));

    /* Synchronous copies with device 1, staged (pageable memory) in several chunks. */
    unsigned char *host = malloc(BYTES), *back = malloc(BYTES);
    CHECK(host && back);
    fill(host, BYTES, 7);
    memset(back, 0, BYTES);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 1, on_one, host, BYTES));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_executor_copy_to_device (device 1)");
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 1, on_one, BYTES));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_executor_copy_to_host (device 1)");
    CHECK_EQ_INT(first_mismatch(back, BYTES, 7), BYTES);
    /* And with device 0, whose context may be the caller's own. */
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, on_zero, host, BYTES));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_executor_copy_to_device (device 0)");

    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_executor_drain");

    /* A device function runs with its device's context current (and may leave it so on the
     * thread that ran it, as vram.h says): the caller sets its own again after one. */
    CHECK_OK(uform_executor_for_devices(executor, NULL, grow_buffers, executor));
    CHECK_CU(cu.cuCtxSetCurrent(mine), UFORM_CUDA_SUCCESS);

    /* uform_executor_free drains, and leaves the executor to its last arena. */
    CHECK_OK(uform_executor_free(executor));
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_executor_free");
    /* The last arena's free closes the executor: its scratch and staging freed on both devices
     * (device and pinned frees), then the streams, events and contexts. */
    uform_arena_free(arena);
    CHECK_CURRENT_CONTEXT(&cu, mine, "uform_arena_free closing the executor");
    free(host);
    free(back);
}

int main(void) {
    setenv("UFORM_STAGING_CHUNK_BYTES", "65536", 1);
    cu = vram_double_open(config);
    CHECK_CURRENT_CONTEXT(&cu, NULL, "loading the double"); /* a new thread has none */

    /* No context current: none after each verb either. */
    verbs_keep(NULL);

    /* The caller's own: device 0's primary context, retained by the test as a runtime would. */
    uform_cuContext mine = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&mine, 0), UFORM_CUDA_SUCCESS);
    verbs_keep(mine);
    /* Still usable: uform's release of its own reference left the caller's retained context. */
    uform_cuDevicePtr pointer = 0;
    CHECK_CU(cu.cuMemAlloc(&pointer, 4096), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFree(pointer), UFORM_CUDA_SUCCESS);

    /* Device 1's, the one the copies above go to. */
    uform_cuContext other = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&other, 1), UFORM_CUDA_SUCCESS);
    verbs_keep(other);

    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
