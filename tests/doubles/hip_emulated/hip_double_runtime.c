/* A test double of the HIP runtime's ABI (libamdhip64.so, ROCm 6), emulated on the host: the entry
 * points uform binds, with HIP's documented semantics (lazy initialisation, hipErrorNoDevice from
 * hipGetDeviceCount, a current device per thread, hipErrorInvalidValue for NULL outputs, streams
 * running their work in order and asynchronously, events, sticky device faults), over the devices
 * and faults UFORM_HIP_DOUBLE_CONFIG describes. Tests load it through UFORM_HIP_LIBRARY. It never
 * stands in for a real GPU check.
 *
 * Every exported entry point is a GNU indirect function: dlsym runs its resolver, which answers
 * NULL for a symbol `fault missing=` names, so a loader sees exactly what a runtime lacking that
 * symbol shows it (dlsym finds nothing). Inside the double, only the *_impl functions are called. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/double_config.h"
#include "gpu/hip/hip_abi.h"
#include "hip_double_config.h"
#include "hip_double_errors.h"

#define EXPORT __attribute__((visibility("default")))

static hip_double_config_t config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void load_config(void) {
    char *owned = NULL;
    const char *unreadable = NULL;
    const char *text = double_config_text("UFORM_HIP_DOUBLE_CONFIG", 1 << 20, &owned, &unreadable);
    if (text || unreadable) hip_double_config_parse(text, &config);
    if (unreadable) snprintf(config.error, sizeof config.error, "cannot read %s", unreadable);
    free(owned);
    if (config.error[0]) fprintf(stderr, "HIP runtime test double: configuration refused: %s\n", config.error);
}

static const hip_double_config_t *configuration(void) {
    pthread_once(&config_once, load_config);
    return &config;
}

/* Whether dlsym may see `symbol` (`fault missing=` hides it). */
static int visible(const char *symbol) {
    const hip_double_config_t *c = configuration();
    for (size_t i = 0; i < c->missing_count; i++)
        if (strcmp(c->missing[i], symbol) == 0) return 0;
    return 1;
}

/* ENTRY(return type, name, (parameters)) { body }: the exported indirect function `name`, its
 * resolver, and its implementation name##_impl (the body). */
