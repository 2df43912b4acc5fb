/* The VRAM executor over AMD GPUs, against the HIP runtime test double, and over one NVIDIA and
 * one AMD GPU together (the CUDA driver test double beside it): device functions see each
 * device's vendor and stream, staged copies round-trip pageable memory through each runtime's
 * pinned staging, a symmetric arena spans both vendors, and a sticky HIP fault makes the whole
 * executor answer DEVICE_FAULT. */
#include <stdatomic.h>

#include "hip_double.h"
#include "test.h"

typedef struct seen_t {
    _Atomic int calls;
    uint32_t vendors[4];
    void *streams[4];
} seen_t;

static uform_status_t record(void *context, const uform_device_slot_t *slot) {
    seen_t *seen = context;
    atomic_fetch_add(&seen->calls, 1);
    seen->vendors[slot->device] = slot->vendor;
    seen->streams[slot->device] = slot->stream;
    return UFORM_STATUS_OK;
}

static void round_trip(uform_executor_t *executor, uform_arena_t *arena, size_t device, size_t bytes) {
    void *slot = NULL, *twin = NULL;
    CHECK_OK(uform_arena_allocate(arena, bytes, 256, &slot));
    CHECK_OK(uform_arena_device_pointer(arena, device, slot, &twin));
    unsigned char *host = malloc(bytes), *back = calloc(1, bytes);
    CHECK(host && back);
    for (size_t i = 0; i < bytes; i++) host[i] = (unsigned char)(i * 7 + device);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, device, twin, host, bytes));
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, device, twin, bytes));
    CHECK(memcmp(host, back, bytes) == 0);
    free(host);
    free(back);
}

int main(void) {
    setenv("UFORM_STAGING_CHUNK_BYTES", "65536", 1);
    use_cuda_and_hip_doubles("device cc=9.0 memory=64M",
                             "device arch=gfx942 memory=64M\ndevice arch=gfx942 memory=64M\nfault sticky=200\n");
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 3); /* NVIDIA 0, then AMD 1 and 2 */

    /* Two AMD devices: their class, their streams, copies through HIP's staging. */
    const int32_t amd[] = {1, 2};
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(amd, 2, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    CHECK_EQ_INT(uform_executor_gpu_class(executor), UFORM_GPU_CLASS_AMD_CDNA3);
    seen_t seen = {0};
    CHECK_OK(uform_executor_for_devices(executor, NULL, record, &seen));
    CHECK_EQ_INT(atomic_load(&seen.calls), 2);
    CHECK_EQ_INT(seen.vendors[0], UFORM_GPU_VENDOR_AMD);
    CHECK(seen.streams[0] && seen.streams[1] && seen.streams[0] != seen.streams[1]);
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 4u << 20, &arena));
    round_trip(executor, arena, 0, 5 * 65536 + 3);
    round_trip(executor, arena, 1, 1000);
    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));

    /* NVIDIA and AMD in one executor: no class in common; both runtimes behind one arena. */
    const int32_t mixed[] = {0, 2};
    CHECK_OK(uform_executor_for_vram(mixed, 2, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    CHECK_EQ_INT(uform_executor_gpu_class(executor), UFORM_GPU_CLASS_NONE);
    CHECK_STATUS(uform_executor_for_vram(mixed, 2, UFORM_GPU_CLASS_NVIDIA_AMPERE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL,
                                         0, 0, 0, &(uform_executor_t *){NULL}),
                 UFORM_STATUS_UNSUPPORTED);
    seen_t both = {0};
    CHECK_OK(uform_executor_for_devices(executor, NULL, record, &both));
    CHECK_EQ_INT(both.vendors[0], UFORM_GPU_VENDOR_NVIDIA);
    CHECK_EQ_INT(both.vendors[1], UFORM_GPU_VENDOR_AMD);
    CHECK_OK(uform_arena_new_in(executor, 4u << 20, &arena));
    round_trip(executor, arena, 0, 3 * 65536);
    round_trip(executor, arena, 1, 3 * 65536);

    /* Keep copying to the AMD device until the double's 200th stream operation faults it. */
    uform_status_t status = UFORM_STATUS_OK;
    void *slot = NULL, *twin = NULL;
    CHECK_OK(uform_arena_allocate(arena, 65536, 0, &slot));
    CHECK_OK(uform_arena_device_pointer(arena, 1, slot, &twin));
    static unsigned char host[65536];
    for (int i = 0; i < 400 && status == UFORM_STATUS_OK; i++)
        status = uform_executor_copy_to_device(executor, NULL, 1, twin, host, sizeof host);
    CHECK_STATUS(status, UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("hipError");
    /* The NVIDIA device is fine, but the executor as a whole answers DEVICE_FAULT until freed. */
    CHECK_STATUS(uform_executor_copy_to_device(executor, NULL, 0, slot, host, sizeof host), UFORM_STATUS_DEVICE_FAULT);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_DEVICE_FAULT);
    CHECK_OK(uform_executor_free(executor));
    uform_arena_free(arena);
    TEST_DONE();
}
