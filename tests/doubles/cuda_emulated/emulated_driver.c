/* A test double of the CUDA driver's ABI (libcuda.so.1), emulated on the host: the entry
 * points uform binds, with the driver's documented semantics (NOT_INITIALIZED before cuInit,
 * INVALID_DEVICE for a bad ordinal, INVALID_VALUE for NULL outputs, cuGetProcAddress by
 * version and flags), over the devices and faults UFORM_CUDA_DOUBLE_CONFIG describes. Tests
 * load it through UFORM_CUDA_LIBRARY. It never stands in for a real GPU check.
 *
 * Built twice: as is, a CUDA 12+ driver; with EMULATED_LEGACY_DRIVER, a driver older than 12.0
 * that exports no cuGetProcAddress_v2 (so loaders must fall back to dlsym). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulated_config.h"
#include "emulated_errors.h"
#include "gpu/cuda/cuda_abi.h"

#define EXPORT __attribute__((visibility("default")))

static emulated_config_t config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static atomic_int initialized; /* cuInit succeeded */
/* The driver's ordinals: the configuration's order (FASTEST_FIRST), or PCI order when
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, as the real driver reads that variable at cuInit. */
static size_t order[EMULATED_MAX_DEVICES];

static char *read_file(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) return NULL;
    char *text = calloc(1, 1 << 20);
    if (text) text[fread(text, 1, (1 << 20) - 1, file)] = '\0';
    fclose(file);
    return text;
}

static int pci_before(const emulated_device_t *a, const emulated_device_t *b) {
    unsigned ka[4] = {a->pci_domain, a->pci_bus, a->pci_device, a->pci_function};
    unsigned kb[4] = {b->pci_domain, b->pci_bus, b->pci_device, b->pci_function};
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i]) return ka[i] < kb[i];
    return 0;
}

static void load_config(void) {
    const char *text = getenv("UFORM_CUDA_DOUBLE_CONFIG");
    char *owned = NULL;
    if (text && text[0] == '@') {
        owned = read_file(text + 1);
        if (!owned) {
            emulated_config_parse(NULL, &config);
            snprintf(config.error, sizeof config.error, "cannot read %s", text + 1);
        }
        text = owned;
    }
    if (text) emulated_config_parse(text, &config);
    free(owned);
    if (config.error[0]) fprintf(stderr, "CUDA driver test double: configuration refused: %s\n", config.error);
    for (size_t i = 0; i < config.device_count; i++) order[i] = i;
    const char *device_order = getenv("CUDA_DEVICE_ORDER");
    if (device_order && strcmp(device_order, "PCI_BUS_ID") == 0)
        for (size_t i = 1; i < config.device_count; i++)
            for (size_t j = i; j > 0 && pci_before(&config.devices[order[j]], &config.devices[order[j - 1]]); j--) {
                size_t swap = order[j];
                order[j] = order[j - 1];
                order[j - 1] = swap;
            }
}

static const emulated_config_t *configuration(void) {
    pthread_once(&config_once, load_config);
    return &config;
}

/* The device behind a handle, or NULL (INVALID_DEVICE). */
static const emulated_device_t *device_of(uform_cuDevice handle) {
    if (handle < 0 || (size_t)handle >= config.device_count) return NULL;
    return &config.devices[order[handle]];
}

/* Every device query starts here: NOT_INITIALIZED before a successful cuInit. */
#define REQUIRE_INITIALIZED()                                                                      \
    do {                                                                                           \
        if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;                  \
    } while (0)

/* A query of one device checks in the driver's order: initialised, somewhere to write the
 * answer, then the device. */
static uform_cuResult open_query(uform_cuDevice handle, int has_output, const emulated_device_t **device) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!has_output) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *device = device_of(handle);
    return *device ? UFORM_CUDA_SUCCESS : UFORM_CUDA_ERROR_INVALID_DEVICE;
}

/* Declares `device` for the query's body, or returns what open_query answered. */
#define OPEN_QUERY(handle, has_output)                                                             \
    const emulated_device_t *device = NULL;                                                        \
    do {                                                                                           \
        uform_cuResult result_ = open_query(handle, has_output, &device);                          \
        if (result_ != UFORM_CUDA_SUCCESS) return result_;                                         \
    } while (0)

