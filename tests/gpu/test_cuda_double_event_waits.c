/* How the CUDA driver test double's waits spend the waiting thread's CPU, as cuda.h documents:
 * cuEventSynchronize on a CU_EVENT_BLOCKING_SYNC event blocks ("will block until the event has
 * actually been completed"), on any other event it waits as the primary context's
 * CU_CTX_SCHED_AUTO does with fewer contexts than CPUs: spinning; cuStreamSynchronize spins
 * likewise. Each wait is 1 s of queued host work; a blocked wait must cost under 50 ms of the
 * process's CPU time, a spinning one over 50 ms (a spin keeps a CPU busy for the whole second;
 * even a heavily loaded machine gives it more than a twentieth). */

#include "cuda_double_driver.h"
#include "gpu/cpu_time.h"

int main(void) {
    cuda_double_t cu = cuda_double_open("device memory=64M");
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    uform_cuStream stream = NULL;
    CHECK_CU(cu.cuStreamCreate(&stream, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    uform_cuEvent blocking = NULL, spinning = NULL;
    CHECK_CU(cu.cuEventCreate(&blocking, UFORM_CU_EVENT_BLOCKING_SYNC | UFORM_CU_EVENT_DISABLE_TIMING),
             UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&spinning, UFORM_CU_EVENT_DISABLE_TIMING), UFORM_CUDA_SUCCESS);

    CHECK_CU(cu.cuLaunchHostFunc(stream, sleep_a_second, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(blocking, stream), UFORM_CUDA_SUCCESS);
    double before = cpu_ms();
    CHECK_CU(cu.cuEventSynchronize(blocking), UFORM_CUDA_SUCCESS);
    double blocked = cpu_ms() - before;

    CHECK_CU(cu.cuLaunchHostFunc(stream, sleep_a_second, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(spinning, stream), UFORM_CUDA_SUCCESS);
    before = cpu_ms();
    CHECK_CU(cu.cuEventSynchronize(spinning), UFORM_CUDA_SUCCESS);
    double spun = cpu_ms() - before;

    CHECK_CU(cu.cuLaunchHostFunc(stream, sleep_a_second, NULL), UFORM_CUDA_SUCCESS);
    before = cpu_ms();
    CHECK_CU(cu.cuStreamSynchronize(stream), UFORM_CUDA_SUCCESS);
    double stream_spun = cpu_ms() - before;
    printf("1 s waits: blocking-sync event %.0f ms CPU, default event %.0f ms, cuStreamSynchronize %.0f ms\n", blocked,
           spun, stream_spun);
    CHECK(blocked < 50);
    CHECK(spun > 50);
    CHECK(stream_spun > 50);

    CHECK_CU(cu.cuEventDestroy(blocking), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventDestroy(spinning), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
