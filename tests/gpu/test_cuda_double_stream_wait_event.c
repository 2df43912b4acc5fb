/* The CUDA driver test double's cuStreamWaitEvent, by cuda.h's semantics: work queued on the
 * waiting stream after the call does not start until the event's captured work has completed;
 * the call itself never blocks the host; an event never recorded imposes nothing; a later
 * cuEventRecord does not change a wait already queued; Flags must be 0; the legacy
 * (CU_STREAM_LEGACY, NULL) and per-thread (CU_STREAM_PER_THREAD) default streams wait too. */
#include <stdatomic.h>
#include <time.h>

#include "cuda_double_driver.h"

static void set_flag(void *argument) { atomic_store((_Atomic int *)argument, 1); }

static void pause_ms(long ms) {
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

/* `waiting` waits for `event`, recorded behind a gate on `gated`: its later work stays back
 * until the gate opens. */
static void check_waits_behind_gate(const cuda_double_t *cu, uform_cuStream gated, uform_cuStream waiting,
                                    uform_cuEvent event) {
    gate_t gate = GATE_INIT;
    _Atomic int ran = 0;
    CHECK_CU(cu->cuLaunchHostFunc(gated, gate_wait, &gate), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu->cuEventRecord(event, gated), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu->cuStreamWaitEvent(waiting, event, 0), UFORM_CUDA_SUCCESS); /* returns at once */
    CHECK_CU(cu->cuLaunchHostFunc(waiting, set_flag, &ran), UFORM_CUDA_SUCCESS);
    pause_ms(50);
    CHECK_EQ_INT(atomic_load(&ran), 0);
    CHECK_CU(cu->cuStreamQuery(waiting), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&gate);
    CHECK_CU(cu->cuStreamSynchronize(waiting), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(atomic_load(&ran), 1);
    CHECK_CU(cu->cuStreamSynchronize(gated), UFORM_CUDA_SUCCESS);
}

int main(void) {
    cuda_double_t cu = cuda_double_open("device memory=64M");
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    uform_cuStream gated = NULL, waiting = NULL;
    CHECK_CU(cu.cuStreamCreate(&gated, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamCreate(&waiting, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    uform_cuEvent event = NULL, never = NULL;
    CHECK_CU(cu.cuEventCreate(&event, UFORM_CU_EVENT_BLOCKING_SYNC | UFORM_CU_EVENT_DISABLE_TIMING),
             UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&never, UFORM_CU_EVENT_DISABLE_TIMING), UFORM_CUDA_SUCCESS);

    /* Ordering on the device, the host never blocked. */
    check_waits_behind_gate(&cu, gated, waiting, event);

    /* The special handles: the per-thread default stream (a blocking stream of its own) and the
     * legacy default stream, by CU_STREAM_LEGACY and by NULL. */
    check_waits_behind_gate(&cu, gated, UFORM_CU_STREAM_PER_THREAD, event);
    check_waits_behind_gate(&cu, gated, UFORM_CU_STREAM_LEGACY, event);
    check_waits_behind_gate(&cu, gated, NULL, event);
    CHECK_CU(cu.cuStreamDestroy(UFORM_CU_STREAM_PER_THREAD), UFORM_CUDA_ERROR_INVALID_HANDLE);

    /* An event never recorded is complete: nothing waits. */
    _Atomic int ran = 0;
    CHECK_CU(cu.cuStreamWaitEvent(waiting, never, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(waiting, set_flag, &ran), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(waiting), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(atomic_load(&ran), 1);

    /* The wait is for the recording at the call: recording again behind a gate changes nothing
     * for work already ordered after it. */
    CHECK_CU(cu.cuEventRecord(event, gated), UFORM_CUDA_SUCCESS); /* gated is idle: complete */
    CHECK_CU(cu.cuStreamWaitEvent(waiting, event, 0), UFORM_CUDA_SUCCESS);
    gate_t gate = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(gated, gate_wait, &gate), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(event, gated), UFORM_CUDA_SUCCESS);
    atomic_store(&ran, 0);
    CHECK_CU(cu.cuLaunchHostFunc(waiting, set_flag, &ran), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(waiting), UFORM_CUDA_SUCCESS); /* would hang if it waited */
    CHECK_EQ_INT(atomic_load(&ran), 1);
    gate_open(&gate);
    CHECK_CU(cu.cuStreamSynchronize(gated), UFORM_CUDA_SUCCESS);

    /* Refusals: flags other than 0, a handle that is no live event or stream. */
    CHECK_CU(cu.cuStreamWaitEvent(waiting, event, 1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuStreamWaitEvent(waiting, NULL, 0), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuStreamWaitEvent((uform_cuStream)&ran, event, 0), UFORM_CUDA_ERROR_INVALID_HANDLE);

    CHECK_CU(cu.cuEventDestroy(event), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventDestroy(never), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(gated), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(waiting), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