EXPORT uform_cuResult cuDriverGetVersion(int *version) {
    if (!version) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *version = configuration()->driver_version;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuInit(unsigned int flags) {
    const emulated_config_t *c = configuration();
    if (flags != 0) return UFORM_CUDA_ERROR_INVALID_VALUE;
    if (c->error[0]) return UFORM_CUDA_ERROR_UNKNOWN; /* a refused configuration is no machine */
    if (c->init_result) return c->init_result;
    if (!c->device_count) return UFORM_CUDA_ERROR_NO_DEVICE;
    atomic_store(&initialized, 1);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuDeviceGetCount(int *count) {
    REQUIRE_INITIALIZED();
    if (!count) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *count = (int)config.device_count;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuDeviceGet(uform_cuDevice *device, int ordinal) {
    const emulated_device_t *found = NULL;
    uform_cuResult result = open_query(ordinal, device != NULL, &found);
    if (result != UFORM_CUDA_SUCCESS) return result;
    *device = ordinal;
    return UFORM_CUDA_SUCCESS;
}

/* As the driver does: the name's bytes up to length - 1, terminated, even mid-character. */
EXPORT uform_cuResult cuDeviceGetName(char *name, int length, uform_cuDevice handle) {
    OPEN_QUERY(handle, name && length > 0);
    snprintf(name, (size_t)length, "%s", device->name);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuDeviceTotalMem_v2(size_t *bytes, uform_cuDevice handle) {
    OPEN_QUERY(handle, bytes != NULL);
    *bytes = (size_t)device->memory_bytes;
    return UFORM_CUDA_SUCCESS;
}

/* The CUDA 2.0 ABI, 32-bit: what cuGetProcAddress answers for versions below 3.2. */
EXPORT uform_cuResult cuDeviceTotalMem(unsigned int *bytes, uform_cuDevice handle) {
    size_t wide = 0;
    uform_cuResult result = cuDeviceTotalMem_v2(bytes ? &wide : NULL, handle);
    if (result == UFORM_CUDA_SUCCESS) *bytes = wide > 0xFFFFFFFFu ? 0xFFFFFFFFu : (unsigned int)wide;
    return result;
}

EXPORT uform_cuResult cuDeviceGetAttribute(int *value, uform_cuDeviceAttribute attribute, uform_cuDevice handle) {
    OPEN_QUERY(handle, value != NULL);
    switch (attribute) {
    case UFORM_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = device->multiprocessors; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *value = (int)device->pci_bus; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *value = (int)device->pci_device; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *value = (int)device->pci_domain; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = device->compute_major; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = device->compute_minor; break;
    case UFORM_CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: *value = device->multicast; break;
    default: return UFORM_CUDA_ERROR_INVALID_VALUE; /* an attribute this double does not emulate */
    }
    return UFORM_CUDA_SUCCESS;
}

/* "0000:3B:00.0": the driver's spelling, upper-case hex, cut to `length` as it does. */
EXPORT uform_cuResult cuDeviceGetPCIBusId(char *bus_id, int length, uform_cuDevice handle) {
    OPEN_QUERY(handle, bus_id && length > 0);
    snprintf(bus_id, (size_t)length, "%04X:%02X:%02X.%X", device->pci_domain, device->pci_bus, device->pci_device,
             device->pci_function);
    return UFORM_CUDA_SUCCESS;
}

/* Works before cuInit, as the driver's does. */
EXPORT uform_cuResult cuGetErrorName(uform_cuResult error, const char **name) {
    if (!name) return UFORM_CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define CASE_(text, number)                                                                        \
    case number: *name = #text; return UFORM_CUDA_SUCCESS;
        EMULATED_CUDA_ERRORS(CASE_)
#undef CASE_
    }
    *name = NULL;
    return UFORM_CUDA_ERROR_INVALID_VALUE;
}

/* ---- Execution: primary contexts, memory, streams, events (README.md, "Execution") ---- */

/* One primary context per device. Its handle is the address of its slot; the handle stays the
 * same across release and retain, as the driver's primary context does. */
typedef struct emulated_context_t {
    int retained;            /* cuDevicePrimaryCtxRetain count, under memory_lock */
    atomic_uint sticky;      /* a sticky error (ILLEGAL_ADDRESS): every later call answers it */
} emulated_context_t;

static emulated_context_t contexts[EMULATED_MAX_DEVICES];
static __thread emulated_context_t *current; /* the calling thread's current context */
/* A primary context's device: its slot is the device's ordinal. */
#define CONTEXT_DEVICE(context) ((int)((context) - contexts))

/* Every allocation the double made or registered: device memory, cuMemHostAlloc'd and
 * cuMemHostRegister'ed host memory. Device memory is host memory tagged with its device. */
typedef enum { ALLOCATION_DEVICE, ALLOCATION_HOST, ALLOCATION_REGISTERED } allocation_kind_t;
typedef struct allocation_t {
    struct allocation_t *next;
    allocation_kind_t kind;
    char *base;
    size_t bytes;   /* what the caller asked for */
    size_t charged; /* device memory: what it counts against the device (256-byte granules) */
    int device;
} allocation_t;

static pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;
static allocation_t *allocations;                   /* under memory_lock */
static uint64_t device_used[EMULATED_MAX_DEVICES];  /* under memory_lock */
static atomic_ulong alloc_calls;                    /* cuMemAlloc calls, for `fault alloc=N` */
static atomic_ulong stream_operations;              /* enqueued stream operations, for `fault sticky=N` */

static emulated_context_t *context_of_handle(uform_cuContext handle) {
    emulated_context_t *context = (emulated_context_t *)handle;
    if (context < contexts || context >= contexts + config.device_count) return NULL;
    return context;
}

/* Calls that work in the current context start here: initialised, a current context that is
 * still retained, and no sticky error in it. */
static uform_cuResult enter_context(emulated_context_t **out) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    emulated_context_t *context = current;
    if (!context) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&memory_lock);
    int live = context->retained > 0;
    pthread_mutex_unlock(&memory_lock);
    if (!live) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    unsigned sticky = atomic_load(&context->sticky);
    if (sticky) return sticky;
    *out = context;
    return UFORM_CUDA_SUCCESS;
}

#define ENTER_CONTEXT()                                                                            \
    emulated_context_t *context = NULL;                                                            \
    do {                                                                                           \
        uform_cuResult result_ = enter_context(&context);                                          \
        if (result_ != UFORM_CUDA_SUCCESS) return result_;                                         \
    } while (0)

/* The allocation holding [address, address + bytes), or NULL. Under memory_lock. */
static allocation_t *allocation_holding(const void *address, size_t bytes) {
    const char *p = address;
    for (allocation_t *a = allocations; a; a = a->next)
        if (p >= a->base && p <= a->base + a->bytes && bytes <= (size_t)(a->base + a->bytes - p) &&
            (bytes || p < a->base + a->bytes))
            return a;
    return NULL;
}

/* Unlinks and answers the allocation of `kind` starting at `base`, or NULL. Under memory_lock. */
static allocation_t *unlink_allocation(const void *base, allocation_kind_t kind) {
    for (allocation_t **link = &allocations; *link; link = &(*link)->next)
        if ((*link)->base == base && (*link)->kind == kind) {
            allocation_t *found = *link;
            *link = found->next;
            return found;
        }
    return NULL;
}

/* ---- Streams: each runs its queued operations in order on a host thread of its own. ---- */

typedef enum { OPERATION_COPY, OPERATION_SET, OPERATION_HOST_FUNCTION } operation_kind_t;
typedef struct operation_t {
    struct operation_t *next;
    operation_kind_t kind;
    void *destination;
    const void *source;
    size_t bytes;
    unsigned char value;
    uform_cuHostFn function;
    void *user_data;
    int faults; /* the `fault sticky=N` operation */
} operation_t;

typedef struct emulated_stream_t {
    struct emulated_stream_t *next_live; /* the live list, under streams_lock */
    emulated_context_t *context;
    unsigned flags;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    operation_t *head, *tail; /* queued; head is the one running (under lock) */
    /* Operations ever queued and ever finished (under lock): an event records `queued` and is
     * complete once `finished` reaches it. */
    unsigned long long queued, finished;
    int destroyed;            /* cuStreamDestroy: the thread drains the queue, then ends */
    int references;           /* its thread's and callers' in flight, under streams_lock */
} emulated_stream_t;

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static emulated_stream_t *live_streams; /* under streams_lock */
/* The legacy NULL stream of each context, created on first use. */
static emulated_stream_t *null_streams[EMULATED_MAX_DEVICES]; /* under streams_lock */

/* `link bandwidth=`: an async copy started at `start` lasts bytes / bandwidth seconds; the
 * stream's thread sleeps out what its memcpy did not take. */
static void occupy_link(const struct timespec *start, size_t bytes) {
    if (!config.link_bandwidth) return;
    long double seconds = (long double)bytes / (long double)config.link_bandwidth;
    long double whole = (long double)(unsigned long long)seconds;
    struct timespec until = *start;
    until.tv_sec += (time_t)whole;
    until.tv_nsec += (long)((seconds - whole) * 1e9L);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) continue;
}

static void run_operation(emulated_stream_t *stream, operation_t *operation) {
    emulated_context_t *context = stream->context;
    if (operation->faults) {
        unsigned expected = 0;
        atomic_compare_exchange_strong(&context->sticky, &expected, UFORM_CUDA_ERROR_ILLEGAL_ADDRESS);
    }
    if (atomic_load(&context->sticky)) return; /* a faulted context does no more work */
    switch (operation->kind) {
    case OPERATION_COPY: {
        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        memcpy(operation->destination, operation->source, operation->bytes);
        occupy_link(&start, operation->bytes);
        break;
    }
    case OPERATION_SET: memset(operation->destination, operation->value, operation->bytes); break;
    case OPERATION_HOST_FUNCTION: operation->function(operation->user_data); break;
    }
}

/* Drops a reference; the last one frees the stream. */
static void put_stream(emulated_stream_t *stream) {
    pthread_mutex_lock(&streams_lock);
    int last = --stream->references == 0;
    pthread_mutex_unlock(&streams_lock);
    if (!last) return;
    pthread_cond_destroy(&stream->changed);
    pthread_mutex_destroy(&stream->lock);
    free(stream);
}

static void *stream_thread(void *argument) {
    emulated_stream_t *stream = argument;
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
        stream->finished++;
        free(operation);
        pthread_cond_broadcast(&stream->changed);
    }
    pthread_mutex_unlock(&stream->lock);
    put_stream(stream);
    return NULL;
}

static uform_cuResult start_stream(emulated_context_t *context, unsigned flags, emulated_stream_t **out) {
    emulated_stream_t *stream = calloc(1, sizeof *stream);
    if (!stream) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    stream->context = context;
    stream->flags = flags;
    stream->references = 1; /* its thread's */
    pthread_mutex_init(&stream->lock, NULL);
    pthread_cond_init(&stream->changed, NULL);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    int failed = pthread_create(&stream->thread, &attributes, stream_thread, stream);
    pthread_attr_destroy(&attributes);
    if (failed) {
        pthread_cond_destroy(&stream->changed);
        pthread_mutex_destroy(&stream->lock);
        free(stream);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = stream;
    return UFORM_CUDA_SUCCESS;
}

/* Waits until everything queued on `stream` so far has run. */
static void drain(emulated_stream_t *stream) {
    pthread_mutex_lock(&stream->lock);
    while (stream->head) pthread_cond_wait(&stream->changed, &stream->lock);
    pthread_mutex_unlock(&stream->lock);
}

/* The live stream behind a handle in `context` (0 is the context's legacy NULL stream), with a
 * reference the caller puts back. INVALID_HANDLE for a handle that is no live stream. */
static uform_cuResult stream_of(uform_cuStream handle, emulated_context_t *context, emulated_stream_t **out) {
    uform_cuResult result = UFORM_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&streams_lock);
    if (!handle) {
        emulated_stream_t **slot = &null_streams[context - contexts];
        result = *slot ? UFORM_CUDA_SUCCESS : start_stream(context, UFORM_CU_STREAM_DEFAULT, slot);
        if (result == UFORM_CUDA_SUCCESS) (*out = *slot)->references++;
    } else {
        for (emulated_stream_t *s = live_streams; s; s = s->next_live)
            if (s == (emulated_stream_t *)handle) {
                if (s->context == context) {
                    result = UFORM_CUDA_SUCCESS;
                    (*out = s)->references++;
                }
            }
    }
    pthread_mutex_unlock(&streams_lock);
    return result;
}

/* Drains every live stream of `context` (only the blocking ones when `blocking_only`; its NULL stream too when
 * `null_too`), without holding streams_lock while waiting. */
