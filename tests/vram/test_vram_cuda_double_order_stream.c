/* uform_executor_order_stream against the CUDA driver test double: a consumer's stream waits on
 * the device for the executor's earlier calls, and the host waits only for what they have not
 * yet queued.
 * - A deferred device function holds the executor's stream behind a gate (its work queued, the
 *   call still draining): the verb returns at once, with the gate still shut, and work queued
 *   on the consumer's stream afterwards runs only once the gate opens and the function's memset
 *   has run. Without the device-side wait that work would run at once.
 * - A deferred copy queued behind it has queued nothing yet: the verb waits on the host until it
 *   has, and the consumer then sees the copied bytes.
 * - The default-stream handles (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are accepted.
 * - Refusals: NULL and RAM executors, a device out of range, a stream handle the driver refuses,
 *   a call from the executor's own callback, another thread's synchronous call (CONTENDED), a
 *   fork()ed child (FORKED). */
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vram_double.h"

static const char config[] = "device cc=9.0 memory=64M\n";
static cuda_double_t cu;

#define BYTES 4096

static void pause_ms(long ms) {
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

typedef struct held_t {
    gate_t gate;
    uform_cuDevicePtr buffer;
    _Atomic int gate_passed; /* set on the executor's stream right after the gate */
} held_t;

static void note_passed(void *argument) { atomic_store((_Atomic int *)argument, 1); }

/* Queues, on the executor's stream: the gate, a memset of the buffer to 0xAB, a note. */
static uform_status_t hold_stream(void *context, const uform_device_slot_t *slot) {
    held_t *held = context;
    CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, gate_wait, &held->gate), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemsetD8Async(held->buffer, 0xAB, BYTES, (uform_cuStream)slot->stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, note_passed, &held->gate_passed), UFORM_CUDA_SUCCESS);
    return UFORM_STATUS_OK;
}

/* What the consumer's stream saw when its work ran. */
typedef struct consumer_t {
    const held_t *held;
    _Atomic int ran;
    int gate_had_passed;
    unsigned char first, last;
} consumer_t;

static void consume(void *argument) {
    consumer_t *consumer = argument;
    const unsigned char *bytes = (const unsigned char *)(uintptr_t)consumer->held->buffer;
    consumer->gate_had_passed = atomic_load(&consumer->held->gate_passed);
    consumer->first = bytes[0];
    consumer->last = bytes[BYTES - 1];
    atomic_store(&consumer->ran, 1);
}

/* Opens the gate after 3 s if the test has not: a verb waiting on the host then returns late
 * (and the test fails on `opened_by_watchdog`) instead of hanging. */
typedef struct watchdog_t {
    gate_t *gate;
    _Atomic int cancel;
    _Atomic int opened_by_watchdog;
} watchdog_t;

static void *watchdog(void *argument) {
    watchdog_t *dog = argument;
    for (int i = 0; i < 300 && !atomic_load(&dog->cancel); i++) pause_ms(10);
    if (!atomic_load(&dog->cancel)) {
        atomic_store(&dog->opened_by_watchdog, 1);
        gate_open(dog->gate);
    }
    return NULL;
}

static void ordered_on_the_device(uform_executor_t *executor, uform_cuStream consumer_stream) {
    held_t held = {GATE_INIT, 0, 0};
    CHECK_CU(cu.cuMemAlloc(&held.buffer, BYTES), UFORM_CUDA_SUCCESS);
    memset((void *)(uintptr_t)held.buffer, 0, BYTES);
    uform_deferred_t *deferred = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &deferred;
    CHECK_OK(uform_executor_for_devices(executor, &call, hold_stream, &held));
    watchdog_t dog = {&held.gate, 0, 0};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, watchdog, &dog) == 0);

    CHECK_OK(uform_executor_order_stream(executor, 0, consumer_stream));
    CHECK_EQ_INT(atomic_load(&dog.opened_by_watchdog), 0); /* returned with the gate shut */
    CHECK_EQ_INT(atomic_load(&held.gate_passed), 0);
    consumer_t consumer = {&held, 0, 0, 0, 0};
    CHECK_CU(cu.cuLaunchHostFunc(consumer_stream, consume, &consumer), UFORM_CUDA_SUCCESS);
    pause_ms(100);
    CHECK_EQ_INT(atomic_load(&consumer.ran), 0); /* the consumer's stream waits for the gate */
    CHECK_EQ_INT(uform_deferred_poll(deferred), UFORM_STATUS_TIMEOUT);

    atomic_store(&dog.cancel, 1);
    pthread_join(thread, NULL);
    CHECK_EQ_INT(atomic_load(&dog.opened_by_watchdog), 0);
    gate_open(&held.gate);
    CHECK_CU(cu.cuStreamSynchronize(consumer_stream), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(atomic_load(&consumer.ran), 1);
    CHECK_EQ_INT(consumer.gate_had_passed, 1);
    CHECK_EQ_INT(consumer.first, 0xAB);
    CHECK_EQ_INT(consumer.last, 0xAB);
    CHECK_OK(uform_deferred_wait(deferred, -1));
    uform_deferred_free(deferred);
    CHECK_CU(cu.cuMemFree(held.buffer), UFORM_CUDA_SUCCESS);
}

typedef struct order_thread_t {
    uform_executor_t *executor;
    uform_cuStream stream;
    _Atomic int returned;
    uform_status_t status;
} order_thread_t;

static void *order_on_thread(void *argument) {
    order_thread_t *order = argument;
    order->status = uform_executor_order_stream(order->executor, 0, order->stream);
    atomic_store(&order->returned, 1);
    return NULL;
}

