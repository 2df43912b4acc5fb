/* Cancelling the VRAM verbs against the CUDA driver double: uform_executor_for_devices stops
 * handing out devices, staged copies stop between chunks (the bytes already sent arrive, and
 * progress says how many), a queued deferred copy cancelled through its handle never starts,
 * and the executor works afterwards. */
#include <sched.h>
#include <stdatomic.h>

#include "gpu/vram_internal.h"
#include "vram_double.h"

static const char config[] = "device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n"
                             "device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n";
static cuda_double_t cu;

#define CHUNK (64u * 1024u)
#define CHUNKS 8u

static volatile int flag;
static void set_flag(void) { __atomic_store_n(&flag, 1, __ATOMIC_RELAXED); }
static void clear_flag(void) { __atomic_store_n(&flag, 0, __ATOMIC_RELAXED); }

static _Atomic size_t last_done;
static void on_progress(void *context, size_t done, size_t total) {
    (void)context, (void)total;
    atomic_store(&last_done, done);
}

/* Device functions: record which ran; device 0's sets the flag. */
static _Atomic unsigned ran_mask;
static uform_status_t device_function(void *context, const uform_device_slot_t *slot) {
    (void)context;
    atomic_fetch_or(&ran_mask, 1u << slot->device);
    if (slot->device == 0) set_flag();
    return UFORM_STATUS_OK;
}

static gate_t gate = GATE_INIT;
static _Atomic int gate_arrived;
static uform_status_t gated_function(void *context, const uform_device_slot_t *slot) {
    (void)context;
    if (slot->device == 0) {
        atomic_store(&gate_arrived, 1);
        gate_wait(&gate);
    }
    return UFORM_STATUS_OK;
}

/* Sets the flag while chunk 2 is copied, in either direction. */
static void cancel_at_chunk_2(const uform__gpu_device_t *device, size_t chunk, size_t chunks, bool to_device) {
    (void)device, (void)chunks, (void)to_device;
    if (chunk == 2) set_flag();
}

static void check_copy_stops(uform_executor_t *executor, void *slot, unsigned char *host, bool to_device) {
    clear_flag();
    atomic_store(&last_done, 0);
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    call.progress = on_progress;
    atomic_store(&uform__test_before_host_copy, cancel_at_chunk_2);
    uform_status_t status = to_device ? uform_executor_copy_to_device(executor, &call, 0, slot, host, CHUNKS * CHUNK)
                                      : uform_executor_copy_to_host(executor, &call, host, 0, slot, CHUNKS * CHUNK);
    atomic_store(&uform__test_before_host_copy, NULL);
    CHECK_STATUS(status, UFORM_STATUS_INTERRUPTED);
    CHECK_ERROR_NAMES("cancelled between chunks");
    /* To the device, chunk 2 was being staged when the flag was set: it is sent, the next is
     * not. To the host, chunk 3's DMA was already in flight while chunk 2 was copied out: it
     * still lands, the next is never asked for. */
    CHECK_EQ_INT(atomic_load(&last_done), (to_device ? 3 : 4) * CHUNK);
}

