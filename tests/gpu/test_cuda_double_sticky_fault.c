/* The CUDA driver test double's `fault sticky=N`: the Nth stream operation faults its context
 * as an illegal address does on the device. As with the driver's sticky errors, the fault is
 * reported asynchronously (the enqueue itself succeeded) and from then on every call in that
 * context answers CUDA_ERROR_ILLEGAL_ADDRESS; the faulting operation and later ones do nothing.
 * Another device's context is not affected. cuGetErrorName names the new errors. Events report
 * it too: an event recorded behind the fault synchronises to ILLEGAL_ADDRESS, and every event
 * call in the faulted context answers it from then on. */
#include <string.h>

#include "cuda_double_driver.h"

int main(void) {
    cuda_double_t cu = cuda_double_open("device memory=1M\ndevice memory=1M\nfault sticky=3");
    uform_cuContext context = NULL, other = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&other, 1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    uform_cuStream stream = NULL;
    CHECK_CU(cu.cuStreamCreate(&stream, 0), UFORM_CUDA_SUCCESS);
    uform_cuDevicePtr device_memory = 0;
    CHECK_CU(cu.cuMemAlloc(&device_memory, 64), UFORM_CUDA_SUCCESS);
    unsigned char host[64];
    memset(host, 0, sizeof host);

    gate_t gate = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &gate), UFORM_CUDA_SUCCESS);       /* operation 1 */
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 7, 64, stream), UFORM_CUDA_SUCCESS);   /* 2 */
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 9, 64, stream), UFORM_CUDA_SUCCESS);   /* 3: faults */
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, 64, stream), UFORM_CUDA_SUCCESS); /* 4 */
    CHECK_CU(cu.cuStreamQuery(stream), UFORM_CUDA_ERROR_NOT_READY); /* not yet reached */
    uform_cuEvent event = NULL, never_recorded = NULL;
    CHECK_CU(cu.cuEventCreate(&event, UFORM_CU_EVENT_DISABLE_TIMING), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&never_recorded, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(event, stream), UFORM_CUDA_SUCCESS); /* recording queues no operation */
    CHECK_CU(cu.cuEventQuery(event), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&gate);
    CHECK_CU(cu.cuEventSynchronize(event), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS); /* waits, then reports it */
    CHECK_CU(cu.cuStreamSynchronize(stream), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    for (size_t i = 0; i < sizeof host; i++) CHECK_EQ_INT(host[i], 0); /* the copy after it never ran */

    /* Sticky: every later call in the context answers it, again and again. */
    CHECK_CU(cu.cuStreamSynchronize(stream), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuStreamQuery(stream), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 1, 64, stream), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_open, &gate), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    uform_cuDevicePtr more = 0;
    CHECK_CU(cu.cuMemAlloc(&more, 64), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuMemFree(device_memory), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    size_t free_bytes = 0, total_bytes = 0;
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total_bytes), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    uform_cuStream another = NULL;
    CHECK_CU(cu.cuStreamCreate(&another, 0), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuEventQuery(event), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuEventQuery(never_recorded), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuEventSynchronize(never_recorded), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuEventRecord(event, stream), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuEventRecord(event, NULL), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_CU(cu.cuEventDestroy(event), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    uform_cuEvent another_event = NULL;
    CHECK_CU(cu.cuEventCreate(&another_event, 0), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    /* Even releasing and retaining the primary context does not clear it: only the process's end. */
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);

    /* The other device's context works on. */
    CHECK_CU(cu.cuCtxSetCurrent(other), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemAlloc(&more, 64), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemsetD8Async(more, 5, 64, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, more, 64, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSynchronize(), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(host[63], 5);
    CHECK_CU(cu.cuEventCreate(&another_event, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemsetD8Async(more, 6, 64, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(another_event, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventSynchronize(another_event), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(another_event), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventDestroy(another_event), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFree(more), UFORM_CUDA_SUCCESS);

    const char *name = NULL;
    CHECK_CU(cu.cuGetErrorName(UFORM_CUDA_ERROR_ILLEGAL_ADDRESS, &name), UFORM_CUDA_SUCCESS);
    CHECK_EQ_STR(name, "CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK_CU(cu.cuGetErrorName(UFORM_CUDA_ERROR_NOT_READY, &name), UFORM_CUDA_SUCCESS);
    CHECK_EQ_STR(name, "CUDA_ERROR_NOT_READY");
    CHECK_CU(cu.cuGetErrorName(UFORM_CUDA_ERROR_INVALID_CONTEXT, &name), UFORM_CUDA_SUCCESS);
    CHECK_EQ_STR(name, "CUDA_ERROR_INVALID_CONTEXT");
    TEST_DONE();
}