/* A copy queued behind the held function has queued nothing yet: the host waits for it. */
static void waits_for_what_is_not_yet_queued(uform_executor_t *executor, uform_cuStream consumer_stream) {
    held_t held = {GATE_INIT, 0, 0};
    CHECK_CU(cu.cuMemAlloc(&held.buffer, BYTES), UFORM_CUDA_SUCCESS);
    unsigned char *source = malloc(BYTES);
    CHECK(source != NULL);
    memset(source, 0x5C, BYTES);
    uform_deferred_t *first = NULL, *second = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &first;
    CHECK_OK(uform_executor_for_devices(executor, &call, hold_stream, &held));
    call.deferred = &second;
    CHECK_OK(uform_executor_copy_to_device(executor, &call, 0, (void *)(uintptr_t)held.buffer, source, BYTES));

    order_thread_t order = {executor, consumer_stream, 0, UFORM_STATUS_OK};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, order_on_thread, &order) == 0);
    pause_ms(100);
    CHECK_EQ_INT(atomic_load(&order.returned), 0); /* the copy has not queued its DMA */
    gate_open(&held.gate);
    pthread_join(thread, NULL);
    CHECK_OK(order.status);
    consumer_t consumer = {&held, 0, 0, 0, 0};
    CHECK_CU(cu.cuLaunchHostFunc(consumer_stream, consume, &consumer), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamSynchronize(consumer_stream), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(consumer.first, 0x5C); /* the copy's bytes, not the memset's */
    CHECK_EQ_INT(consumer.last, 0x5C);
    CHECK_OK(uform_deferred_wait(first, -1));
    CHECK_OK(uform_deferred_wait(second, -1));
    uform_deferred_free(first);
    uform_deferred_free(second);
    free(source);
    CHECK_CU(cu.cuMemFree(held.buffer), UFORM_CUDA_SUCCESS);
}

typedef struct from_callback_t {
    uform_executor_t *executor;
    uform_status_t status;
    char message[256];
} from_callback_t;

static uform_status_t order_from_callback(void *context, const uform_device_slot_t *slot) {
    from_callback_t *inside = context;
    inside->status = uform_executor_order_stream(inside->executor, slot->device, slot->stream);
    snprintf(inside->message, sizeof inside->message, "%s", uform_last_error());
    return UFORM_STATUS_OK;
}

typedef struct sync_holder_t {
    uform_executor_t *executor;
    gate_t entered, leave;
    uform_status_t status;
} sync_holder_t;

static uform_status_t hold_on_host(void *context, const uform_device_slot_t *slot) {
    (void)slot;
    sync_holder_t *holder = context;
    gate_open(&holder->entered);
    gate_wait(&holder->leave);
    return UFORM_STATUS_OK;
}

static void *hold_synchronously(void *argument) {
    sync_holder_t *holder = argument;
    holder->status = uform_executor_for_devices(holder->executor, NULL, hold_on_host, holder);
    return NULL;
}

int main(void) {
    cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    /* The consumer: a stream of its own on device 0's primary context, as a framework's. */
    uform_cuContext context = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    uform_cuStream consumer_stream = NULL;
    CHECK_CU(cu.cuStreamCreate(&consumer_stream, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);

    ordered_on_the_device(executor, consumer_stream);
    waits_for_what_is_not_yet_queued(executor, consumer_stream);

    /* Nothing earlier: OK at once, for every default-stream handle; the thread's context stays. */
    CHECK_OK(uform_executor_order_stream(executor, 0, NULL));
    CHECK_OK(uform_executor_order_stream(executor, 0, (void *)UFORM_CU_STREAM_LEGACY));
    CHECK_OK(uform_executor_order_stream(executor, 0, (void *)UFORM_CU_STREAM_PER_THREAD));
    uform_cuContext current = NULL;
    CHECK_CU(cu.cuCtxGetCurrent(&current), UFORM_CUDA_SUCCESS);
    CHECK(current == context);

    /* Refusals. */
    CHECK_EQ_INT(uform_executor_order_stream(NULL, 0, consumer_stream), UFORM_STATUS_INVALID_ARGUMENT);
    uform_executor_t *ram = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, &ram));
    CHECK_EQ_INT(uform_executor_order_stream(ram, 0, consumer_stream), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_OK(uform_executor_free(ram));
    CHECK_EQ_INT(uform_executor_order_stream(executor, 1, consumer_stream), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(uform_last_error(), "device 1 of 1") != NULL);
    CHECK_EQ_INT(uform_executor_order_stream(executor, 0, (void *)&cu), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(uform_last_error(), "cuStreamWaitEvent") != NULL);
    from_callback_t inside = {executor, UFORM_STATUS_OK, ""};
    CHECK_OK(uform_executor_for_devices(executor, NULL, order_from_callback, &inside));
    CHECK_EQ_INT(inside.status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(inside.message, "own callbacks") != NULL);

    sync_holder_t holder = {executor, GATE_INIT, GATE_INIT, UFORM_STATUS_OK};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, hold_synchronously, &holder) == 0);
    gate_wait(&holder.entered);
    CHECK_EQ_INT(uform_executor_order_stream(executor, 0, consumer_stream), UFORM_STATUS_CONTENDED);
    gate_open(&holder.leave);
    pthread_join(thread, NULL);
    CHECK_OK(holder.status);

    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) _exit(uform_executor_order_stream(executor, 0, consumer_stream) == UFORM_STATUS_FORKED ? 0 : 1);
    int child_status = 0;
    CHECK(waitpid(child, &child_status, 0) == child);
    CHECK(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0);

    CHECK_CU(cu.cuStreamDestroy(consumer_stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
