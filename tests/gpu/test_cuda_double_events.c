/* The CUDA driver test double's events keep the driver's semantics: an event captures the work
 * its stream had queued when it was recorded and completes, in stream order, when the stream
 * gets there (NOT_READY before, SUCCESS after; never recorded is SUCCESS); recording again
 * captures anew and later work is not captured; cuEventSynchronize waits; the legacy NULL
 * stream's implicit order is part of what is captured; an event may be destroyed while its work
 * is pending (the work still runs, the handle is invalid after); bad flags, handles and
 * contexts fail as cuda.h documents; and the events resolve through cuGetProcAddress at their
 * ABI's version and by dlsym in the legacy (pre-12.0) build. */
#include <string.h>
#include <time.h>

#include "cuda_double_driver.h"

static void set_flag(void *flag) { __atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE); }
static int flag_set(int *flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }

static void *open_later(void *gate) {
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    gate_open(gate);
    return NULL;
}

static void check_bytes(const unsigned char *bytes, size_t count, unsigned char value) {
    for (size_t i = 0; i < count; i++)
        if (bytes[i] != value) TEST_FAIL_("byte %zu is %u, not %u", i, bytes[i], value);
}

/* The legacy build exports every execution entry point by its versioned name, events included,
 * and they work through dlsym alone. */
