/* The CUDA driver test double's streams keep the driver's semantics: each stream runs its
 * operations in order, asynchronously with the caller (nothing is done before a synchronise),
 * two streams run concurrently, cuStreamQuery answers NOT_READY while work is queued, copies
 * and memsets round-trip, and calls without a current context or with bad values fail as
 * cuda.h documents. */
#include <string.h>
#include <time.h>

#include "cuda_double_driver.h"

/* Host functions that log their order. */
static int order_log[8];
static int order_count;
static void log_one(void *value) {
    int slot = __atomic_load_n(&order_count, __ATOMIC_RELAXED);
    order_log[slot] = (int)(intptr_t)value;
    __atomic_store_n(&order_count, slot + 1, __ATOMIC_RELEASE);
}

/* The current context is per thread: a new thread has none. */
static cuda_double_t *shared;
static void *open_later(void *gate) {
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    gate_open(gate);
    return NULL;
}

static void *other_thread(void *result) {
    *(uform_cuResult *)result = shared->cuCtxSynchronize();
    return NULL;
}

static void check_bytes(const unsigned char *bytes, size_t count, unsigned char value) {
    for (size_t i = 0; i < count; i++)
        if (bytes[i] != value) TEST_FAIL_("byte %zu is %u, not %u", i, bytes[i], value);
}

