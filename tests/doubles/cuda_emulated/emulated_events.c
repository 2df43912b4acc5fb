/* The CUDA driver test double's events (README.md, "Events"): the work a stream had queued when
 * the event was recorded, queried and waited for, with the legacy NULL stream's implicit order
 * captured too. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "emulated_entry_points.h"
#include "emulated_state.h"
#include "emulated_streams.h"

/* cuda.h's CU_EVENT_INTERPROCESS, which cuda_abi.h does not declare (uform never creates one). */
#define EVENT_INTERPROCESS 4u

/* One stream's part of a recording: done once the stream has finished `position` operations. */
typedef stream_position_t capture_t;

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
void end_events(emulated_context_t *context) {
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

/* cuda.h: CU_EVENT_DEFAULT, _BLOCKING_SYNC, _DISABLE_TIMING, and _INTERPROCESS only along with
 * _DISABLE_TIMING; the event belongs to the current context. _BLOCKING_SYNC decides how
 * cuEventSynchronize waits (blocked, or spinning); no timing is kept, so _DISABLE_TIMING changes
 * nothing. */
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
    /* cuda.h: a thread waiting on a CU_EVENT_BLOCKING_SYNC event blocks until it completes;
     * on any other event it waits as the context's scheduling says (SCHED_AUTO: spinning). */
    int spin = !(event->flags & UFORM_CU_EVENT_BLOCKING_SYNC);
    for (size_t i = 0; i < count; i++) wait_finished(captures[i].stream, captures[i].position, spin);
    put_captures(captures, count);
    unsigned sticky = atomic_load(&event->context->sticky);
    put_event(event);
    return sticky ? sticky : result;
}

/* cuda.h: work queued on `stream` after the call waits until the event's latest recording has
 * completed, on the device (the host does not block); an event never recorded imposes nothing;
 * the event may be of another context or device; Flags must be 0 (CU_EVENT_WAIT_DEFAULT) here,
 * as no other flag is one uform uses. The wait is a copy of the recording, so a later
 * cuEventRecord does not change it. */
EXPORT uform_cuResult cuStreamWaitEvent(uform_cuStream stream_handle, uform_cuEvent handle, unsigned int flags) {
    ENTER_CONTEXT();
    if (flags) return UFORM_CUDA_ERROR_INVALID_VALUE;
    emulated_event_t *event = NULL;
    uform_cuResult result = event_of(handle, &event);
    if (result != UFORM_CUDA_SUCCESS) return result;
    emulated_stream_t *stream = NULL;
    result = stream_of(stream_handle, context, &stream); /* checked before anything is queued */
    capture_t *captures = NULL;
    size_t count = 0;
    if (result == UFORM_CUDA_SUCCESS) {
        put_stream(stream);
        result = snapshot_captures(event, &captures, &count);
    }
    put_event(event);
    if (result != UFORM_CUDA_SUCCESS || !count) {
        put_captures(captures, count);
        return result;
    }
    result = enqueue_wait(stream_handle, context, captures, count);
    if (result != UFORM_CUDA_SUCCESS) put_captures(captures, count);
    return result;
}
