/* The HIP runtime test double's hipStreamWaitEvent, by hip_runtime_api.h's semantics: work queued
 * on the waiting stream after the call does not start until the event's latest record has
 * completed; the call never blocks the host; an event never recorded imposes nothing; flags must
 * be 0; the NULL stream waits too. Then uform_executor_order_stream on an AMD device, through
 * the HIP backend. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "hip_double_runtime.h"

static hip_double_t hip;

static void set_flag(void *argument) { atomic_store((_Atomic int *)argument, 1); }

static void pause_ms(long ms) {
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

static void check_waits_behind_gate(uform_hipStream gated, uform_hipStream waiting, uform_hipEvent event) {
    gate_t gate = GATE_INIT;
    _Atomic int ran = 0;
    CHECK_HIP(hip.hipLaunchHostFunc(gated, gate_wait, &gate), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipEventRecord(event, gated), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipStreamWaitEvent(waiting, event, 0), UFORM_HIP_SUCCESS); /* returns at once */
    CHECK_HIP(hip.hipLaunchHostFunc(waiting, set_flag, &ran), UFORM_HIP_SUCCESS);
    pause_ms(50);
    CHECK_EQ_INT(atomic_load(&ran), 0);
    CHECK_HIP(hip.hipStreamQuery(waiting), UFORM_HIP_ERROR_NOT_READY);
    gate_open(&gate);
    CHECK_HIP(hip.hipStreamSynchronize(waiting), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(atomic_load(&ran), 1);
    CHECK_HIP(hip.hipStreamSynchronize(gated), UFORM_HIP_SUCCESS);
}

int main(void) {
    hip = hip_double_open("device arch=gfx942 memory=64M");

    CHECK_HIP(hip.hipSetDevice(0), UFORM_HIP_SUCCESS);
    uform_hipStream gated = NULL, waiting = NULL;
    CHECK_HIP(hip.hipStreamCreateWithFlags(&gated, UFORM_HIP_STREAM_NON_BLOCKING), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipStreamCreateWithFlags(&waiting, UFORM_HIP_STREAM_NON_BLOCKING), UFORM_HIP_SUCCESS);
    uform_hipEvent event = NULL, never = NULL;
    CHECK_HIP(hip.hipEventCreateWithFlags(&event, UFORM_HIP_EVENT_BLOCKING_SYNC), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipEventCreateWithFlags(&never, 0), UFORM_HIP_SUCCESS);

    check_waits_behind_gate(gated, waiting, event);
    check_waits_behind_gate(gated, NULL, event); /* the NULL stream */

    _Atomic int ran = 0;
    CHECK_HIP(hip.hipStreamWaitEvent(waiting, never, 0), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipLaunchHostFunc(waiting, set_flag, &ran), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipStreamSynchronize(waiting), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(atomic_load(&ran), 1);

    CHECK_HIP(hip.hipStreamWaitEvent(waiting, event, 1), UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipStreamWaitEvent(waiting, NULL, 0), UFORM_HIP_ERROR_INVALID_HANDLE);

    /* uform over the AMD device goes through hipStreamWaitEvent: the default stream and the
     * caller's own are ordered, a handle HIP refuses is INVALID_ARGUMENT naming it. */
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    CHECK_OK(uform_executor_order_stream(executor, 0, NULL));
    CHECK_OK(uform_executor_order_stream(executor, 0, waiting));
    CHECK_EQ_INT(uform_executor_order_stream(executor, 1, waiting), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(uform_executor_order_stream(executor, 0, (void *)&ran), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(uform_last_error(), "hipStreamWaitEvent") != NULL);
    CHECK_OK(uform_executor_free(executor));

    CHECK_HIP(hip.hipEventDestroy(event), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipEventDestroy(never), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipStreamDestroy(gated), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipStreamDestroy(waiting), UFORM_HIP_SUCCESS);
    TEST_DONE();
}