#define ENTRY(ret, name, params)                                                                   \
    static ret name##_impl params;                                                                 \
    static __typeof__(name##_impl) *name##_resolve(void) { return visible(#name) ? name##_impl : NULL; } \
    EXPORT ret name params __attribute__((ifunc(#name "_resolve")));                               \
    static ret name##_impl params

/* HIP initialises lazily: every call initialises first and answers initialisation's failure. */
static uform_hipError initialize(void) {
    const hip_double_config_t *c = configuration();
    if (c->error[0]) return UFORM_HIP_ERROR_UNKNOWN; /* a refused configuration is no machine */
    return c->init_result;
}

#define INITIALIZE()                                                                               \
    do {                                                                                           \
        uform_hipError init_ = initialize();                                                       \
        if (init_ != UFORM_HIP_SUCCESS) return init_;                                              \
    } while (0)

static int valid_device(int device) { return device >= 0 && (size_t)device < config.device_count; }

/* ---- Errors, initialisation, devices ---- */

ENTRY(const char *, hipGetErrorName, (uform_hipError error)) {
    switch (error) {
#define CASE_(text, number)                                                                        \
    case number: return #text;
        HIP_DOUBLE_ERRORS(CASE_)
#undef CASE_
    }
    return "hipErrorUnknown"; /* what ROCm's runtime answers for a number it does not know */
}

ENTRY(uform_hipError, hipInit, (unsigned int flags)) {
    if (flags != 0) return UFORM_HIP_ERROR_INVALID_VALUE;
    return initialize();
}

ENTRY(uform_hipError, hipGetDeviceCount, (int *count)) {
    if (!count) return UFORM_HIP_ERROR_INVALID_VALUE;
    *count = 0;
    INITIALIZE();
    *count = (int)config.device_count;
    return config.device_count ? UFORM_HIP_SUCCESS : UFORM_HIP_ERROR_NO_DEVICE;
}

ENTRY(uform_hipError, hipGetDevicePropertiesR0600, (uform_hipDeviceProp_R0600 * properties, int device)) {
    INITIALIZE();
    if (!properties) return UFORM_HIP_ERROR_INVALID_VALUE;
    if (!valid_device(device)) return UFORM_HIP_ERROR_INVALID_DEVICE;
    const hip_double_device_t *d = &config.devices[device];
    memset(properties, 0, sizeof *properties);
    /* Byte-wise, as the runtime copies it (a long name may be split mid-character). */
    snprintf(properties->name, sizeof properties->name, "%s", d->name);
    snprintf(properties->gcnArchName, sizeof properties->gcnArchName, "%s", d->arch);
    properties->totalGlobalMem = (size_t)d->memory_bytes;
    properties->multiProcessorCount = d->compute_units;
    properties->major = d->major;
    properties->minor = d->minor;
    properties->pciDomainID = (int)d->pci_domain;
    properties->pciBusID = (int)d->pci_bus;
    properties->pciDeviceID = (int)d->pci_device;
    properties->warpSize = 64;
    properties->maxThreadsPerBlock = 1024;
    properties->canMapHostMemory = 1;
    properties->concurrentKernels = 1;
    properties->isLargeBar = 1;
    return UFORM_HIP_SUCCESS;
}

/* "0000:05:00.0": lower-case hex as ROCm spells it, cut to `length`. */
ENTRY(uform_hipError, hipDeviceGetPCIBusId, (char *bus_id, int length, int device)) {
    INITIALIZE();
    if (!bus_id || length <= 0) return UFORM_HIP_ERROR_INVALID_VALUE;
    if (!valid_device(device)) return UFORM_HIP_ERROR_INVALID_DEVICE;
    const hip_double_device_t *d = &config.devices[device];
    snprintf(bus_id, (size_t)length, "%04x:%02x:%02x.%x", d->pci_domain, d->pci_bus, d->pci_device, d->pci_function);
    return UFORM_HIP_SUCCESS;
}

/* ---- The current device, sticky faults ---- */

static __thread int current_device; /* HIP: a thread starts on device 0 */
static atomic_uint sticky[HIP_DOUBLE_MAX_DEVICES]; /* a device's sticky error; 0 while healthy */

ENTRY(uform_hipError, hipSetDevice, (int device)) {
    INITIALIZE();
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    if (!valid_device(device)) return UFORM_HIP_ERROR_INVALID_DEVICE;
    current_device = device;
    return UFORM_HIP_SUCCESS;
}

/* `fault get_device=N`: from the Nth call on (counted from 1, process-wide), hipErrorInvalidDevice,
 * one of the errors hip_runtime_api.h lists for it. */
static atomic_ulong get_device_calls;

ENTRY(uform_hipError, hipGetDevice, (int *device)) {
    INITIALIZE();
    if (!device) return UFORM_HIP_ERROR_INVALID_VALUE;
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    unsigned long call = atomic_fetch_add(&get_device_calls, 1) + 1;
    if (config.get_device_fault && call >= config.get_device_fault) return UFORM_HIP_ERROR_INVALID_DEVICE;
    *device = current_device;
    return UFORM_HIP_SUCCESS;
}

/* Calls working on the current device start here: initialised, a device, and no sticky error. */
static uform_hipError enter_device(int *device) {
    uform_hipError result = initialize();
    if (result != UFORM_HIP_SUCCESS) return result;
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    *device = current_device;
    return atomic_load(&sticky[*device]);
}

#define ENTER_DEVICE()                                                                             \
    int device = 0;                                                                                \
    do {                                                                                           \
        uform_hipError result_ = enter_device(&device);                                            \
        if (result_ != UFORM_HIP_SUCCESS) return result_;                                          \
    } while (0)

/* ---- Memory: device memory is host memory tagged with its device ---- */

typedef enum { ALLOCATION_DEVICE, ALLOCATION_HOST } allocation_kind_t;
typedef struct allocation_t {
    struct allocation_t *next;
    allocation_kind_t kind;
    char *base;
    size_t bytes;   /* what the caller asked for */
    size_t charged; /* device memory: what it counts against the device (256-byte granules) */
    unsigned flags; /* hipHostMalloc's flags */
    int device;
} allocation_t;

static pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;
static allocation_t *allocations;                     /* under memory_lock */
static uint64_t device_used[HIP_DOUBLE_MAX_DEVICES];  /* under memory_lock */
static atomic_ulong alloc_calls;                      /* hipMalloc calls, for `fault alloc=N` */
static atomic_ulong stream_operations;                /* enqueued operations, for `fault sticky=N` */

/* The allocation holding [address, address + bytes) (bytes > 0), or NULL. Under memory_lock. */
static allocation_t *allocation_holding(const void *address, size_t bytes) {
    const char *p = address;
    for (allocation_t *a = allocations; a; a = a->next)
        if (p >= a->base && p < a->base + a->bytes && bytes <= (size_t)(a->base + a->bytes - p)) return a;
    return NULL;
}

static int device_range(const void *address, size_t bytes) {
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = allocation_holding(address, bytes);
    int valid = found && found->kind == ALLOCATION_DEVICE;
    pthread_mutex_unlock(&memory_lock);
    return valid;
}

/* ---- Streams: each runs its queued operations in order on a host thread of its own ---- */

typedef struct event_t event_t;
typedef enum { OPERATION_COPY, OPERATION_HOST_FUNCTION, OPERATION_EVENT, OPERATION_WAIT_EVENT } operation_kind_t;
typedef struct operation_t {
    struct operation_t *next;
    operation_kind_t kind;
    void *destination;
    const void *source;
    size_t bytes;
    uform_hipHostFn function;
    void *user_data;
    event_t *event;         /* OPERATION_EVENT: the event, with a reference this operation holds */
    unsigned long sequence; /* OPERATION_EVENT: the record it completes; OPERATION_WAIT_EVENT: the
                             * record the stream waits for (the event's latest at hipStreamWaitEvent) */
    int faults;             /* the `fault sticky=N` operation */
} operation_t;

typedef struct stream_t {
    struct stream_t *next_live; /* the live list, under streams_lock */
    int device;
    unsigned flags;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    operation_t *head, *tail; /* queued; head is the one running (under lock) */
    int destroyed;            /* the thread drains the queue, then ends */
    int references;           /* its thread's and callers' in flight, under streams_lock */
} stream_t;

struct event_t {
    struct event_t *next_live; /* the live list, under events_lock */
    unsigned flags;
    int device;               /* the device of the stream it was last recorded on */
    unsigned long recorded;   /* records queued so far */
    unsigned long completed;  /* the latest record its stream has reached */
    int references;           /* the handle's and queued records', under events_lock */
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static stream_t *live_streams;                       /* under streams_lock */
static stream_t *null_streams[HIP_DOUBLE_MAX_DEVICES]; /* each device's NULL stream, made on first use */
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t events_changed = PTHREAD_COND_INITIALIZER;
static event_t *live_events; /* under events_lock */

static void put_event_locked(event_t *event) {
    if (--event->references == 0) free(event);
}

static void run_operation(stream_t *stream, operation_t *operation) {
    if (operation->faults) {
        unsigned expected = 0;
        atomic_compare_exchange_strong(&sticky[stream->device], &expected, UFORM_HIP_ERROR_ILLEGAL_ADDRESS);
    }
    if (operation->kind == OPERATION_EVENT) {
        /* An event completes even on a faulted device, so a wait on it ends (and reports the fault). */
        pthread_mutex_lock(&events_lock);
        if (operation->event->completed < operation->sequence) operation->event->completed = operation->sequence;
        put_event_locked(operation->event);
        pthread_cond_broadcast(&events_changed);
        pthread_mutex_unlock(&events_lock);
        return;
    }
    if (operation->kind == OPERATION_WAIT_EVENT) {
        /* The stream's later work starts once the awaited record completed (a record completes
         * on a faulted device too, so this ends). */
        pthread_mutex_lock(&events_lock);
        while (operation->event->completed < operation->sequence) pthread_cond_wait(&events_changed, &events_lock);
        put_event_locked(operation->event);
        pthread_mutex_unlock(&events_lock);
        return;
    }
    if (atomic_load(&sticky[stream->device])) return; /* a faulted device does no more work */
    if (operation->kind == OPERATION_COPY) memcpy(operation->destination, operation->source, operation->bytes);
    else operation->function(operation->user_data);
}

static void put_stream(stream_t *stream) {
    pthread_mutex_lock(&streams_lock);
    int last = --stream->references == 0;
    pthread_mutex_unlock(&streams_lock);
    if (!last) return;
    pthread_cond_destroy(&stream->changed);
    pthread_mutex_destroy(&stream->lock);
    free(stream);
}

static void *stream_thread(void *argument) {
    stream_t *stream = argument;
    pthread_mutex_lock(&stream->lock);
    for (;;) {
        while (!stream->head && !stream->destroyed) pthread_cond_wait(&stream->changed, &stream->lock);
        if (!stream->head) break; /* destroyed and drained */
        operation_t *operation = stream->head;
        pthread_mutex_unlock(&stream->lock);
        run_operation(stream, operation);
        pthread_mutex_lock(&stream->lock);
        stream->head = operation->next;
        if (!stream->head) stream->tail = NULL;
        free(operation);
        pthread_cond_broadcast(&stream->changed);
    }
    pthread_mutex_unlock(&stream->lock);
    put_stream(stream);
    return NULL;
}

static uform_hipError start_stream(int device, unsigned flags, stream_t **out) {
    stream_t *stream = calloc(1, sizeof *stream);
    if (!stream) return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    stream->device = device;
    stream->flags = flags;
    stream->references = 1; /* its thread's */
    pthread_mutex_init(&stream->lock, NULL);
    pthread_cond_init(&stream->changed, NULL);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int failed = pthread_create(&thread, &attributes, stream_thread, stream);
    pthread_attr_destroy(&attributes);
    if (failed) {
        pthread_cond_destroy(&stream->changed);
        pthread_mutex_destroy(&stream->lock);
        free(stream);
        return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    }
    *out = stream;
    return UFORM_HIP_SUCCESS;
}

static void drain(stream_t *stream) {
    pthread_mutex_lock(&stream->lock);
    while (stream->head) pthread_cond_wait(&stream->changed, &stream->lock);
    pthread_mutex_unlock(&stream->lock);
}

/* The live stream behind a handle (NULL: the current device's NULL stream), with a reference the
 * caller puts back; hipErrorInvalidHandle for a handle that is no live stream. A stream may be
 * used whatever the current device is: its work runs on its own device, as in HIP. */
static uform_hipError stream_of(uform_hipStream handle, int device, stream_t **out) {
    uform_hipError result = UFORM_HIP_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&streams_lock);
    if (!handle) {
        stream_t **slot = &null_streams[device];
        result = *slot ? UFORM_HIP_SUCCESS : start_stream(device, UFORM_HIP_STREAM_DEFAULT, slot);
        if (result == UFORM_HIP_SUCCESS) (*out = *slot)->references++;
    } else {
        for (stream_t *s = live_streams; s; s = s->next_live)
            if (s == (stream_t *)handle) {
                result = UFORM_HIP_SUCCESS;
                (*out = s)->references++;
            }
    }
    pthread_mutex_unlock(&streams_lock);
    return result;
}

/* Drains the streams of `device` (only its blocking ones when `blocking_only`; its NULL stream
 * too when `null_too`), without holding streams_lock while waiting. */
static void drain_streams(int device, int blocking_only, int null_too) {
    stream_t *selected[256];
    size_t count = 0;
    pthread_mutex_lock(&streams_lock);
    for (stream_t *s = live_streams; s && count < 255; s = s->next_live)
        if (s->device == device && (!blocking_only || !(s->flags & UFORM_HIP_STREAM_NON_BLOCKING))) {
            s->references++;
            selected[count++] = s;
        }
    if (null_too && null_streams[device]) {
        null_streams[device]->references++;
        selected[count++] = null_streams[device];
    }
    pthread_mutex_unlock(&streams_lock);
    for (size_t i = 0; i < count; i++) {
        drain(selected[i]);
        put_stream(selected[i]);
    }
}

static void drain_device(int device) { drain_streams(device, 0, 1); }

/* The NULL stream's implicit synchronisation with blocking streams, emulated from the calling
 * thread (HIP queues that wait on the device; here the caller waits). */
static void order_with_null_stream(stream_t *stream) {
    if (stream->flags & UFORM_HIP_STREAM_NON_BLOCKING) return;
    pthread_mutex_lock(&streams_lock);
    stream_t *null_stream = null_streams[stream->device];
    if (null_stream) null_stream->references++;
    pthread_mutex_unlock(&streams_lock);
    if (stream == null_stream) drain_streams(stream->device, 1, 0);
    else if (null_stream) drain(null_stream);
    if (null_stream) put_stream(null_stream);
}

/* Queues `operation` on `stream` (a reference the caller holds and keeps). The stream's device
 * must not have faulted: its sticky error is the answer then. */
static uform_hipError enqueue_counted(stream_t *stream, operation_t operation, int counted) {
    uform_hipError fault = atomic_load(&sticky[stream->device]);
    if (fault) return fault;
    operation_t *queued = malloc(sizeof *queued);
    if (!queued) return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    *queued = operation;
    queued->next = NULL;
    unsigned long number = counted ? atomic_fetch_add(&stream_operations, 1) + 1 : 0;
    queued->faults = config.sticky_fault && counted && number == config.sticky_fault;
    order_with_null_stream(stream);
    pthread_mutex_lock(&stream->lock);
    if (stream->tail) stream->tail->next = queued;
    else stream->head = queued;
    stream->tail = queued;
    pthread_cond_broadcast(&stream->changed);
    pthread_mutex_unlock(&stream->lock);
    return UFORM_HIP_SUCCESS;
}

static uform_hipError enqueue(stream_t *stream, operation_t operation) { return enqueue_counted(stream, operation, 1); }
/* A stream's wait for an event is no work of its own: `fault sticky=N` does not count it. */
static uform_hipError enqueue_wait(stream_t *stream, operation_t operation) {
    return enqueue_counted(stream, operation, 0);
}

ENTRY(uform_hipError, hipStreamCreateWithFlags, (uform_hipStream * handle, unsigned int flags)) {
    ENTER_DEVICE();
    if (!handle || (flags & ~(unsigned)UFORM_HIP_STREAM_NON_BLOCKING)) return UFORM_HIP_ERROR_INVALID_VALUE;
    stream_t *stream = NULL;
    uform_hipError result = start_stream(device, flags, &stream);
    if (result != UFORM_HIP_SUCCESS) return result;
    pthread_mutex_lock(&streams_lock);
    stream->next_live = live_streams;
    live_streams = stream;
    pthread_mutex_unlock(&streams_lock);
    *handle = (uform_hipStream)stream;
    return UFORM_HIP_SUCCESS;
}

/* Like ROCm's, the destroy finishes the stream's queued work before releasing it. */
ENTRY(uform_hipError, hipStreamDestroy, (uform_hipStream handle)) {
    INITIALIZE();
    if (!handle) return UFORM_HIP_ERROR_INVALID_HANDLE;
    stream_t *stream = NULL;
    pthread_mutex_lock(&streams_lock);
    for (stream_t **link = &live_streams; *link; link = &(*link)->next_live)
        if (*link == (stream_t *)handle) {
            stream = *link;
            *link = stream->next_live;
            stream->references++;
            break;
        }
    pthread_mutex_unlock(&streams_lock);
    if (!stream) return UFORM_HIP_ERROR_INVALID_HANDLE;
    drain(stream);
    pthread_mutex_lock(&stream->lock);
    stream->destroyed = 1;
    pthread_cond_broadcast(&stream->changed);
    pthread_mutex_unlock(&stream->lock);
    put_stream(stream);
    return UFORM_HIP_SUCCESS;
}

ENTRY(uform_hipError, hipStreamSynchronize, (uform_hipStream handle)) {
    INITIALIZE();
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    stream_t *stream = NULL;
    uform_hipError result = stream_of(handle, current_device, &stream);
    if (result != UFORM_HIP_SUCCESS) return result;
    drain(stream);
    result = atomic_load(&sticky[stream->device]);
    put_stream(stream);
    return result;
}

ENTRY(uform_hipError, hipStreamQuery, (uform_hipStream handle)) {
    INITIALIZE();
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    stream_t *stream = NULL;
    uform_hipError result = stream_of(handle, current_device, &stream);
    if (result != UFORM_HIP_SUCCESS) return result;
    pthread_mutex_lock(&stream->lock);
    int busy = stream->head != NULL;
    pthread_mutex_unlock(&stream->lock);
    result = atomic_load(&sticky[stream->device]);
    put_stream(stream);
    return result ? result : busy ? UFORM_HIP_ERROR_NOT_READY : UFORM_HIP_SUCCESS;
}

ENTRY(uform_hipError, hipDeviceSynchronize, (void)) {
    ENTER_DEVICE();
    drain_device(device);
    return atomic_load(&sticky[device]);
}

/* Checks the ranges up front, as the runtime does for its own allocations: a device side must lie
 * inside one hipMalloc allocation. */
ENTRY(uform_hipError, hipMemcpyAsync,
      (void *destination, const void *source, size_t bytes, uform_hipMemcpyKind kind, uform_hipStream handle)) {
    INITIALIZE();
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    if (kind > UFORM_HIP_MEMCPY_DEFAULT) return UFORM_HIP_ERROR_INVALID_MEMCPY_DIRECTION;
    if (!bytes) return UFORM_HIP_SUCCESS;
    if (!destination || !source) return UFORM_HIP_ERROR_INVALID_VALUE;
    int device_destination = kind == UFORM_HIP_MEMCPY_HOST_TO_DEVICE || kind == UFORM_HIP_MEMCPY_DEVICE_TO_DEVICE;
    int device_source = kind == UFORM_HIP_MEMCPY_DEVICE_TO_HOST || kind == UFORM_HIP_MEMCPY_DEVICE_TO_DEVICE;
    if ((device_destination && !device_range(destination, bytes)) || (device_source && !device_range(source, bytes)))
        return UFORM_HIP_ERROR_INVALID_VALUE;
    stream_t *stream = NULL;
    uform_hipError result = stream_of(handle, current_device, &stream);
    if (result != UFORM_HIP_SUCCESS) return result;
    result = enqueue(stream, (operation_t){.kind = OPERATION_COPY, .destination = destination, .source = source,
                                           .bytes = bytes});
    put_stream(stream);
    return result;
}

ENTRY(uform_hipError, hipLaunchHostFunc, (uform_hipStream handle, uform_hipHostFn function, void *user_data)) {
    INITIALIZE();
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    if (!function) return UFORM_HIP_ERROR_INVALID_VALUE;
    stream_t *stream = NULL;
    uform_hipError result = stream_of(handle, current_device, &stream);
    if (result != UFORM_HIP_SUCCESS) return result;
    result = enqueue(stream, (operation_t){.kind = OPERATION_HOST_FUNCTION, .function = function, .user_data = user_data});
    put_stream(stream);
    return result;
}

/* ---- Device and pinned host memory ---- */

ENTRY(uform_hipError, hipMalloc, (void **pointer, size_t bytes)) {
    ENTER_DEVICE();
    if (!pointer) return UFORM_HIP_ERROR_INVALID_VALUE;
    *pointer = NULL;
    if (!bytes) return UFORM_HIP_SUCCESS; /* hip_runtime_api.h: size 0 allocates nothing, answers hipSuccess */
    unsigned long call = atomic_fetch_add(&alloc_calls, 1) + 1;
    if (config.alloc_fault && call == config.alloc_fault) return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    size_t charged = (bytes + 255) & ~(size_t)255;
    if (charged < bytes) return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    allocation_t *allocation = calloc(1, sizeof *allocation);
    if (!allocation) return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&memory_lock);
    int fits = charged <= config.devices[device].memory_bytes - device_used[device];
    if (fits) device_used[device] += charged;
    pthread_mutex_unlock(&memory_lock);
    if (fits) allocation->base = aligned_alloc(256, charged);
    if (!allocation->base) {
        if (fits) {
            pthread_mutex_lock(&memory_lock);
            device_used[device] -= charged;
            pthread_mutex_unlock(&memory_lock);
        }
        free(allocation);
        return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    }
    allocation->kind = ALLOCATION_DEVICE;
    allocation->bytes = bytes;
    allocation->charged = charged;
    allocation->device = device;
    pthread_mutex_lock(&memory_lock);
    allocation->next = allocations;
    allocations = allocation;
    pthread_mutex_unlock(&memory_lock);
    *pointer = allocation->base;
    return UFORM_HIP_SUCCESS;
}

/* Unlinks the allocation of `kind` starting at `base`, or answers NULL. */
static allocation_t *unlink_allocation(const void *base, allocation_kind_t kind) {
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = NULL;
    for (allocation_t **link = &allocations; *link; link = &(*link)->next)
        if ((*link)->base == base && (*link)->kind == kind) {
            found = *link;
            *link = found->next;
            if (kind == ALLOCATION_DEVICE) device_used[found->device] -= found->charged;
            break;
        }
    pthread_mutex_unlock(&memory_lock);
    return found;
}

/* hipFree synchronises the device first; a faulted device answers its error and frees nothing. */
ENTRY(uform_hipError, hipFree, (void *pointer)) {
    INITIALIZE();
    if (!pointer) return UFORM_HIP_SUCCESS;
    pthread_mutex_lock(&memory_lock);
    allocation_t *held = allocation_holding(pointer, 1);
    int device = held && held->base == pointer && held->kind == ALLOCATION_DEVICE ? held->device : -1;
    pthread_mutex_unlock(&memory_lock);
    if (device < 0) return UFORM_HIP_ERROR_INVALID_VALUE;
    drain_device(device);
    uform_hipError fault = atomic_load(&sticky[device]);
    if (fault) return fault;
    allocation_t *found = unlink_allocation(pointer, ALLOCATION_DEVICE);
    if (!found) return UFORM_HIP_ERROR_INVALID_VALUE; /* freed meanwhile by another thread */
    free(found->base);
    free(found);
    return UFORM_HIP_SUCCESS;
}

ENTRY(uform_hipError, hipHostMalloc, (void **pointer, size_t bytes, unsigned int flags)) {
    ENTER_DEVICE();
    if (!pointer) return UFORM_HIP_ERROR_INVALID_VALUE;
    *pointer = NULL;
    const unsigned coherent = 0x40000000u, non_coherent = 0x80000000u, numa_user = 0x20000000u;
    unsigned known = UFORM_HIP_HOST_MALLOC_PORTABLE | UFORM_HIP_HOST_MALLOC_MAPPED |
                     UFORM_HIP_HOST_MALLOC_WRITE_COMBINED | coherent | non_coherent | numa_user;
    if ((flags & ~known) || ((flags & coherent) && (flags & non_coherent))) return UFORM_HIP_ERROR_INVALID_VALUE;
    if (!bytes) return UFORM_HIP_SUCCESS;
    allocation_t *allocation = calloc(1, sizeof *allocation);
    if (!allocation) return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    size_t rounded = (bytes + 4095) & ~(size_t)4095; /* page-locked memory is whole pages */
    allocation->base = rounded >= bytes ? aligned_alloc(4096, rounded) : NULL;
    if (!allocation->base) {
        free(allocation);
        return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    }
    allocation->kind = ALLOCATION_HOST;
    allocation->bytes = bytes;
    allocation->flags = flags;
    allocation->device = device;
    pthread_mutex_lock(&memory_lock);
    allocation->next = allocations;
    allocations = allocation;
    pthread_mutex_unlock(&memory_lock);
    *pointer = allocation->base;
    return UFORM_HIP_SUCCESS;
}

/* Waits for every device's queued work (a stream may still read the memory), then frees. */
ENTRY(uform_hipError, hipHostFree, (void *pointer)) {
    INITIALIZE();
    if (!pointer) return UFORM_HIP_SUCCESS;
    for (size_t i = 0; i < config.device_count; i++) drain_device((int)i);
    allocation_t *found = unlink_allocation(pointer, ALLOCATION_HOST);
    if (!found) return UFORM_HIP_ERROR_INVALID_VALUE;
    free(found->base);
    free(found);
    return UFORM_HIP_SUCCESS;
}

/* As ROCm 6 documents: memory the runtime knows answers its type (device memory: Device, pinned
 * host memory: Host, mapped at the same address); any other pointer is hipErrorInvalidValue. */
ENTRY(uform_hipError, hipPointerGetAttributes, (uform_hipPointerAttribute * attributes, const void *pointer)) {
    INITIALIZE();
    if (!attributes || !pointer) return UFORM_HIP_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = allocation_holding(pointer, 1);
    allocation_t copy = found ? *found : (allocation_t){0};
    pthread_mutex_unlock(&memory_lock);
    memset(attributes, 0, sizeof *attributes);
    /* Memory the runtime does not know (ordinary host memory): hipSuccess with
     * hipMemoryTypeUnregistered, as ROCm's runtime (clr) answers, like CUDA 11 and later (the
     * double leaves the other fields 0). */
    if (!found) {
        attributes->type = UFORM_HIP_MEMORY_TYPE_UNREGISTERED;
        return UFORM_HIP_SUCCESS;
    }
    attributes->device = copy.device;
    attributes->devicePointer = (void *)pointer;
    if (copy.kind == ALLOCATION_DEVICE) {
        attributes->type = UFORM_HIP_MEMORY_TYPE_DEVICE;
    } else {
        attributes->type = UFORM_HIP_MEMORY_TYPE_HOST;
        attributes->hostPointer = (void *)pointer;
        attributes->allocationFlags = copy.flags;
    }
    return UFORM_HIP_SUCCESS;
}

ENTRY(uform_hipError, hipMemGetInfo, (size_t *free_bytes, size_t *total_bytes)) {
    ENTER_DEVICE();
    if (!free_bytes || !total_bytes) return UFORM_HIP_ERROR_INVALID_VALUE;
    uint64_t total = config.devices[device].memory_bytes;
    pthread_mutex_lock(&memory_lock);
    *free_bytes = (size_t)(total - device_used[device]);
    pthread_mutex_unlock(&memory_lock);
    *total_bytes = (size_t)total;
    return UFORM_HIP_SUCCESS;
}

/* ---- Events ---- */

/* The live event behind a handle, with a reference the caller puts back; NULL if none. */
static event_t *event_of(uform_hipEvent handle) {
    event_t *found = NULL;
    pthread_mutex_lock(&events_lock);
    for (event_t *e = live_events; e; e = e->next_live)
        if (e == (event_t *)handle) {
            found = e;
            found->references++;
        }
    pthread_mutex_unlock(&events_lock);
    return found;
}

static void put_event(event_t *event) {
    pthread_mutex_lock(&events_lock);
    put_event_locked(event);
    pthread_mutex_unlock(&events_lock);
}

ENTRY(uform_hipError, hipEventCreateWithFlags, (uform_hipEvent * handle, unsigned int flags)) {
    ENTER_DEVICE();
    if (!handle) return UFORM_HIP_ERROR_INVALID_VALUE;
    unsigned known = UFORM_HIP_EVENT_BLOCKING_SYNC | UFORM_HIP_EVENT_DISABLE_TIMING | UFORM_HIP_EVENT_INTERPROCESS;
    /* An interprocess event must also disable timing, as with CUDA. */
    if ((flags & ~known) || ((flags & UFORM_HIP_EVENT_INTERPROCESS) && !(flags & UFORM_HIP_EVENT_DISABLE_TIMING)))
        return UFORM_HIP_ERROR_INVALID_VALUE;
    event_t *event = calloc(1, sizeof *event);
    if (!event) return UFORM_HIP_ERROR_OUT_OF_MEMORY;
    event->flags = flags;
    event->device = device;
    event->references = 1; /* the handle's */
    pthread_mutex_lock(&events_lock);
    event->next_live = live_events;
    live_events = event;
    pthread_mutex_unlock(&events_lock);
    *handle = (uform_hipEvent)event;
    return UFORM_HIP_SUCCESS;
}

/* hip_runtime_api.h: destroying an event whose record is still pending returns at once; the
 * record's resources go when it completes (here: its operation's reference). */
ENTRY(uform_hipError, hipEventDestroy, (uform_hipEvent handle)) {
    INITIALIZE();
    pthread_mutex_lock(&events_lock);
    event_t *found = NULL;
    for (event_t **link = &live_events; *link; link = &(*link)->next_live)
        if (*link == (event_t *)handle) {
            found = *link;
            *link = found->next_live;
            put_event_locked(found);
            break;
        }
    pthread_mutex_unlock(&events_lock);
    return found ? UFORM_HIP_SUCCESS : UFORM_HIP_ERROR_INVALID_HANDLE;
}

ENTRY(uform_hipError, hipEventRecord, (uform_hipEvent handle, uform_hipStream stream_handle)) {
    INITIALIZE();
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    event_t *event = event_of(handle);
    if (!event) return UFORM_HIP_ERROR_INVALID_HANDLE;
    stream_t *stream = NULL;
    uform_hipError result = stream_of(stream_handle, current_device, &stream);
    if (result != UFORM_HIP_SUCCESS) {
        put_event(event);
        return result;
    }
    pthread_mutex_lock(&events_lock);
    unsigned long sequence = ++event->recorded;
    event->device = stream->device;
    event->references++; /* the queued record's */
    pthread_mutex_unlock(&events_lock);
    result = enqueue(stream, (operation_t){.kind = OPERATION_EVENT, .event = event, .sequence = sequence});
    if (result != UFORM_HIP_SUCCESS) {
        pthread_mutex_lock(&events_lock);
        if (event->completed < sequence) event->completed = sequence; /* nothing will complete it */
        put_event_locked(event);
        pthread_cond_broadcast(&events_changed);
        pthread_mutex_unlock(&events_lock);
    }
    put_stream(stream);
    put_event(event);
    return result;
}

/* hip_runtime_api.h: work queued on `stream` after the call waits until the event's latest
 * record completed, without blocking the host; an event never recorded (or whose record has
 * completed) imposes nothing; flags must be 0. The event may be of another device. */
ENTRY(uform_hipError, hipStreamWaitEvent, (uform_hipStream stream_handle, uform_hipEvent handle, unsigned int flags)) {
    INITIALIZE();
    if (!config.device_count) return UFORM_HIP_ERROR_NO_DEVICE;
    if (flags) return UFORM_HIP_ERROR_INVALID_VALUE;
    event_t *event = event_of(handle);
    if (!event) return UFORM_HIP_ERROR_INVALID_HANDLE;
    stream_t *stream = NULL;
    uform_hipError result = stream_of(stream_handle, current_device, &stream);
    if (result != UFORM_HIP_SUCCESS) {
        put_event(event);
        return result;
    }
    pthread_mutex_lock(&events_lock);
    unsigned long sequence = event->recorded;
    int pending = event->completed < sequence;
    if (pending) event->references++; /* the queued wait's */
    pthread_mutex_unlock(&events_lock);
    if (pending) {
        result = enqueue_wait(stream, (operation_t){.kind = OPERATION_WAIT_EVENT, .event = event, .sequence = sequence});
        if (result != UFORM_HIP_SUCCESS) {
            pthread_mutex_lock(&events_lock);
            put_event_locked(event);
            pthread_mutex_unlock(&events_lock);
        }
    }
    put_stream(stream);
    put_event(event);
    return result;
}

/* An event never recorded is complete (hipSuccess at once), as the header documents. The wait
 * yields the CPU only for an event made with hipEventBlockingSync (hip_runtime_api.h: "waiting
 * will yield CPU"); for any other the calling thread spins. */
ENTRY(uform_hipError, hipEventSynchronize, (uform_hipEvent handle)) {
    INITIALIZE();
    event_t *event = event_of(handle);
    if (!event) return UFORM_HIP_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&events_lock);
    if (event->flags & UFORM_HIP_EVENT_BLOCKING_SYNC) {
        while (event->completed < event->recorded) pthread_cond_wait(&events_changed, &events_lock);
    } else {
        while (event->completed < event->recorded) {
            pthread_mutex_unlock(&events_lock);
            for (volatile int i = 0; i < 64; i++) {
            }
            pthread_mutex_lock(&events_lock);
        }
    }
    int device = event->device;
    put_event_locked(event);
    pthread_mutex_unlock(&events_lock);
    return atomic_load(&sticky[device]);
}

ENTRY(uform_hipError, hipEventQuery, (uform_hipEvent handle)) {
    INITIALIZE();
    event_t *event = event_of(handle);
    if (!event) return UFORM_HIP_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&events_lock);
    int pending = event->completed < event->recorded;
    int device = event->device;
    put_event_locked(event);
    pthread_mutex_unlock(&events_lock);
    uform_hipError fault = atomic_load(&sticky[device]);
    return fault ? fault : pending ? UFORM_HIP_ERROR_NOT_READY : UFORM_HIP_SUCCESS;
}