int main(void) {
    cuda_double_t cu = cuda_double_open("device memory=64M name=Emulated A\ndevice memory=64M name=Emulated B");

    /* No current context yet: INVALID_CONTEXT. */
    uform_cuContext context = (uform_cuContext)&order_count;
    CHECK_CU(cu.cuCtxGetCurrent(&context), UFORM_CUDA_SUCCESS);
    CHECK(context == NULL);
    uform_cuStream stream = NULL;
    CHECK_CU(cu.cuStreamCreate(&stream, 0), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    uform_cuDevicePtr device_memory = 0;
    CHECK_CU(cu.cuMemAlloc(&device_memory, 256), UFORM_CUDA_ERROR_INVALID_CONTEXT);

    /* Primary contexts: retain, make current; a bad device or handle is refused. */
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 2), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_ERROR_INVALID_CONTEXT); /* never retained */
    CHECK_CU(cu.cuCtxSetCurrent((uform_cuContext)&order_count), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    uform_cuContext again = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&again, 0), UFORM_CUDA_SUCCESS);
    CHECK(again == context); /* one primary context per device */
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    uform_cuContext got = NULL;
    CHECK_CU(cu.cuCtxGetCurrent(&got), UFORM_CUDA_SUCCESS);
    CHECK(got == context);
    CHECK_CU(cu.cuCtxGetCurrent(NULL), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_SUCCESS);

    /* Streams: flags 0 or NON_BLOCKING only. */
    CHECK_CU(cu.cuStreamCreate(&stream, 2), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuStreamCreate(NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    uform_cuStream first = NULL, second = NULL;
    CHECK_CU(cu.cuStreamCreate(&first, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamCreate(&second, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    CHECK(first != NULL && second != NULL && first != second);
    CHECK_CU(cu.cuStreamQuery(first), UFORM_CUDA_SUCCESS); /* nothing queued */

    /* Round trip: memset then copy to and from device memory, on one stream. */
    enum { BYTES = 4096 };
    CHECK_CU(cu.cuMemAlloc(&device_memory, BYTES), UFORM_CUDA_SUCCESS);
    CHECK(device_memory % 256 == 0);
    unsigned char *host = NULL;
    CHECK_CU(cu.cuMemHostAlloc((void **)&host, BYTES, 0), UFORM_CUDA_SUCCESS);
    memset(host, 0x11, BYTES);
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 0xAB, BYTES, first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, BYTES, first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(first), UFORM_CUDA_SUCCESS);
    check_bytes(host, BYTES, 0xAB);
    memset(host, 0x5C, BYTES);
    CHECK_CU(cu.cuMemcpyHtoDAsync(device_memory + 1024, host, 1024, first), UFORM_CUDA_SUCCESS);
    /* The copy reads the host buffer when the stream reaches it: leave it alone until then. */
    CHECK_CU(cu.cuStreamSynchronize(first), UFORM_CUDA_SUCCESS);
    memset(host, 0, BYTES);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, BYTES, first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(first), UFORM_CUDA_SUCCESS);
    check_bytes(host, 1024, 0xAB);
    check_bytes(host + 1024, 1024, 0x5C);
    check_bytes(host + 2048, 2048, 0xAB);

    /* Bad values: ranges outside any allocation, NULL host pointers and functions. */
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 0, BYTES + 1, first), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyHtoDAsync(device_memory + 16, host, BYTES, first), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, (uform_cuDevicePtr)(uintptr_t)host, 16, first),
             UFORM_CUDA_ERROR_INVALID_VALUE); /* pinned host memory is no device pointer */
    CHECK_CU(cu.cuMemcpyDtoHAsync(NULL, device_memory, 16, first), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuLaunchHostFunc(first, NULL, NULL), UFORM_CUDA_ERROR_INVALID_VALUE);

    /* Asynchrony and NOT_READY: behind a closed gate, a copy has not happened yet. */
    gate_t gate = GATE_INIT;
    memset(host, 0, BYTES);
    CHECK_CU(cu.cuLaunchHostFunc(first, gate_wait, &gate), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, BYTES, first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(first), UFORM_CUDA_ERROR_NOT_READY);
    check_bytes(host, BYTES, 0); /* queued, not done */
    CHECK_CU(cu.cuStreamQuery(first), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&gate);
    CHECK_CU(cu.cuStreamSynchronize(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(first), UFORM_CUDA_SUCCESS);
    check_bytes(host, 1024, 0xAB);

    /* Order within a stream: host functions run in the order queued, after a held gate. */
    gate_t hold = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(first, gate_wait, &hold), UFORM_CUDA_SUCCESS);
    for (intptr_t i = 0; i < 6; i++) CHECK_CU(cu.cuLaunchHostFunc(first, log_one, (void *)i), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(__atomic_load_n(&order_count, __ATOMIC_ACQUIRE), 0);
    gate_open(&hold);
    CHECK_CU(cu.cuStreamSynchronize(first), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(order_count, 6);
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(order_log[i], i);

    /* Concurrency: the first stream waits on a gate that only the second stream opens. Run in
     * one thread, this would never finish. */
    gate_t crossing = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(first, gate_wait, &crossing), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(second, gate_open, &crossing), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(second), UFORM_CUDA_SUCCESS);

    /* cuCtxSynchronize waits for every stream of the context. */
    gate_t late = GATE_INIT;
    memset(host, 0, BYTES);
    CHECK_CU(cu.cuLaunchHostFunc(second, gate_wait, &late), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, 16, second), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(second), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&late);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_SUCCESS);
    check_bytes(host, 16, 0xAB);

    /* The NULL stream (0) works too, in order with blocking streams. */
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 0x42, 64, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, 64, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(NULL), UFORM_CUDA_SUCCESS);
    check_bytes(host, 64, 0x42);

    /* The legacy NULL stream waits for blocking streams (flag 0) of its context: a copy on it
     * sees a memset queued before on a blocking stream, held behind a gate another thread
     * opens later. A NON_BLOCKING stream held on a gate does not hold the NULL stream back. */
    uform_cuStream blocking = NULL;
    CHECK_CU(cu.cuStreamCreate(&blocking, UFORM_CU_STREAM_DEFAULT), UFORM_CUDA_SUCCESS);
    gate_t held = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(blocking, gate_wait, &held), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 0x77, 64, blocking), UFORM_CUDA_SUCCESS);
    pthread_t opener;
    CHECK(pthread_create(&opener, NULL, open_later, &held) == 0);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, 64, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(NULL), UFORM_CUDA_SUCCESS);
    check_bytes(host, 64, 0x77);
    pthread_join(opener, NULL);
    CHECK_CU(cu.cuStreamDestroy(blocking), UFORM_CUDA_SUCCESS);
    gate_t aside = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(first, gate_wait, &aside), UFORM_CUDA_SUCCESS); /* NON_BLOCKING */
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 0x33, 64, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(first), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&aside);
    CHECK_CU(cu.cuStreamSynchronize(first), UFORM_CUDA_SUCCESS);

    /* A destroyed stream is no handle; destroy with work queued finishes that work first. */
    gate_t parting = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(second, gate_wait, &parting), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(second, log_one, (void *)(intptr_t)7), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(second), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(second), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuStreamDestroy(second), UFORM_CUDA_ERROR_INVALID_HANDLE);
    gate_open(&parting);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(first), UFORM_CUDA_SUCCESS);
    while (__atomic_load_n(&order_count, __ATOMIC_ACQUIRE) < 7) sched_yield();
    CHECK_EQ_INT(order_log[6], 7);

    /* Another thread has no current context until it sets one. */
    shared = &cu;
    uform_cuResult elsewhere = 0;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, other_thread, &elsewhere) == 0);
    pthread_join(thread, NULL);
    CHECK_EQ_INT(elsewhere, UFORM_CUDA_ERROR_INVALID_CONTEXT);

    CHECK_CU(cu.cuMemFreeHost(host), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFree(device_memory), UFORM_CUDA_SUCCESS);

    /* Releasing the last reference ends the context: it can no longer be made current. */
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