static void drain_streams(emulated_context_t *context, int blocking_only, int null_too) {
    emulated_stream_t *selected[256];
    size_t count = 0;
    pthread_mutex_lock(&streams_lock);
    for (emulated_stream_t *s = live_streams; s && count < 255; s = s->next_live)
        if (s->context == context && (!blocking_only || !(s->flags & UFORM_CU_STREAM_NON_BLOCKING))) {
            s->references++;
            selected[count++] = s;
        }
    emulated_stream_t *null_stream = null_streams[context - contexts];
    if (null_too && null_stream) {
        null_stream->references++;
        selected[count++] = null_stream;
    }
    pthread_mutex_unlock(&streams_lock);
    for (size_t i = 0; i < count; i++) {
        drain(selected[i]);
        put_stream(selected[i]);
    }
}

/* The legacy NULL stream's implicit synchronisation, emulated from the calling thread: work
 * for the NULL stream waits for every blocking stream of the context, and work for a blocking
 * stream waits for the NULL stream. (The real driver queues that wait on the device; here the
 * caller waits, so a blocking stream held by a gate blocks the caller too.) */
static void order_with_null_stream(emulated_stream_t *stream) {
    emulated_context_t *context = stream->context;
    if (stream->flags & UFORM_CU_STREAM_NON_BLOCKING) return;
    pthread_mutex_lock(&streams_lock);
    emulated_stream_t *null_stream = null_streams[context - contexts];
    if (null_stream) null_stream->references++;
    pthread_mutex_unlock(&streams_lock);
    if (stream == null_stream) {
        drain_streams(context, 1, 0);
    } else if (null_stream) {
        drain(null_stream);
    }
    if (null_stream) put_stream(null_stream);
}

static uform_cuResult enqueue(uform_cuStream handle, emulated_context_t *context, operation_t operation) {
    emulated_stream_t *stream = NULL;
    uform_cuResult result = stream_of(handle, context, &stream);
    if (result != UFORM_CUDA_SUCCESS) return result;
    operation_t *queued = malloc(sizeof *queued);
    if (!queued) {
        put_stream(stream);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    *queued = operation;
    queued->next = NULL;
    unsigned long number = atomic_fetch_add(&stream_operations, 1) + 1;
    queued->faults = config.sticky_fault && number == config.sticky_fault;
    order_with_null_stream(stream);
    pthread_mutex_lock(&stream->lock);
    if (stream->tail) stream->tail->next = queued;
    else stream->head = queued;
    stream->tail = queued;
    stream->queued++;
    pthread_cond_broadcast(&stream->changed);
    pthread_mutex_unlock(&stream->lock);
    put_stream(stream);
    return UFORM_CUDA_SUCCESS;
}

/* Every live stream of `context`, and its NULL stream, drained. */
static void drain_context(emulated_context_t *context) { drain_streams(context, 0, 1); }

/* ---- Events: the work a stream had queued when the event was recorded (README.md, "Events"). ---- */

/* cuda.h's CU_EVENT_INTERPROCESS, which cuda_abi.h does not declare (uform never creates one). */
#define EVENT_INTERPROCESS 4u

/* One stream's part of a recording: done once the stream has finished `position` operations. */
typedef struct capture_t {
    emulated_stream_t *stream; /* with a reference of the capture's own */
    unsigned long long position;
} capture_t;

typedef struct emulated_event_t {
    struct emulated_event_t *next_live; /* the live list, under events_lock */
    emulated_context_t *context;
    unsigned flags;
    int references;      /* the live list's and callers' in flight, under events_lock */
    pthread_mutex_t lock; /* guards the captures */
    capture_t *captures; /* the last recording's; none before the first (complete) */
    size_t capture_count;
} emulated_event_t;

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static emulated_event_t *live_events; /* under events_lock */

static void put_captures(capture_t *captures, size_t count) {
    for (size_t i = 0; i < count; i++) put_stream(captures[i].stream);
    free(captures);
}

/* Drops a reference; the last one frees the event and lets its captured streams go. */
static void put_event(emulated_event_t *event) {
    pthread_mutex_lock(&events_lock);
    int last = --event->references == 0;
    pthread_mutex_unlock(&events_lock);
    if (!last) return;
    put_captures(event->captures, event->capture_count);
    pthread_mutex_destroy(&event->lock);
    free(event);
}

/* The live event behind a handle, with a reference the caller puts back; INVALID_HANDLE for
 * anything else (NULL, destroyed, ended with its context). */
static uform_cuResult event_of(uform_cuEvent handle, emulated_event_t **out) {
    uform_cuResult result = UFORM_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&events_lock);
    for (emulated_event_t *e = live_events; e && handle; e = e->next_live)
        if (e == (emulated_event_t *)handle) {
            e->references++;
            *out = e;
            result = UFORM_CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&events_lock);
    return result;
}

/* A copy of the event's last recording, each capture with a stream reference of its own, so
 * a wait needs no lock on the event (a concurrent cuEventRecord replaces, never edits). */
static uform_cuResult snapshot_captures(emulated_event_t *event, capture_t **out, size_t *count) {
    pthread_mutex_lock(&event->lock);
    size_t n = event->capture_count;
    capture_t *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (n && !copy) {
        pthread_mutex_unlock(&event->lock);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&streams_lock);
    for (size_t i = 0; i < n; i++) {
        copy[i] = event->captures[i];
        copy[i].stream->references++;
    }
    pthread_mutex_unlock(&streams_lock);
    pthread_mutex_unlock(&event->lock);
    *out = copy;
    *count = n;
    return UFORM_CUDA_SUCCESS;
}

/* The last release of a context ends its events: their handles are INVALID_HANDLE after. */
static void end_events(emulated_context_t *context) {
    emulated_event_t *ended = NULL;
    pthread_mutex_lock(&events_lock);
    for (emulated_event_t **link = &live_events; *link;) {
        emulated_event_t *event = *link;
        if (event->context != context) {
            link = &event->next_live;
            continue;
        }
        *link = event->next_live;
        event->next_live = ended;
        ended = event;
    }
    pthread_mutex_unlock(&events_lock);
    while (ended) {
        emulated_event_t *next = ended->next_live;
        put_event(ended); /* the live list's reference */
        ended = next;
    }
}

/* ---- Contexts ---- */

EXPORT uform_cuResult cuDevicePrimaryCtxRetain(uform_cuContext *handle, uform_cuDevice device) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!handle) return UFORM_CUDA_ERROR_INVALID_VALUE;
    if (!device_of(device)) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    emulated_context_t *context = &contexts[device];
    pthread_mutex_lock(&memory_lock);
    context->retained++;
    pthread_mutex_unlock(&memory_lock);
    *handle = (uform_cuContext)context;
    return UFORM_CUDA_SUCCESS;
}

/* The last release destroys the primary context's state: its work is finished first, then
 * its device memory freed, as the driver does. The handle stays valid for a later retain. */
EXPORT uform_cuResult cuDevicePrimaryCtxRelease_v2(uform_cuDevice device) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!device_of(device)) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    emulated_context_t *context = &contexts[device];
    pthread_mutex_lock(&memory_lock);
    int was_retained = context->retained > 0;
    int last = was_retained && --context->retained == 0;
    pthread_mutex_unlock(&memory_lock);
    if (!was_retained) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    if (!last) return UFORM_CUDA_SUCCESS;
    drain_context(context); /* calls in the context already answer INVALID_CONTEXT */
    /* Its streams go with it: their handles are INVALID_HANDLE from now on (the NULL stream,
     * idle, stays for a later retain). */
    pthread_mutex_lock(&streams_lock);
    for (emulated_stream_t **link = &live_streams; *link;) {
        emulated_stream_t *stream = *link;
        if (stream->context != context) {
            link = &stream->next_live;
            continue;
        }
        *link = stream->next_live;
        pthread_mutex_lock(&stream->lock);
        stream->destroyed = 1;
        pthread_cond_broadcast(&stream->changed);
        pthread_mutex_unlock(&stream->lock);
    }
    pthread_mutex_unlock(&streams_lock);
    end_events(context); /* and so do its events */
    pthread_mutex_lock(&memory_lock);
    if (context->retained == 0) { /* not retained again meanwhile */
        for (allocation_t **link = &allocations; *link;) {
            allocation_t *a = *link;
            if (a->kind == ALLOCATION_DEVICE && a->device == device) {
                *link = a->next;
                device_used[device] -= a->charged;
                free(a->base);
                free(a);
            } else {
                link = &a->next;
            }
        }
        /* cuMemCreate's physical memory is no context's: it stays until cuMemRelease. */
    }
    pthread_mutex_unlock(&memory_lock);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuCtxSetCurrent(uform_cuContext handle) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!handle) {
        current = NULL;
        return UFORM_CUDA_SUCCESS;
    }
    emulated_context_t *context = context_of_handle(handle);
    if (!context) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&memory_lock);
    int live = context->retained > 0;
    pthread_mutex_unlock(&memory_lock);
    if (!live) return UFORM_CUDA_ERROR_INVALID_CONTEXT;
    current = context;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuCtxGetCurrent(uform_cuContext *handle) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!handle) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *handle = (uform_cuContext)current;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuCtxSynchronize(void) {
    ENTER_CONTEXT();
    drain_context(context);
    return atomic_load(&context->sticky);
}