int main(void) {
    setenv("UFORM_STAGING_CHUNK_BYTES", "65536", 1);
    cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    CHECK_EQ_INT(uform_executor_devices(executor), 4);
    size_t threads = uform_executor_threads(executor);

    /* for_devices, flag set before the call: no device function runs. */
    set_flag();
    uform_call_t call = UFORM_CALL_INIT;
    call.cancel = &flag;
    CHECK_STATUS(uform_executor_for_devices(executor, &call, device_function, NULL), UFORM_STATUS_INTERRUPTED);
    CHECK_EQ_INT(atomic_load(&ran_mask), 0);

    /* Set by device 0's function: the devices its thread would take next never start. Each
     * thread's first device still does (executor.h: device functions may wait for each other,
     * as collectives do), so with a thread per device all four run. */
    clear_flag();
    atomic_store(&last_done, 0);
    call.progress = on_progress;
    uform_status_t status = uform_executor_for_devices(executor, &call, device_function, NULL);
    unsigned mask = atomic_load(&ran_mask);
    CHECK(mask & 1u);
    if (threads < 4) {
        CHECK_STATUS(status, UFORM_STATUS_INTERRUPTED);
        CHECK_ERROR_NAMES("cancelled");
        CHECK(!(mask & 2u)); /* device 1 is thread 0's second, after device 0 */
    } else {
        CHECK(status == UFORM_STATUS_OK || status == UFORM_STATUS_INTERRUPTED);
        CHECK_EQ_INT(mask, 15);
    }
    CHECK_EQ_INT(atomic_load(&last_done), __builtin_popcount(mask));
    atomic_store(&ran_mask, 0);
    call.cancel = NULL;
    CHECK_OK(uform_executor_for_devices(executor, &call, device_function, NULL)); /* usable: all four */
    CHECK_EQ_INT(atomic_load(&ran_mask), 15);

    /* Staged copies stop between chunks. */
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, CHUNKS * CHUNK, &arena));
    void *slot = NULL;
    CHECK_OK(uform_arena_allocate(arena, CHUNKS * CHUNK, 256, &slot));
    unsigned char *host = malloc(CHUNKS * CHUNK), *back = malloc(CHUNKS * CHUNK);
    CHECK(host && back);
    fill(host, CHUNKS * CHUNK, 5);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, slot, host, CHUNKS * CHUNK));
    memset(back, 0, CHUNKS * CHUNK);
    check_copy_stops(executor, slot, back, false);
    /* The chunks sent before the cancel arrived whole; the later ones were never copied. */
    CHECK_EQ_INT(first_mismatch(back, CHUNKS * CHUNK, 5), 4 * CHUNK);
    size_t nonzero = 0;
    for (size_t i = 4 * CHUNK; i < CHUNKS * CHUNK; i++) nonzero += back[i] != 0;
    CHECK_EQ_INT(nonzero, 0);

    fill(host, CHUNKS * CHUNK, 9);
    check_copy_stops(executor, slot, host, true);
    memset(back, 0, CHUNKS * CHUNK);
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, slot, CHUNKS * CHUNK));
    CHECK_EQ_INT(first_mismatch(back, CHUNKS * CHUNK, 9), 3 * CHUNK);

    /* A deferred copy queued behind a blocked device call, cancelled through its handle: it
     * ends at once, while the first still runs, and never sends a byte. */
    uform_deferred_t *first = NULL, *copy = NULL;
    uform_call_t first_call = UFORM_CALL_INIT, copy_call = UFORM_CALL_INIT;
    first_call.deferred = &first;
    copy_call.deferred = &copy;
    CHECK_OK(uform_executor_for_devices(executor, &first_call, gated_function, NULL));
    while (!atomic_load(&gate_arrived)) sched_yield();
    fill(host, CHUNKS * CHUNK, 11);
    CHECK_OK(uform_executor_copy_to_device(executor, &copy_call, 0, slot, host, CHUNKS * CHUNK));
    CHECK_OK(uform_deferred_cancel(copy));
    CHECK_OK(uform_deferred_poll(copy));
    CHECK_STATUS(uform_deferred_poll(first), UFORM_STATUS_TIMEOUT);
    CHECK_STATUS(uform_deferred_wait(copy, -1), UFORM_STATUS_INTERRUPTED);
    size_t done = 1;
    CHECK_OK(uform_deferred_progress(copy, &done, NULL));
    CHECK_EQ_INT(done, 0);
    gate_open(&gate);
    CHECK_OK(uform_deferred_wait(first, -1));
    uform_deferred_free(first);
    uform_deferred_free(copy);
    memset(back, 0, CHUNKS * CHUNK);
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, slot, CHUNKS * CHUNK));
    CHECK_EQ_INT(first_mismatch(back, 3 * CHUNK, 9), 3 * CHUNK); /* still the earlier copy's */

    /* And the executor copies whole afterwards. */
    fill(host, CHUNKS * CHUNK, 13);
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, slot, host, CHUNKS * CHUNK));
    memset(back, 0, CHUNKS * CHUNK);
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, slot, CHUNKS * CHUNK));
    CHECK_EQ_INT(first_mismatch(back, CHUNKS * CHUNK, 13), CHUNKS * CHUNK);

    free(host);
    free(back);
    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