static void check_legacy_build(void) {
    void *legacy = dlopen(UFORM_TEST_CUDA_DOUBLE_LEGACY, RTLD_NOW | RTLD_LOCAL);
    CHECK(legacy != NULL);
    CHECK(dlsym(legacy, "cuGetProcAddress_v2") == NULL);
#define LEGACY_HAS_(field, base, version, symbol, type)                                            \
    if (!dlsym(legacy, symbol)) TEST_FAIL_("the legacy build lacks %s", symbol);
    UFORM_CUDA_EXECUTION_ENTRY_POINTS(LEGACY_HAS_)
#undef LEGACY_HAS_
    uform_cuInit_t init = (uform_cuInit_t)dlsym(legacy, "cuInit");
    uform_cuDevicePrimaryCtxRetain_t retain = (uform_cuDevicePrimaryCtxRetain_t)dlsym(legacy, "cuDevicePrimaryCtxRetain");
    uform_cuDevicePrimaryCtxRelease_t release =
        (uform_cuDevicePrimaryCtxRelease_t)dlsym(legacy, "cuDevicePrimaryCtxRelease_v2");
    uform_cuCtxSetCurrent_t set_current = (uform_cuCtxSetCurrent_t)dlsym(legacy, "cuCtxSetCurrent");
    uform_cuLaunchHostFunc_t launch = (uform_cuLaunchHostFunc_t)dlsym(legacy, "cuLaunchHostFunc");
    uform_cuEventCreate_t create = (uform_cuEventCreate_t)dlsym(legacy, "cuEventCreate");
    uform_cuEventRecord_t record = (uform_cuEventRecord_t)dlsym(legacy, "cuEventRecord");
    uform_cuEventQuery_t query = (uform_cuEventQuery_t)dlsym(legacy, "cuEventQuery");
    uform_cuEventSynchronize_t synchronize = (uform_cuEventSynchronize_t)dlsym(legacy, "cuEventSynchronize");
    uform_cuEventDestroy_t destroy = (uform_cuEventDestroy_t)dlsym(legacy, "cuEventDestroy_v2");
    CHECK_CU(init(0), UFORM_CUDA_SUCCESS);
    uform_cuContext context = NULL;
    CHECK_CU(retain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(set_current(context), UFORM_CUDA_SUCCESS);
    uform_cuEvent event = NULL;
    CHECK_CU(create(&event, UFORM_CU_EVENT_DISABLE_TIMING), UFORM_CUDA_SUCCESS);
    gate_t gate = GATE_INIT;
    CHECK_CU(launch(NULL, gate_wait, &gate), UFORM_CUDA_SUCCESS);
    CHECK_CU(record(event, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(query(event), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&gate);
    CHECK_CU(synchronize(event), UFORM_CUDA_SUCCESS);
    CHECK_CU(query(event), UFORM_CUDA_SUCCESS);
    CHECK_CU(destroy(event), UFORM_CUDA_SUCCESS);
    CHECK_CU(query(event), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(release(0), UFORM_CUDA_SUCCESS);
    CHECK_CU(set_current(NULL), UFORM_CUDA_SUCCESS);
    /* Not dlclose'd: the legacy NULL stream's thread still runs in it. */
}

int main(void) {
    cuda_double_t cu = cuda_double_open("device memory=64M\ndevice memory=64M");

    /* cuGetProcAddress: cuEventDestroy at 4.0 or later is cuEventDestroy_v2; the older ABI is
     * not emulated. (cuda_double_open bound every event entry point at its listed version.) */
    void *library = dlopen(UFORM_TEST_CUDA_DOUBLE, RTLD_NOW | RTLD_NOLOAD);
    CHECK(library != NULL);
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)dlsym(library, "cuGetProcAddress_v2");
    void *pointer = NULL;
    uform_cuProcAddressQueryResult found = 99;
    CHECK_CU(get_proc("cuEventDestroy", &pointer, 12000, 0, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == dlsym(library, "cuEventDestroy_v2") && pointer == (void *)cu.cuEventDestroy);
    CHECK_CU(get_proc("cuEventDestroy", &pointer, 3020, 0, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == NULL);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK_CU(get_proc("cuEventQuery", &pointer, 2000, 0, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == (void *)cu.cuEventQuery);

    /* Creating needs a current context. */
    uform_cuEvent event = NULL;
    CHECK_CU(cu.cuEventCreate(&event, 0), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    uform_cuContext context = NULL, other = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&other, 1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);

    /* Flags: DEFAULT, BLOCKING_SYNC, DISABLE_TIMING, INTERPROCESS (4) only with DISABLE_TIMING. */
    CHECK_CU(cu.cuEventCreate(NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuEventCreate(&event, 8), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuEventCreate(&event, 0x80000000u), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuEventCreate(&event, 4), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu.cuEventCreate(&event, 4 | UFORM_CU_EVENT_BLOCKING_SYNC), UFORM_CUDA_ERROR_INVALID_VALUE);
    uform_cuEvent interprocess = NULL, blocking_sync = NULL, first = NULL, second = NULL;
    CHECK_CU(cu.cuEventCreate(&interprocess, 4 | UFORM_CU_EVENT_DISABLE_TIMING), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&blocking_sync, UFORM_CU_EVENT_BLOCKING_SYNC | UFORM_CU_EVENT_DISABLE_TIMING),
             UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&first, UFORM_CU_EVENT_DEFAULT), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&second, UFORM_CU_EVENT_DISABLE_TIMING), UFORM_CUDA_SUCCESS);
    CHECK(first && second && first != second && interprocess != blocking_sync);

    /* Never recorded: an empty set of work, complete; synchronising returns at once. */
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventSynchronize(first), UFORM_CUDA_SUCCESS);

    uform_cuStream stream = NULL;
    CHECK_CU(cu.cuStreamCreate(&stream, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    enum { BYTES = 4096 };
    uform_cuDevicePtr device_memory = 0;
    CHECK_CU(cu.cuMemAlloc(&device_memory, BYTES), UFORM_CUDA_SUCCESS);
    unsigned char *host = NULL;
    CHECK_CU(cu.cuMemHostAlloc((void **)&host, BYTES, 0), UFORM_CUDA_SUCCESS);
    memset(host, 0, BYTES);

    /* Stream order behind gates: [gate g1] [memset, copy back] (first) [gate g2] [flag] (second).
     * Both are NOT_READY while g1 holds the stream; opening g1 completes the first with its copy
     * done, while the second stays NOT_READY behind g2. */
    gate_t g1 = GATE_INIT, g2 = GATE_INIT;
    int after_g2 = 0;
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &g1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemsetD8Async(device_memory, 0xE1, BYTES, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemcpyDtoHAsync(host, device_memory, BYTES, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(first, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &g2), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(stream, set_flag, &after_g2), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(second, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_ERROR_NOT_READY);
    CHECK_CU(cu.cuEventQuery(second), UFORM_CUDA_ERROR_NOT_READY);
    check_bytes(host, BYTES, 0); /* recorded, not run */
    gate_open(&g1);
    CHECK_CU(cu.cuEventSynchronize(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_SUCCESS);
    check_bytes(host, BYTES, 0xE1); /* the work before the event is done */
    CHECK_CU(cu.cuEventQuery(second), UFORM_CUDA_ERROR_NOT_READY);
    CHECK(!flag_set(&after_g2));
    gate_open(&g2);
    CHECK_CU(cu.cuEventSynchronize(second), UFORM_CUDA_SUCCESS);
    CHECK(flag_set(&after_g2));
    CHECK_CU(cu.cuEventQuery(second), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(stream), UFORM_CUDA_SUCCESS);

    /* Later work is not captured: recorded on an idle stream, the event stays complete while
     * the stream is held afterwards. Recording again captures the held work. */
    gate_t g3 = GATE_INIT;
    CHECK_CU(cu.cuEventRecord(first, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &g3), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventSynchronize(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(stream), UFORM_CUDA_ERROR_NOT_READY);
    CHECK_CU(cu.cuEventRecord(first, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_ERROR_NOT_READY);
    /* cuEventSynchronize waits: another thread opens the gate later. */
    int before_record = 0;
    CHECK_CU(cu.cuLaunchHostFunc(stream, set_flag, &before_record), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(blocking_sync, stream), UFORM_CUDA_SUCCESS);
    pthread_t opener;
    CHECK(pthread_create(&opener, NULL, open_later, &g3) == 0);
    CHECK_CU(cu.cuEventSynchronize(blocking_sync), UFORM_CUDA_SUCCESS);
    CHECK(flag_set(&before_record));
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_SUCCESS);
    pthread_join(opener, NULL);

    /* The legacy NULL stream: recorded on it, the event also waits for the work already queued
     * on the context's blocking streams (not on NON_BLOCKING ones); recorded on a blocking
     * stream, for the NULL stream's. Recording does not wait: the caller goes on. */
    uform_cuStream blocking = NULL;
    CHECK_CU(cu.cuStreamCreate(&blocking, UFORM_CU_STREAM_DEFAULT), UFORM_CUDA_SUCCESS);
    gate_t held = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(blocking, gate_wait, &held), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(first, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&held);
    CHECK_CU(cu.cuEventSynchronize(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamQuery(blocking), UFORM_CUDA_SUCCESS);
    gate_t aside = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &aside), UFORM_CUDA_SUCCESS); /* NON_BLOCKING */
    CHECK_CU(cu.cuEventRecord(first, NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_SUCCESS);
    gate_t null_held = GATE_INIT;
    CHECK_CU(cu.cuLaunchHostFunc(NULL, gate_wait, &null_held), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(second, blocking), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(second), UFORM_CUDA_ERROR_NOT_READY);
    CHECK_CU(cu.cuEventRecord(interprocess, stream), UFORM_CUDA_SUCCESS); /* NON_BLOCKING: only its own */
    CHECK_CU(cu.cuEventQuery(interprocess), UFORM_CUDA_ERROR_NOT_READY); /* held by `aside` */
    gate_open(&null_held);
    CHECK_CU(cu.cuEventSynchronize(second), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(interprocess), UFORM_CUDA_ERROR_NOT_READY);
    gate_open(&aside);
    CHECK_CU(cu.cuEventSynchronize(interprocess), UFORM_CUDA_SUCCESS);

    /* Destroyed while pending: returns at once, the handle is invalid after, the work still runs. */
    gate_t parting = GATE_INIT;
    int ran = 0;
    uform_cuEvent pending = NULL;
    CHECK_CU(cu.cuEventCreate(&pending, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(stream, gate_wait, &parting), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(stream, set_flag, &ran), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(pending, stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(pending), UFORM_CUDA_ERROR_NOT_READY);
    CHECK_CU(cu.cuEventDestroy(pending), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(pending), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventSynchronize(pending), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventRecord(pending, stream), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventDestroy(pending), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK(!flag_set(&ran));
    gate_open(&parting);
    CHECK_CU(cu.cuStreamSynchronize(stream), UFORM_CUDA_SUCCESS);
    CHECK(flag_set(&ran));

    /* An event whose stream is destroyed with the work pending still completes with that work. */
    uform_cuStream doomed = NULL;
    gate_t last_gate = GATE_INIT;
    int doomed_ran = 0;
    CHECK_CU(cu.cuStreamCreate(&doomed, UFORM_CU_STREAM_NON_BLOCKING), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(doomed, gate_wait, &last_gate), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuLaunchHostFunc(doomed, set_flag, &doomed_ran), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(second, doomed), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(doomed), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(second), UFORM_CUDA_ERROR_NOT_READY);
    CHECK_CU(cu.cuEventRecord(first, doomed), UFORM_CUDA_ERROR_INVALID_HANDLE); /* no stream now */
    gate_open(&last_gate);
    CHECK_CU(cu.cuEventSynchronize(second), UFORM_CUDA_SUCCESS);
    CHECK(flag_set(&doomed_ran));

    /* Bad handles: NULL, not an event, an event and a stream of different contexts. */
    CHECK_CU(cu.cuEventQuery(NULL), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventSynchronize(NULL), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventRecord(NULL, stream), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventDestroy(NULL), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventQuery((uform_cuEvent)&ran), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventRecord((uform_cuEvent)stream, stream), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventRecord(first, (uform_cuStream)first), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuCtxSetCurrent(other), UFORM_CUDA_SUCCESS);
    uform_cuStream other_stream = NULL;
    uform_cuEvent other_event = NULL;
    CHECK_CU(cu.cuStreamCreate(&other_stream, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventCreate(&other_event, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(first, NULL), UFORM_CUDA_ERROR_INVALID_HANDLE);   /* first is context's */
    CHECK_CU(cu.cuEventRecord(other_event, other_stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventRecord(first, other_stream), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventRecord(other_event, stream), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventRecord(other_event, NULL), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuEventQuery(other_event), UFORM_CUDA_SUCCESS); /* querying another context's event is fine */

    /* The last release of a context ends its events. */
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&other, 1), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(other_event), UFORM_CUDA_ERROR_INVALID_HANDLE);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(1), UFORM_CUDA_SUCCESS);

    /* Without a current context, every event call is INVALID_CONTEXT. */
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventQuery(first), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuEventRecord(first, NULL), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuEventSynchronize(first), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuEventDestroy(first), UFORM_CUDA_ERROR_INVALID_CONTEXT);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);

    CHECK_CU(cu.cuEventDestroy(first), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventDestroy(second), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventDestroy(interprocess), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuEventDestroy(blocking_sync), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(stream), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuStreamDestroy(blocking), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFreeHost(host), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuMemFree(device_memory), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);

    check_legacy_build();
    TEST_DONE();
}