/* ---- Device memory ---- */

EXPORT uform_cuResult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
    ENTER_CONTEXT();
    if (!free_bytes || !total_bytes) return UFORM_CUDA_ERROR_INVALID_VALUE;
    uint64_t total = config.devices[order[CONTEXT_DEVICE(context)]].memory_bytes;
    pthread_mutex_lock(&memory_lock);
    *free_bytes = (size_t)(total - device_used[CONTEXT_DEVICE(context)]);
    pthread_mutex_unlock(&memory_lock);
    *total_bytes = (size_t)total;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemAlloc_v2(uform_cuDevicePtr *pointer, size_t bytes) {
    ENTER_CONTEXT();
    if (!pointer || bytes == 0) return UFORM_CUDA_ERROR_INVALID_VALUE; /* cuda.h: 0 bytes is INVALID_VALUE */
    unsigned long call = atomic_fetch_add(&alloc_calls, 1) + 1;
    if (config.alloc_fault && call == config.alloc_fault) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    size_t charged = (bytes + 255) & ~(size_t)255;
    if (charged < bytes) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    int device = CONTEXT_DEVICE(context);
    uint64_t total = config.devices[order[device]].memory_bytes;
    allocation_t *allocation = calloc(1, sizeof *allocation);
    if (!allocation) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&memory_lock);
    if (charged > total - device_used[device]) {
        pthread_mutex_unlock(&memory_lock);
        free(allocation);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    device_used[device] += charged;
    pthread_mutex_unlock(&memory_lock);
    allocation->base = aligned_alloc(256, charged); /* the driver aligns to at least 256 bytes */
    if (!allocation->base) {
        pthread_mutex_lock(&memory_lock);
        device_used[device] -= charged;
        pthread_mutex_unlock(&memory_lock);
        free(allocation);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    allocation->kind = ALLOCATION_DEVICE;
    allocation->bytes = bytes;
    allocation->charged = charged;
    allocation->device = device;
    pthread_mutex_lock(&memory_lock);
    allocation->next = allocations;
    allocations = allocation;
    pthread_mutex_unlock(&memory_lock);
    *pointer = (uform_cuDevicePtr)(uintptr_t)allocation->base;
    return UFORM_CUDA_SUCCESS;
}

/* Like the driver's, a free waits for the context's queued work first (no stream may still be
 * using the memory). An address that is no allocation's start is INVALID_VALUE. */
EXPORT uform_cuResult cuMemFree_v2(uform_cuDevicePtr pointer) {
    ENTER_CONTEXT();
    drain_context(context);
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = unlink_allocation((void *)(uintptr_t)pointer, ALLOCATION_DEVICE);
    if (found) device_used[found->device] -= found->charged;
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_INVALID_VALUE;
    free(found->base);
    free(found);
    return UFORM_CUDA_SUCCESS;
}

/* ---- Pinned host memory ---- */

/* Records pinned host memory; a registration overlapping pinned memory already known is
 * HOST_MEMORY_ALREADY_REGISTERED (checked and recorded under one lock). */
static uform_cuResult add_host_allocation(allocation_kind_t kind, void *base, size_t bytes, int device) {
    allocation_t *allocation = calloc(1, sizeof *allocation);
    if (!allocation) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    allocation->kind = kind;
    allocation->base = base;
    allocation->bytes = bytes;
    allocation->device = device;
    pthread_mutex_lock(&memory_lock);
    int overlaps = 0;
    for (allocation_t *a = allocations; a && kind == ALLOCATION_REGISTERED; a = a->next)
        overlaps |= a->kind != ALLOCATION_DEVICE && (char *)base < a->base + a->bytes && a->base < (char *)base + bytes;
    if (!overlaps) {
        allocation->next = allocations;
        allocations = allocation;
    }
    pthread_mutex_unlock(&memory_lock);
    if (overlaps) free(allocation);
    return overlaps ? UFORM_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags) {
    ENTER_CONTEXT();
    if (!pointer || bytes == 0 ||
        (flags & ~(unsigned)(UFORM_CU_MEMHOSTALLOC_PORTABLE | UFORM_CU_MEMHOSTALLOC_DEVICEMAP |
                             UFORM_CU_MEMHOSTALLOC_WRITECOMBINED)))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    void *base = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095); /* page-locked memory is whole pages */
    if (!base) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    uform_cuResult result = add_host_allocation(ALLOCATION_HOST, base, bytes, CONTEXT_DEVICE(context));
    if (result != UFORM_CUDA_SUCCESS) {
        free(base);
        return result;
    }
    *pointer = base;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemFreeHost(void *pointer) {
    ENTER_CONTEXT();
    drain_context(context);
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = unlink_allocation(pointer, ALLOCATION_HOST);
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_INVALID_VALUE;
    free(found->base);
    free(found);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemHostRegister_v2(void *pointer, size_t bytes, unsigned int flags) {
    ENTER_CONTEXT();
    if (!pointer || bytes == 0 ||
        (flags & ~(unsigned)(UFORM_CU_MEMHOSTREGISTER_PORTABLE | UFORM_CU_MEMHOSTREGISTER_DEVICEMAP |
                             UFORM_CU_MEMHOSTREGISTER_IOMEMORY | UFORM_CU_MEMHOSTREGISTER_READ_ONLY)))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    return add_host_allocation(ALLOCATION_REGISTERED, pointer, bytes, CONTEXT_DEVICE(context));
}

EXPORT uform_cuResult cuMemHostUnregister(void *pointer) {
    ENTER_CONTEXT();
    if (!pointer) return UFORM_CUDA_ERROR_INVALID_VALUE;
    drain_context(context);
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = unlink_allocation(pointer, ALLOCATION_REGISTERED);
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    free(found); /* the memory is the caller's */
    return UFORM_CUDA_SUCCESS;
}

/* CU_POINTER_ATTRIBUTE_MEMORY_TYPE (DEVICE for cuMemAlloc'd memory, HOST for pinned host
 * memory), _RANGE_START_ADDR and _RANGE_SIZE (the whole allocation or registration holding the
 * address: a CUdeviceptr-sized start, the host address for host memory, and a size_t). An
 * address the double did not allocate or register is INVALID_VALUE, as the driver answers for
 * ordinary host memory; so is an attribute it does not emulate. */
EXPORT uform_cuResult cuPointerGetAttribute(void *data, uform_cuPointerAttribute attribute, uform_cuDevicePtr pointer) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!data || (attribute != UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE &&
                  attribute != UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR &&
                  attribute != UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = allocation_holding((void *)(uintptr_t)pointer, 1);
    unsigned type = !found ? 0 : found->kind == ALLOCATION_DEVICE ? UFORM_CU_MEMORYTYPE_DEVICE : UFORM_CU_MEMORYTYPE_HOST;
    uform_cuDevicePtr start = found ? (uform_cuDevicePtr)(uintptr_t)found->base : 0;
    size_t bytes = found ? found->bytes : 0;
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
    case UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = type; break;
    case UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(uform_cuDevicePtr *)data = start; break;
    default: *(size_t *)data = bytes; break; /* RANGE_SIZE */
    }
    return UFORM_CUDA_SUCCESS;
}

/* ---- Streams ---- */

EXPORT uform_cuResult cuStreamCreate(uform_cuStream *handle, unsigned int flags) {
    ENTER_CONTEXT();
    if (!handle || (flags & ~(unsigned)UFORM_CU_STREAM_NON_BLOCKING)) return UFORM_CUDA_ERROR_INVALID_VALUE;
    emulated_stream_t *stream = NULL;
    uform_cuResult result = start_stream(context, flags, &stream);
    if (result != UFORM_CUDA_SUCCESS) return result;
    pthread_mutex_lock(&streams_lock);
    stream->next_live = live_streams;
    live_streams = stream;
    pthread_mutex_unlock(&streams_lock);
    *handle = (uform_cuStream)stream;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: if work is still queued, "the function will return immediately and the resources
 * associated with hStream will be released automatically once the device has completed all
 * work": the stream's thread drains its queue, then frees it. */
EXPORT uform_cuResult cuStreamDestroy_v2(uform_cuStream handle) {
    ENTER_CONTEXT();
    if (!handle) return UFORM_CUDA_ERROR_INVALID_HANDLE;
    emulated_stream_t *stream = NULL;
    pthread_mutex_lock(&streams_lock);
    for (emulated_stream_t **link = &live_streams; *link; link = &(*link)->next_live)
        if (*link == (emulated_stream_t *)handle && (*link)->context == context) {
            stream = *link;
            *link = stream->next_live;
            break;
        }
    if (stream) { /* its thread drains the queue and puts its reference back */
        pthread_mutex_lock(&stream->lock);
        stream->destroyed = 1;
        pthread_cond_broadcast(&stream->changed);
        pthread_mutex_unlock(&stream->lock);
    }
    pthread_mutex_unlock(&streams_lock);
    return stream ? UFORM_CUDA_SUCCESS : UFORM_CUDA_ERROR_INVALID_HANDLE;
}

EXPORT uform_cuResult cuStreamSynchronize(uform_cuStream handle) {
    ENTER_CONTEXT();
    emulated_stream_t *stream = NULL;
    uform_cuResult result = stream_of(handle, context, &stream);
    if (result != UFORM_CUDA_SUCCESS) return result;
    drain(stream);
    put_stream(stream);
    return atomic_load(&context->sticky);
}

EXPORT uform_cuResult cuStreamQuery(uform_cuStream handle) {
    ENTER_CONTEXT();
    emulated_stream_t *stream = NULL;
    uform_cuResult result = stream_of(handle, context, &stream);
    if (result != UFORM_CUDA_SUCCESS) return result;
    pthread_mutex_lock(&stream->lock);
    int busy = stream->head != NULL;
    pthread_mutex_unlock(&stream->lock);
    put_stream(stream);
    unsigned sticky = atomic_load(&context->sticky);
    return sticky ? sticky : busy ? UFORM_CUDA_ERROR_NOT_READY : UFORM_CUDA_SUCCESS;
}

/* The driver checks an async copy's device range against its allocations up front. */
static int device_range_valid(uform_cuDevicePtr pointer, size_t bytes) {
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = allocation_holding((void *)(uintptr_t)pointer, bytes);
    int valid = found && found->kind == ALLOCATION_DEVICE;
    pthread_mutex_unlock(&memory_lock);
    return valid;
}

EXPORT uform_cuResult cuMemcpyHtoDAsync_v2(uform_cuDevicePtr destination, const void *source, size_t bytes,
                                           uform_cuStream stream) {
    ENTER_CONTEXT();
    if (!bytes) return UFORM_CUDA_SUCCESS;
    if (!source || !device_range_valid(destination, bytes)) return UFORM_CUDA_ERROR_INVALID_VALUE;
    return enqueue(stream, context,
                   (operation_t){.kind = OPERATION_COPY, .destination = (void *)(uintptr_t)destination,
                                 .source = source, .bytes = bytes});
}

EXPORT uform_cuResult cuMemcpyDtoHAsync_v2(void *destination, uform_cuDevicePtr source, size_t bytes,
                                           uform_cuStream stream) {
    ENTER_CONTEXT();
    if (!bytes) return UFORM_CUDA_SUCCESS;
    if (!destination || !device_range_valid(source, bytes)) return UFORM_CUDA_ERROR_INVALID_VALUE;
    return enqueue(stream, context,
                   (operation_t){.kind = OPERATION_COPY, .destination = destination,
                                 .source = (const void *)(uintptr_t)source, .bytes = bytes});
}

EXPORT uform_cuResult cuMemsetD8Async(uform_cuDevicePtr destination, unsigned char value, size_t count,
                                      uform_cuStream stream) {
    ENTER_CONTEXT();
    if (!count) return UFORM_CUDA_SUCCESS;
    if (!device_range_valid(destination, count)) return UFORM_CUDA_ERROR_INVALID_VALUE;
    return enqueue(stream, context,
                   (operation_t){.kind = OPERATION_SET, .destination = (void *)(uintptr_t)destination,
                                 .value = value, .bytes = count});
}

EXPORT uform_cuResult cuLaunchHostFunc(uform_cuStream stream, uform_cuHostFn function, void *user_data) {
    ENTER_CONTEXT();
    if (!function) return UFORM_CUDA_ERROR_INVALID_VALUE;
    return enqueue(stream, context,
                   (operation_t){.kind = OPERATION_HOST_FUNCTION, .function = function, .user_data = user_data});
}

/* ---- Events ---- */

/* cuda.h: CU_EVENT_DEFAULT, _BLOCKING_SYNC, _DISABLE_TIMING, and _INTERPROCESS only along with
 * _DISABLE_TIMING; the event belongs to the current context. (Every wait here blocks, and no
 * timing is kept, so the flags change nothing else.) */
EXPORT uform_cuResult cuEventCreate(uform_cuEvent *handle, unsigned int flags) {
    ENTER_CONTEXT();
    unsigned known = UFORM_CU_EVENT_BLOCKING_SYNC | UFORM_CU_EVENT_DISABLE_TIMING | EVENT_INTERPROCESS;
    if (!handle || (flags & ~known) || ((flags & EVENT_INTERPROCESS) && !(flags & UFORM_CU_EVENT_DISABLE_TIMING)))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    emulated_event_t *event = calloc(1, sizeof *event);
    if (!event) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    event->context = context;
    event->flags = flags;
    event->references = 1; /* the live list's */
    pthread_mutex_init(&event->lock, NULL);
    pthread_mutex_lock(&events_lock);
    event->next_live = live_events;
    live_events = event;
    pthread_mutex_unlock(&events_lock);
    *handle = (uform_cuEvent)event;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: "An event may be destroyed before it is complete ... the call does not block on
 * completion of the event, and any associated resources will automatically be released
 * asynchronously at completion." The event holds nothing the stream needs: the captured work
 * runs on, and the handle is INVALID_HANDLE from now on. */
EXPORT uform_cuResult cuEventDestroy_v2(uform_cuEvent handle) {
    ENTER_CONTEXT();
    emulated_event_t *event = NULL;
    pthread_mutex_lock(&events_lock);
    for (emulated_event_t **link = &live_events; *link && handle; link = &(*link)->next_live)
        if (*link == (emulated_event_t *)handle) {
            event = *link;
            *link = event->next_live;
            break;
        }
    pthread_mutex_unlock(&events_lock);
    if (!event) return UFORM_CUDA_ERROR_INVALID_HANDLE;
    put_event(event); /* the live list's reference; a caller still in flight holds its own */
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: "Captures in hEvent the contents of hStream at the time of this call"; recording
 * again replaces what was captured, later work on the stream is not captured. The event and
 * the stream must be of one context (INVALID_HANDLE otherwise, as for a stream of another
 * context). The legacy NULL stream's implicit order is captured without waiting: recorded on
 * the NULL stream, the event also waits for the work queued so far on the context's blocking
 * streams; recorded on a blocking stream, for the NULL stream's. Recording queues no
 * operation (it is not counted by `fault sticky=`). */
EXPORT uform_cuResult cuEventRecord(uform_cuEvent handle, uform_cuStream stream_handle) {
    ENTER_CONTEXT();
    emulated_event_t *event = NULL;
    uform_cuResult result = event_of(handle, &event);
    if (result != UFORM_CUDA_SUCCESS) return result;
    emulated_stream_t *stream = NULL;
    result = event->context != context ? UFORM_CUDA_ERROR_INVALID_HANDLE : stream_of(stream_handle, context, &stream);
    if (result != UFORM_CUDA_SUCCESS) {
        put_event(event);
        return result;
    }
    pthread_mutex_lock(&streams_lock);
    emulated_stream_t *null_stream = null_streams[context - contexts];
    int blocking = !(stream->flags & UFORM_CU_STREAM_NON_BLOCKING);
    size_t capacity = 2;
    if (stream == null_stream)
        for (emulated_stream_t *s = live_streams; s; s = s->next_live) capacity += s->context == context;
    capture_t *captures = malloc(capacity * sizeof *captures);
    size_t count = 0;
    if (captures) {
        captures[count++].stream = stream; /* stream_of's reference, handed over */
        if (stream == null_stream) {
            for (emulated_stream_t *s = live_streams; s; s = s->next_live)
                if (s->context == context && !(s->flags & UFORM_CU_STREAM_NON_BLOCKING)) {
                    s->references++;
                    captures[count++].stream = s;
                }
        } else if (blocking && null_stream) {
            null_stream->references++;
            captures[count++].stream = null_stream;
        }
    }
    pthread_mutex_unlock(&streams_lock);
    if (!captures) {
        put_stream(stream);
        put_event(event);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < count; i++) {
        pthread_mutex_lock(&captures[i].stream->lock);
        captures[i].position = captures[i].stream->queued;
        pthread_mutex_unlock(&captures[i].stream->lock);
    }
    pthread_mutex_lock(&event->lock);
    capture_t *previous = event->captures;
    size_t previous_count = event->capture_count;
    event->captures = captures;
    event->capture_count = count;
    pthread_mutex_unlock(&event->lock);
    put_captures(previous, previous_count);
    put_event(event);
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: CUDA_SUCCESS once all captured work has completed (or the event was never
 * recorded), CUDA_ERROR_NOT_READY before; a sticky fault of the event's context answers
 * instead. */
EXPORT uform_cuResult cuEventQuery(uform_cuEvent handle) {
    ENTER_CONTEXT();
    emulated_event_t *event = NULL;
    uform_cuResult result = event_of(handle, &event);
    if (result != UFORM_CUDA_SUCCESS) return result;
    capture_t *captures = NULL;
    size_t count = 0;
    result = snapshot_captures(event, &captures, &count);
    int busy = 0;
    for (size_t i = 0; i < count; i++) {
        pthread_mutex_lock(&captures[i].stream->lock);
        busy |= captures[i].stream->finished < captures[i].position;
        pthread_mutex_unlock(&captures[i].stream->lock);
    }
    put_captures(captures, count);
    unsigned sticky = atomic_load(&event->context->sticky);
    put_event(event);
    if (sticky) return sticky;
    if (result != UFORM_CUDA_SUCCESS) return result;
    return busy ? UFORM_CUDA_ERROR_NOT_READY : UFORM_CUDA_SUCCESS;
}

/* Waits for the captured work (never recorded: returns at once), then answers the event's
 * context's sticky fault if any. */
EXPORT uform_cuResult cuEventSynchronize(uform_cuEvent handle) {
    ENTER_CONTEXT();
    emulated_event_t *event = NULL;
    uform_cuResult result = event_of(handle, &event);
    if (result != UFORM_CUDA_SUCCESS) return result;
    capture_t *captures = NULL;
    size_t count = 0;
    if (!atomic_load(&event->context->sticky)) result = snapshot_captures(event, &captures, &count);
    for (size_t i = 0; i < count; i++) {
        emulated_stream_t *stream = captures[i].stream;
        pthread_mutex_lock(&stream->lock);
        while (stream->finished < captures[i].position) pthread_cond_wait(&stream->changed, &stream->lock);
        pthread_mutex_unlock(&stream->lock);
    }
    put_captures(captures, count);
    unsigned sticky = atomic_load(&event->context->sticky);
    put_event(event);
    return sticky ? sticky : result;
}

/* ---- Peers and multicast (README.md, "Peers and multicast") ---- */

/* cuda.h: 1 when contexts on `handle` can access memory of contexts on `peer`. The double's peers
 * are the devices of one `nvlink=` group; a device is no peer of itself (the driver answers 0). */
EXPORT uform_cuResult cuDeviceCanAccessPeer(int *can_access, uform_cuDevice handle, uform_cuDevice peer) {
    OPEN_QUERY(handle, can_access != NULL);
    const emulated_device_t *other = device_of(peer);
    if (!other) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    *can_access = handle != peer && device->nvlink_group >= 0 && device->nvlink_group == other->nvlink_group;
    return UFORM_CUDA_SUCCESS;
}

/* The granularities the double answers: 2 MiB minimum, for multicast objects and cuMemCreate
 * alike (the large-page size drivers report on current GPUs), and a recommended multicast
 * granularity well above it (512 MiB, the double's choice) so a caller mixing the two shows. */
#define MULTICAST_MINIMUM_GRANULARITY (2ull << 20)
#define MULTICAST_RECOMMENDED_GRANULARITY (512ull << 20)
#define ALLOCATION_GRANULARITY (2ull << 20)
/* The exportable handle types the double accepts on Linux (the Win32 ones are refused). */
#define LINUX_HANDLE_TYPES (UFORM_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | UFORM_CU_MEM_HANDLE_TYPE_FABRIC)

/* One binding of a multicast object: a device's physical memory at an offset of the object. */
typedef struct binding_t {
    struct binding_t *next;
    struct vmm_object_t *memory; /* holds a reference of the binding's */
    int device;
    size_t multicast_offset, bytes;
} binding_t;

/* A CUmemGenericAllocationHandle: physical memory of cuMemCreate, or a multicast object. One
 * handle space for both, as the driver's cuMemRelease takes either. */
typedef struct vmm_object_t {
    struct vmm_object_t *next;
    uform_cuMemGenericAllocationHandle handle;
    int multicast;
    int released; /* cuMemRelease'd: the handle is no longer valid */
    /* physical memory */
    int device;
    size_t bytes;
    int bindings; /* multicast bindings holding it: it is freed when released and unbound */
    /* multicast object */
    unsigned team_size;
    size_t size;
    int members[EMULATED_MAX_DEVICES];
    unsigned member_count;
    binding_t *bound;
    int waiters; /* binds blocked until the team is complete */
} vmm_object_t;

static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t team_changed = PTHREAD_COND_INITIALIZER; /* a device added, an object released */
static vmm_object_t *vmm_objects;                               /* under vmm_lock */
static uform_cuMemGenericAllocationHandle next_vmm_handle = 0x1000; /* under vmm_lock */

/* The error `fault multicast=<step>` injects for a call concerning `device` (-1: none), or 0. */
static uform_cuResult multicast_fault(multicast_step_t step, int device) {
    for (size_t i = 0; i < config.multicast_fault_count; i++) {
        const emulated_multicast_fault_t *fault = &config.multicast_faults[i];
        if (fault->step == step && (fault->device < 0 || fault->device == device)) return fault->result;
    }
    return UFORM_CUDA_SUCCESS;
}

/* Whether multicast objects can be made from this thread: the device of its current context
 * supports multicast; without a current context, some device does. */
static int multicast_available(void) {
    emulated_context_t *context = current;
    if (context) return device_of(CONTEXT_DEVICE(context))->multicast;
    for (size_t i = 0; i < config.device_count; i++)
        if (config.devices[i].multicast) return 1;
    return 0;
}

/* The live (not released) object behind a handle, of the kind asked for, or NULL. Under vmm_lock. */
static vmm_object_t *vmm_object(uform_cuMemGenericAllocationHandle handle, int multicast) {
    for (vmm_object_t *o = vmm_objects; o; o = o->next)
        if (o->handle == handle && !o->released) return o->multicast == multicast ? o : NULL;
    return NULL;
}

/* Frees an object nothing refers to any more: released, and (memory) bound nowhere or
 * (multicast) waited on by no bind. Under vmm_lock. */
static void vmm_collect(vmm_object_t *object) {
    if (!object->released || (object->multicast ? object->waiters : object->bindings)) return;
    for (vmm_object_t **link = &vmm_objects; *link; link = &(*link)->next)
        if (*link == object) {
            *link = object->next;
            break;
        }
    if (!object->multicast) {
        pthread_mutex_lock(&memory_lock);
        device_used[object->device] -= object->bytes;
        pthread_mutex_unlock(&memory_lock);
    }
    free(object);
}

static vmm_object_t *vmm_add(vmm_object_t *object) {
    pthread_mutex_lock(&vmm_lock);
    object->handle = next_vmm_handle++;
    object->next = vmm_objects;
    vmm_objects = object;
    pthread_mutex_unlock(&vmm_lock);
    return object;
}

static int aligned_to(size_t value, size_t granularity) { return value % granularity == 0; }

/* cuda.h: the prop's flags must be 0; the double takes handle types NONE, POSIX fd and fabric. */
static int multicast_prop_valid(const uform_cuMulticastObjectProp *prop) {
    return prop->flags == 0 && !(prop->handleTypes & ~(unsigned long long)LINUX_HANDLE_TYPES);
}

EXPORT uform_cuResult cuMulticastGetGranularity(size_t *granularity, const uform_cuMulticastObjectProp *prop,
                                                uform_cuMulticastGranularityFlags option) {
    REQUIRE_INITIALIZED();
    if (!granularity || !prop || option > UFORM_CU_MULTICAST_GRANULARITY_RECOMMENDED || !multicast_prop_valid(prop))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    uform_cuResult fault = multicast_fault(MULTICAST_STEP_GRANULARITY, -1);
    if (fault) return fault;
    if (!multicast_available()) return UFORM_CUDA_ERROR_NOT_SUPPORTED;
    *granularity = option == UFORM_CU_MULTICAST_GRANULARITY_MINIMUM ? MULTICAST_MINIMUM_GRANULARITY
                                                                    : MULTICAST_RECOMMENDED_GRANULARITY;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: a team of prop->numDevices devices, each binding up to prop->size bytes (a multiple
 * of the minimum granularity). No context needed; NOT_SUPPORTED where multicast is not. */
EXPORT uform_cuResult cuMulticastCreate(uform_cuMemGenericAllocationHandle *handle,
                                        const uform_cuMulticastObjectProp *prop) {
    REQUIRE_INITIALIZED();
    if (!handle || !prop || prop->numDevices == 0 || prop->size == 0 ||
        !aligned_to(prop->size, MULTICAST_MINIMUM_GRANULARITY) || !multicast_prop_valid(prop))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    uform_cuResult fault = multicast_fault(MULTICAST_STEP_CREATE, -1);
    if (fault) return fault;
    if (!multicast_available()) return UFORM_CUDA_ERROR_NOT_SUPPORTED;
    vmm_object_t *object = calloc(1, sizeof *object);
    if (!object) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    object->multicast = 1;
    object->team_size = prop->numDevices;
    object->size = prop->size;
    *handle = vmm_add(object)->handle;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: the device joins the team for the object's lifetime; a device outside the clique of
 * those added before is INVALID_DEVICE (the double's clique: one `nvlink=` group). A device
 * without multicast is NOT_SUPPORTED; one added twice, or past numDevices, INVALID_VALUE. */
EXPORT uform_cuResult cuMulticastAddDevice(uform_cuMemGenericAllocationHandle handle, uform_cuDevice device) {
    REQUIRE_INITIALIZED();
    const emulated_device_t *added = device_of(device);
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 1);
    uform_cuResult result = UFORM_CUDA_SUCCESS;
    if (!object) result = UFORM_CUDA_ERROR_INVALID_VALUE;
    else if (!added) result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    for (unsigned i = 0; result == UFORM_CUDA_SUCCESS && i < object->member_count; i++)
        if (object->members[i] == device) result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS && object->member_count == object->team_size) result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS) result = multicast_fault(MULTICAST_STEP_ADD, device);
    if (result == UFORM_CUDA_SUCCESS && !added->multicast) result = UFORM_CUDA_ERROR_NOT_SUPPORTED;
    if (result == UFORM_CUDA_SUCCESS && object->member_count) {
        const emulated_device_t *first = device_of(object->members[0]);
        if (added->nvlink_group < 0 || added->nvlink_group != first->nvlink_group)
            result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    }
    if (result == UFORM_CUDA_SUCCESS) {
        object->members[object->member_count++] = device;
        pthread_cond_broadcast(&team_changed);
    }
    pthread_mutex_unlock(&vmm_lock);
    return result;
}

/* cuda.h: physical memory on a device (the double emulates CU_MEM_LOCATION_TYPE_DEVICE with
 * CU_MEM_ALLOCATION_TYPE_PINNED only), a multiple of the allocation granularity, charged
 * against the device's memory like cuMemAlloc (cuMemGetInfo sees it) until cuMemRelease.
 * No context needed. The double does not map it: there is no cuMemMap. */
EXPORT uform_cuResult cuMemCreate(uform_cuMemGenericAllocationHandle *handle, size_t bytes,
                                  const uform_cuMemAllocationProp *prop, unsigned long long flags) {
    REQUIRE_INITIALIZED();
    if (!handle || !prop || bytes == 0 || flags || !aligned_to(bytes, ALLOCATION_GRANULARITY) ||
        prop->type != UFORM_CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != UFORM_CU_MEM_LOCATION_TYPE_DEVICE ||
        (prop->requestedHandleTypes & ~(unsigned)LINUX_HANDLE_TYPES))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    const emulated_device_t *device = device_of(prop->location.id);
    if (!device) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    uform_cuResult fault = multicast_fault(MULTICAST_STEP_MEMCREATE, prop->location.id);
    if (fault) return fault;
    vmm_object_t *object = calloc(1, sizeof *object);
    if (!object) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&memory_lock);
    int fits = bytes <= device->memory_bytes - device_used[prop->location.id];
    if (fits) device_used[prop->location.id] += bytes;
    pthread_mutex_unlock(&memory_lock);
    if (!fits) {
        free(object);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    object->device = prop->location.id;
    object->bytes = bytes;
    *handle = vmm_add(object)->handle;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: releases either kind of handle. Physical memory is freed once no multicast binding
 * holds it any more; releasing a multicast object drops its bindings (and wakes binds blocked
 * on it: they answer INVALID_VALUE). A handle that is no live object: INVALID_VALUE (cuda.h
 * calls that undefined). */
EXPORT uform_cuResult cuMemRelease(uform_cuMemGenericAllocationHandle handle) {
    REQUIRE_INITIALIZED();
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 0);
    if (!object) object = vmm_object(handle, 1);
    if (!object) {
        pthread_mutex_unlock(&vmm_lock);
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    }
    object->released = 1;
    if (object->multicast) {
        while (object->bound) {
            binding_t *binding = object->bound;
            object->bound = binding->next;
            binding->memory->bindings--;
            vmm_collect(binding->memory);
            free(binding);
        }
        pthread_cond_broadcast(&team_changed);
    }
    vmm_collect(object);
    pthread_mutex_unlock(&vmm_lock);
    return UFORM_CUDA_SUCCESS;
}

/* Whether `device` is in the object's team. Under vmm_lock. */
static int team_member(const vmm_object_t *object, int device) {
    for (unsigned i = 0; i < object->member_count; i++)
        if (object->members[i] == device) return 1;
    return 0;
}

/* cuda.h: binds [memory_offset, + bytes) of physical memory to [multicast_offset, + bytes) of the
 * object, for the memory's device; offsets and size multiples of the minimum granularity and
 * inside both; flags 0. As the driver, it blocks until every device of the team was added. The
 * memory's device must be in the team (INVALID_DEVICE); a range overlapping that device's
 * earlier binding is INVALID_VALUE. */
EXPORT uform_cuResult cuMulticastBindMem(uform_cuMemGenericAllocationHandle handle, size_t multicast_offset,
                                         uform_cuMemGenericAllocationHandle memory_handle, size_t memory_offset,
                                         size_t bytes, unsigned long long flags) {
    REQUIRE_INITIALIZED();
    binding_t *binding = calloc(1, sizeof *binding);
    if (!binding) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 1);
    vmm_object_t *memory = vmm_object(memory_handle, 0);
    uform_cuResult result = UFORM_CUDA_SUCCESS;
    if (!object || !memory || flags || bytes == 0 || !aligned_to(multicast_offset, MULTICAST_MINIMUM_GRANULARITY) ||
        !aligned_to(memory_offset, MULTICAST_MINIMUM_GRANULARITY) || !aligned_to(bytes, MULTICAST_MINIMUM_GRANULARITY) ||
        memory_offset > memory->bytes || bytes > memory->bytes - memory_offset || multicast_offset > object->size ||
        bytes > object->size - multicast_offset)
        result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS) {
        /* Both objects stay allocated while this waits (another thread may release them). */
        object->waiters++;
        memory->bindings++;
        while (!object->released && object->member_count < object->team_size)
            pthread_cond_wait(&team_changed, &vmm_lock);
        object->waiters--;
        memory->bindings--;
        if (object->released || memory->released) {
            vmm_collect(object);
            vmm_collect(memory);
            result = UFORM_CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (result == UFORM_CUDA_SUCCESS && !team_member(object, memory->device)) result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    for (binding_t *b = result == UFORM_CUDA_SUCCESS ? object->bound : NULL; b; b = b->next)
        if (b->device == memory->device && multicast_offset < b->multicast_offset + b->bytes &&
            b->multicast_offset < multicast_offset + bytes)
            result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS) result = multicast_fault(MULTICAST_STEP_BIND, memory->device);
    if (result == UFORM_CUDA_SUCCESS) {
        binding->memory = memory;
        binding->device = memory->device;
        binding->multicast_offset = multicast_offset;
        binding->bytes = bytes;
        binding->next = object->bound;
        object->bound = binding;
        memory->bindings++;
        binding = NULL;
    }
    pthread_mutex_unlock(&vmm_lock);
    free(binding);
    return result;
}

/* cuda.h: unbinds what `device` bound at [multicast_offset, + bytes), which "must match the
 * corresponding values specified during the bind call"; the double answers INVALID_VALUE
 * where no binding of that device matches (cuda.h: undefined). A device outside the team:
 * INVALID_DEVICE. */
EXPORT uform_cuResult cuMulticastUnbind(uform_cuMemGenericAllocationHandle handle, uform_cuDevice device,
                                        size_t multicast_offset, size_t bytes) {
    REQUIRE_INITIALIZED();
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 1);
    uform_cuResult result = UFORM_CUDA_SUCCESS;
    if (!object || bytes == 0 || !aligned_to(multicast_offset, MULTICAST_MINIMUM_GRANULARITY) ||
        !aligned_to(bytes, MULTICAST_MINIMUM_GRANULARITY) || multicast_offset > object->size ||
        bytes > object->size - multicast_offset)
        result = UFORM_CUDA_ERROR_INVALID_VALUE;
    else if (!device_of(device) || !team_member(object, device))
        result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    if (result == UFORM_CUDA_SUCCESS) result = multicast_fault(MULTICAST_STEP_UNBIND, device);
    if (result == UFORM_CUDA_SUCCESS) {
        binding_t **link = &object->bound;
        while (*link && !((*link)->device == device && (*link)->multicast_offset == multicast_offset &&
                          (*link)->bytes == bytes))
            link = &(*link)->next;
        binding_t *found = *link;
        if (!found) {
            result = UFORM_CUDA_ERROR_INVALID_VALUE;
        } else {
            *link = found->next;
            found->memory->bindings--;
            vmm_collect(found->memory);
            free(found);
        }
    }
    pthread_mutex_unlock(&vmm_lock);
    return result;
}

#if !EMULATED_LEGACY_DRIVER
/* What cuGetProcAddress resolves: a base name, the CUDA version whose ABI a function has, and
 * the function. For one name, rows go oldest first. */
typedef struct entry_t {
    const char *base;
    int version;
    void *function;
} entry_t;

static const entry_t entries[] = {
    {"cuDriverGetVersion", 2020, (void *)cuDriverGetVersion},
    {"cuInit", 2000, (void *)cuInit},
    {"cuDeviceGetCount", 2000, (void *)cuDeviceGetCount},
    {"cuDeviceGet", 2000, (void *)cuDeviceGet},
    {"cuDeviceGetName", 2000, (void *)cuDeviceGetName},
    {"cuDeviceTotalMem", 2000, (void *)cuDeviceTotalMem},
    {"cuDeviceTotalMem", 3020, (void *)cuDeviceTotalMem_v2},
    {"cuDeviceGetAttribute", 2000, (void *)cuDeviceGetAttribute},
    {"cuDeviceGetPCIBusId", 4010, (void *)cuDeviceGetPCIBusId},
    {"cuGetErrorName", 6000, (void *)cuGetErrorName},
    {"cuDevicePrimaryCtxRetain", 7000, (void *)cuDevicePrimaryCtxRetain},
    {"cuDevicePrimaryCtxRelease", 11000, (void *)cuDevicePrimaryCtxRelease_v2},
    {"cuCtxSetCurrent", 4000, (void *)cuCtxSetCurrent},
    {"cuCtxGetCurrent", 4000, (void *)cuCtxGetCurrent},
    {"cuCtxSynchronize", 2000, (void *)cuCtxSynchronize},
    {"cuMemGetInfo", 3020, (void *)cuMemGetInfo_v2},
    {"cuMemAlloc", 3020, (void *)cuMemAlloc_v2},
    {"cuMemFree", 3020, (void *)cuMemFree_v2},
    {"cuMemHostAlloc", 2020, (void *)cuMemHostAlloc},
    {"cuMemFreeHost", 2000, (void *)cuMemFreeHost},
    {"cuMemHostRegister", 6050, (void *)cuMemHostRegister_v2},
    {"cuMemHostUnregister", 4000, (void *)cuMemHostUnregister},
    {"cuPointerGetAttribute", 4000, (void *)cuPointerGetAttribute},
    {"cuStreamCreate", 2000, (void *)cuStreamCreate},
    {"cuStreamDestroy", 4000, (void *)cuStreamDestroy_v2},
    {"cuStreamSynchronize", 2000, (void *)cuStreamSynchronize},
    {"cuStreamQuery", 2000, (void *)cuStreamQuery},
    {"cuMemcpyHtoDAsync", 3020, (void *)cuMemcpyHtoDAsync_v2},
    {"cuMemcpyDtoHAsync", 3020, (void *)cuMemcpyDtoHAsync_v2},
    {"cuMemsetD8Async", 3020, (void *)cuMemsetD8Async},
    {"cuLaunchHostFunc", 10000, (void *)cuLaunchHostFunc},
    {"cuEventCreate", 2000, (void *)cuEventCreate},
    {"cuEventDestroy", 4000, (void *)cuEventDestroy_v2},
    {"cuEventRecord", 2000, (void *)cuEventRecord},
    {"cuEventSynchronize", 2000, (void *)cuEventSynchronize},
    {"cuEventQuery", 2000, (void *)cuEventQuery},
    {"cuDeviceCanAccessPeer", 4000, (void *)cuDeviceCanAccessPeer},
    {"cuMemCreate", 10020, (void *)cuMemCreate},
    {"cuMemRelease", 10020, (void *)cuMemRelease},
    {"cuMulticastGetGranularity", 12010, (void *)cuMulticastGetGranularity},
    {"cuMulticastCreate", 12010, (void *)cuMulticastCreate},
    {"cuMulticastAddDevice", 12010, (void *)cuMulticastAddDevice},
    {"cuMulticastBindMem", 12010, (void *)cuMulticastBindMem},
    {"cuMulticastUnbind", 12010, (void *)cuMulticastUnbind},
};

static uform_cuResult get_proc_address(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
                                       uform_cuProcAddressQueryResult *status) {
    const emulated_config_t *c = configuration();
    if (!symbol || !pfn) return UFORM_CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (flags > (UFORM_CU_GET_PROC_ADDRESS_LEGACY_STREAM | UFORM_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    if (cuda_version <= 0 || cuda_version > c->driver_version) return UFORM_CUDA_ERROR_INVALID_VALUE;
    int hidden = 0;
    for (size_t i = 0; i < c->missing_count; i++) hidden |= strcmp(c->missing[i], symbol) == 0;
    int known = 0;
    const entry_t *best = NULL;
    for (size_t i = 0; !hidden && i < sizeof entries / sizeof entries[0]; i++)
        if (strcmp(entries[i].base, symbol) == 0) {
            known = 1;
            if (entries[i].version <= cuda_version) best = &entries[i];
        }
    if (!best) {
        /* cuda.h (CUDA 12+): "The API will return CUDA_SUCCESS and set the returned pfn to NULL
         * if the requested driver function is not supported on the platform, no ABI compatible
         * driver function exists for the specified cudaVersion or if the driver symbol is
         * invalid", with the reason in symbolStatus. */
        if (status)
            *status = known ? UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return UFORM_CUDA_SUCCESS;
    }
    *pfn = best->function;
    if (status) *status = UFORM_CU_GET_PROC_ADDRESS_SUCCESS;
    return UFORM_CUDA_SUCCESS;
}

/* CUDA 12.0's signature; cuda.h maps cuGetProcAddress to this symbol. */
EXPORT uform_cuResult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version, uint64_t flags,
                                          uform_cuProcAddressQueryResult *status) {
    return get_proc_address(symbol, pfn, cuda_version, flags, status);
}

/* CUDA 11.3's signature, still exported under the plain name. */
EXPORT uform_cuResult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version, uint64_t flags) {
    return get_proc_address(symbol, pfn, cuda_version, flags, NULL);
}
#endif
