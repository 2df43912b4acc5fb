/* uform_executor_free racing the VRAM entry points, against the CUDA driver test double. A test
 * hook (uform__test_before_leave) stalls the racing thread right before its last touch of the
 * executor; free must wait for it, then answer OK:
 *   1. a device arena being made while free begins: it is made (free began after it counted in),
 *      and it then holds the executor, whose last arena's free closes it;
 *   2. a synchronous device-function call whose stream work is still running while free is
 *      called from another thread;
 *   3. a device arena asked for once free has begun: refused, nothing held;
 *   4. uform_executor_gpu_class read while free begins: free waits for the read (it counts in).
 * Runs under ASan and TSan in the suite. */
#include <time.h>

#include "executor/executor_internal.h"
#include "vram_double.h"

#define STALL_MS 30

static cuda_double_t cu;
static _Thread_local bool stall_me = false;
static _Atomic int stalls_finished = 0;

static void sleep_ms(int ms) {
    struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

static void stall_before_leave(void) {
    if (!stall_me) return;
    sleep_ms(STALL_MS);
    atomic_fetch_add(&stalls_finished, 1);
}

static void wait_closing(uform_executor_t *executor) {
    while (!(atomic_load(&executor->hold) & UFORM_HOLD_CLOSING)) sleep_ms(0);
}

typedef struct racer_t {
    uform_executor_t *executor;
    uform_arena_t *arena;
    uform_status_t status;
    _Atomic int entered;
} racer_t;

static void *make_arena(void *argument) {
    racer_t *racer = argument;
    stall_me = true;
    atomic_store(&racer->entered, 1);
    racer->status = uform_arena_new_in(racer->executor, 1u << 20, &racer->arena);
    return NULL;
}

static void mark(void *argument) {
    sleep_ms(60); /* the stream stays busy well past free's start */
    atomic_store((_Atomic int *)argument, 1);
}

typedef struct device_call_t {
    uform_executor_t *executor;
    _Atomic int stream_done, started;
    uform_status_t status;
    gate_t *gate; /* set: the stream waits on it instead of a fixed time */
} device_call_t;

static uform_status_t enqueue_mark(void *context, const uform_device_slot_t *slot) {
    device_call_t *call = context;
    if (call->gate)
        CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, gate_wait, call->gate), UFORM_CUDA_SUCCESS);
    else
        CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, mark, (void *)&call->stream_done),
                 UFORM_CUDA_SUCCESS);
    atomic_store(&call->started, 1);
    return UFORM_STATUS_OK;
}

typedef struct class_reader_t {
    uform_executor_t *executor;
    _Atomic int entered;
    uform_gpu_class_t gpu_class;
} class_reader_t;

static void *read_gpu_class(void *argument) {
    class_reader_t *reader = argument;
    stall_me = true;
    atomic_store(&reader->entered, 1);
    reader->gpu_class = uform_executor_gpu_class(reader->executor);
    return NULL;
}

static void *free_executor(void *argument) {
    CHECK_OK(uform_executor_free(argument));
    return NULL;
}

static void *run_devices(void *argument) {
    device_call_t *call = argument;
    call->status = uform_executor_for_devices(call->executor, NULL, enqueue_mark, call);
    return NULL;
}

int main(void) {
    cu = vram_double_open("device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\n");
    uform__test_before_leave = stall_before_leave;

    /* 1. An arena being made while free begins. */
    racer_t racer = {vram_executor(NULL, 0, 0), NULL, UFORM_STATUS_OK, 0};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, make_arena, &racer) == 0);
    while (!atomic_load(&racer.entered)) sleep_ms(0);
    sleep_ms(STALL_MS / 3); /* inside uform_arena_new_in, stalled before it leaves */
    CHECK_OK(uform_executor_free(racer.executor));
    CHECK_EQ_INT(atomic_load(&stalls_finished), 1); /* free returned only after it left */
    pthread_join(thread, NULL);
    if (racer.status == UFORM_STATUS_OK) {
        /* It counted in before free began: it holds the executor, its devices still open. */
        CHECK(vram_device_used(&cu, 0) >= (1u << 20));
        uform_arena_free(racer.arena);
    } else {
        CHECK_STATUS(racer.status, UFORM_STATUS_INVALID_ARGUMENT); /* free began first */
    }
    CHECK_EQ_INT(vram_device_used(&cu, 0), 0);

    /* 2. A device call whose stream is still busy while another thread frees the executor. */
    device_call_t call = {vram_executor(NULL, 0, 0), 0, 0, UFORM_STATUS_OK, NULL};
    CHECK(pthread_create(&thread, NULL, run_devices, &call) == 0);
    while (!atomic_load(&call.started)) sleep_ms(0);
    CHECK_OK(uform_executor_free(call.executor));
    CHECK_EQ_INT(atomic_load(&call.stream_done), 1); /* the call drained its streams first */
    pthread_join(thread, NULL);
    CHECK_OK(call.status);

    /* 3. An arena asked for once free has begun: refused. Free is kept waiting by a device call
     * whose streams wait on a gate the test opens only afterwards. */
    gate_t gate = GATE_INIT;
    device_call_t holder = {vram_executor(NULL, 0, 0), 0, 0, UFORM_STATUS_OK, &gate};
    CHECK(pthread_create(&thread, NULL, run_devices, &holder) == 0);
    while (!atomic_load(&holder.started)) sleep_ms(0);
    pthread_t freer;
    CHECK(pthread_create(&freer, NULL, free_executor, holder.executor) == 0);
    wait_closing(holder.executor);
    uform_arena_t *late = NULL;
    CHECK_STATUS(uform_arena_new_in(holder.executor, 4096, &late), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_ERROR_NAMES("freed");
    CHECK(late == NULL);
    gate_open(&gate);
    pthread_join(thread, NULL);
    CHECK_OK(holder.status);
    pthread_join(freer, NULL);
    CHECK_EQ_INT(vram_device_used(&cu, 0), 0);

    /* 4. The GPU class read while free begins: free returns only after the read left. */
    class_reader_t reader = {vram_executor(NULL, 0, 0), 0, UFORM_GPU_CLASS_NONE};
    int stalls_before = atomic_load(&stalls_finished);
    CHECK(pthread_create(&thread, NULL, read_gpu_class, &reader) == 0);
    while (!atomic_load(&reader.entered)) sleep_ms(0);
    sleep_ms(STALL_MS / 3); /* inside uform_executor_gpu_class, stalled before it leaves */
    CHECK_OK(uform_executor_free(reader.executor));
    CHECK_EQ_INT(atomic_load(&stalls_finished), stalls_before + 1);
    pthread_join(thread, NULL);
    CHECK_EQ_INT((int)reader.gpu_class, (int)UFORM_GPU_CLASS_NVIDIA_HOPPER);
    uform__test_before_leave = NULL;
    TEST_DONE();
}
