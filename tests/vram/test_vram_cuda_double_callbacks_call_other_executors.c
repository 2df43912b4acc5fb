/* Device functions that call executors, against the CUDA driver test double (executor.h: a
 * callback calling its own executor gets INVALID_ARGUMENT instead of a deadlock; other
 * executors' calls nest on the same thread). A device function of VRAM executor A, on every
 * device at once, calls: A's own for_devices, copy and drain (refused, INVALID_ARGUMENT); A's
 * scratch (its own device's: allowed); RAM executor B's for_n (runs); and a synchronous copy on
 * VRAM executor C over the same GPUs (its own streams: runs, the bytes arrive). Then all three
 * still work and free cleanly. A device function that returns its refused re-entry's status
 * ends the call with the refusal's own reason, not only "returned INVALID_ARGUMENT". */
#include <string.h>

#include "vram_double.h"

#define BYTES 4096

static uform_executor_t *a, *b, *c;
static void *on_c[2]; /* BYTES on each device, from an arena of C's */
static _Atomic int b_tasks;
static _Atomic uform_status_t own_for_devices = -1, own_copy = -1, own_drain = -1, scratch = -1, b_call = -1,
                              c_copy = -1;

static uform_status_t count_task(void *context, size_t task, size_t thread) {
    (void)context, (void)task, (void)thread;
    atomic_fetch_add(&b_tasks, 1);
    return UFORM_STATUS_OK;
}

static uform_status_t nothing(void *context, const uform_device_slot_t *slot) {
    (void)context, (void)slot;
    return UFORM_STATUS_OK;
}

static uform_status_t nest(void *context, const uform_device_slot_t *slot) {
    (void)context;
    static unsigned char host[2][BYTES];
    unsigned char *mine = host[slot->device];
    fill(mine, BYTES, 20 + (unsigned)slot->device);
    void *buffer = NULL;
    if (slot->device == 0) {
        atomic_store(&own_for_devices, uform_executor_for_devices(a, NULL, nothing, NULL));
        atomic_store(&own_copy, uform_executor_copy_to_device(a, NULL, 0, on_c[0], mine, BYTES));
        atomic_store(&own_drain, uform_executor_drain(a, UFORM_MOOD_PARKED));
        atomic_store(&b_call, uform_executor_for_n(b, NULL, 100, count_task, NULL));
    }
    uform_status_t status = uform_executor_device_scratch(a, slot->device, BYTES, &buffer);
    if (slot->device == 0) atomic_store(&scratch, status);
    /* C over the same GPUs, with its own streams (device 0 only: C runs one call at a time). */
    if (slot->device == 0) atomic_store(&c_copy, uform_executor_copy_to_device(c, NULL, 0, on_c[0], mine, BYTES));
    return UFORM_STATUS_OK;
}

/* Returns what calling its own executor answered: the call's message must keep the reason. */
static uform_status_t reenter_and_fail(void *context, const uform_device_slot_t *slot) {
    (void)context;
    if (slot->device != 0) return UFORM_STATUS_OK;
    return uform_executor_drain(a, UFORM_MOOD_PARKED);
}

int main(void) {
    cuda_double_t cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    (void)cu;
    a = vram_executor(NULL, 0, 0);
    c = vram_executor(NULL, 0, 0);
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 8, &b));
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(c, 2 * BYTES, &arena));
    CHECK_OK(uform_arena_allocate(arena, BYTES, 0, &on_c[0]));

    CHECK_OK(uform_executor_for_devices(a, NULL, nest, NULL));
    CHECK_STATUS(atomic_load(&own_for_devices), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(atomic_load(&own_copy), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(atomic_load(&own_drain), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_OK(atomic_load(&scratch));
    CHECK_OK(atomic_load(&b_call));
    CHECK_EQ_INT(atomic_load(&b_tasks), 100);
    CHECK_OK(atomic_load(&c_copy));
    static unsigned char back[BYTES];
    CHECK_OK(uform_executor_copy_to_host(c, NULL, back, 0, on_c[0], BYTES));
    CHECK_EQ_INT((int)first_mismatch(back, BYTES, 20), BYTES);

    CHECK_STATUS(uform_executor_for_devices(a, NULL, reenter_and_fail, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    if (!strstr(uform_last_error(), "own callbacks")) {
        fprintf(stderr, "FAIL: for_devices lost the refusal's reason: %s\n", uform_last_error());
        return 1;
    }

    /* Nothing was left held. */
    CHECK_OK(uform_executor_for_devices(a, NULL, nothing, NULL));
    CHECK_OK(uform_executor_drain(a, UFORM_MOOD_PARKED));
    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(c));
    CHECK_OK(uform_executor_free(b));
    CHECK_OK(uform_executor_free(a));
    TEST_DONE();
}
