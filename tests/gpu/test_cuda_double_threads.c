/* The CUDA driver test double used from several threads at once, as an executor would: each
 * thread makes a primary context current, and allocates, round-trips and frees on a stream of
 * its own, while the others do the same on the same and on another device. Each thread's data
 * stays its own, and the sanitizer builds (ASan, TSan) check the double's locking. */
#include <string.h>

#include "cuda_double_driver.h"

enum { THREADS = 4, ROUNDS = 40, BYTES = 2048 };

static cuda_double_t cu;
static uform_cuContext contexts[2];

static void *worker(void *argument) {
    intptr_t index = (intptr_t)argument;
    uform_cuResult failed = UFORM_CUDA_SUCCESS;
#define TRY(call)                                                                                  \
    do {                                                                                           \
        uform_cuResult result_ = (call);                                                           \
        if (result_ != UFORM_CUDA_SUCCESS && !failed) failed = result_;                            \
    } while (0)
    TRY(cu.cuCtxSetCurrent(contexts[index % 2]));
    uform_cuStream stream = NULL;
    TRY(cu.cuStreamCreate(&stream, index % 3 == 0 ? UFORM_CU_STREAM_DEFAULT : UFORM_CU_STREAM_NON_BLOCKING));
    unsigned char *host = NULL;
    TRY(cu.cuMemHostAlloc((void **)&host, BYTES, 0));
    for (int round = 0; round < ROUNDS && !failed; round++) {
        uform_cuDevicePtr device_memory = 0;
        TRY(cu.cuMemAlloc(&device_memory, BYTES));
        unsigned char value = (unsigned char)(index * 50 + round);
        TRY(cu.cuMemsetD8Async(device_memory, value, BYTES, stream));
        TRY(cu.cuMemcpyDtoHAsync(host, device_memory, BYTES, stream));
        TRY(cu.cuStreamSynchronize(stream));
        for (int i = 0; i < BYTES && !failed; i++)
            if (host[i] != value) failed = 99999;
        TRY(cu.cuMemFree(device_memory));
    }
    TRY(cu.cuMemFreeHost(host));
    TRY(cu.cuStreamDestroy(stream));
    return (void *)(intptr_t)failed;
}

int main(void) {
    cu = cuda_double_open("device memory=64M\ndevice memory=64M");
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&contexts[0], 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&contexts[1], 1), UFORM_CUDA_SUCCESS);
    pthread_t threads[THREADS];
    for (intptr_t i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, worker, (void *)i) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *result = NULL;
        pthread_join(threads[i], &result);
        CHECK_EQ_INT((intptr_t)result, 0);
    }
    for (int device = 0; device < 2; device++) {
        CHECK_CU(cu.cuCtxSetCurrent(contexts[device]), UFORM_CUDA_SUCCESS);
        size_t free_bytes = 0, total_bytes = 0;
        CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_SUCCESS);
        CHECK_EQ_INT(free_bytes, total_bytes); /* every allocation freed */
        CHECK_CU(cu.cuDevicePrimaryCtxRelease(device), UFORM_CUDA_SUCCESS);
    }
    TEST_DONE();
}
