/* The CUDA driver test double's streams (README.md, "Streams"): each runs its queued operations
 * (async copies, memsets, host functions) in order on a host thread of its own; the legacy NULL
 * stream's implicit order with blocking streams; the `fault sticky=` and `link bandwidth=`
 * emulation. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulated_entry_points.h"
#include "emulated_state.h"
#include "emulated_streams.h"

pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
emulated_stream_t *live_streams;
emulated_stream_t *null_streams[EMULATED_MAX_DEVICES];
static atomic_ulong stream_operations; /* enqueued stream operations, for `fault sticky=N` */

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
    if (operation->kind == OPERATION_WAIT_EVENT) {
        /* Waited for on a faulted context too: a faulted stream still finishes its operations. */
        for (size_t i = 0; i < operation->wait_count; i++) {
            wait_finished(operation->waits[i].stream, operation->waits[i].position, 0);
            put_stream(operation->waits[i].stream);
        }
        free(operation->waits);
        return;
    }
    if (operation->faults) {
        unsigned expected = 0;
        atomic_compare_exchange_strong(&context->sticky, &expected, config.sticky_result);
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
    case OPERATION_WAIT_EVENT: break; /* run above, faulted or not */
    }
}

/* Drops a reference; the last one frees the stream. */
void put_stream(emulated_stream_t *stream) {
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

void wait_finished(emulated_stream_t *stream, unsigned long long position, int spin) {
    pthread_mutex_lock(&stream->lock);
    if (spin) {
        /* The caller's thread stays on its CPU, polling, as the driver's spin-wait does. */
        while (stream->finished < position) {
            pthread_mutex_unlock(&stream->lock);
            for (volatile int i = 0; i < 64; i++) {
            }
            pthread_mutex_lock(&stream->lock);
        }
    } else {
        while (stream->finished < position) pthread_cond_wait(&stream->changed, &stream->lock);
    }
    pthread_mutex_unlock(&stream->lock);
}

/* Waits until everything queued on `stream` so far has run. */
static void drain(emulated_stream_t *stream) {
    pthread_mutex_lock(&stream->lock);
    while (stream->head) pthread_cond_wait(&stream->changed, &stream->lock);
    pthread_mutex_unlock(&stream->lock);
}

/* The live stream behind a handle in `context` (0 is the context's legacy NULL stream), with a
 * reference the caller puts back. INVALID_HANDLE for a handle that is no live stream. */
uform_cuResult stream_of(uform_cuStream handle, emulated_context_t *context, emulated_stream_t **out) {
    uform_cuResult result = UFORM_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&streams_lock);
    if (!handle) {
        emulated_stream_t **slot = &null_streams[context - contexts];
        result = *slot ? UFORM_CUDA_SUCCESS : start_stream(context, UFORM_CU_STREAM_DEFAULT, slot);
        if (result == UFORM_CUDA_SUCCESS) (*out = *slot)->references++;
    } else if (handle == UFORM_CU_STREAM_LEGACY) {
        pthread_mutex_unlock(&streams_lock);
        return stream_of(NULL, context, out);
    } else if (handle == UFORM_CU_STREAM_PER_THREAD) {
        emulated_stream_t *found = NULL;
        for (emulated_stream_t *s = live_streams; s && !found; s = s->next_live)
            if (s->per_thread && s->context == context && pthread_equal(s->owner, pthread_self())) found = s;
        /* cuda.h: the per-thread default stream is a blocking stream (it orders with the legacy one). */
        result = found ? UFORM_CUDA_SUCCESS : start_stream(context, UFORM_CU_STREAM_DEFAULT, &found);
        if (result == UFORM_CUDA_SUCCESS) {
            if (!found->per_thread) {
                found->per_thread = 1;
                found->owner = pthread_self();
                found->next_live = live_streams;
                live_streams = found;
            }
            (*out = found)->references++;
        }
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

static uform_cuResult enqueue_counted(uform_cuStream handle, emulated_context_t *context, operation_t operation,
                                      int counted) {
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
    unsigned long number = counted ? atomic_fetch_add(&stream_operations, 1) + 1 : 0;
    queued->faults = counted && config.sticky_fault && number == config.sticky_fault;
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

static uform_cuResult enqueue(uform_cuStream handle, emulated_context_t *context, operation_t operation) {
    return enqueue_counted(handle, context, operation, 1);
}

uform_cuResult enqueue_wait(uform_cuStream handle, emulated_context_t *context, stream_position_t *waits,
                            size_t wait_count) {
    return enqueue_counted(handle, context,
                           (operation_t){.kind = OPERATION_WAIT_EVENT, .waits = waits, .wait_count = wait_count}, 0);
}

/* Every live stream of `context`, and its NULL stream, drained. */
void drain_context(emulated_context_t *context) { drain_streams(context, 0, 1); }

/* The last release of a context ends its streams (emulated_state.h). */
void end_streams(emulated_context_t *context) {
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
    /* The primary context's scheduling is CU_CTX_SCHED_AUTO, which spins while the process has
     * no more contexts than logical CPUs (cuda.h): the double's case. */
    pthread_mutex_lock(&stream->lock);
    unsigned long long position = stream->queued;
    pthread_mutex_unlock(&stream->lock);
    wait_finished(stream, position, 1);
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
