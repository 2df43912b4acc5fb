/* The CUDA driver test double's streams, as emulated_streams.c keeps them and emulated_events.c
 * reads them (internal): each runs its queued operations in order on a host thread of its own,
 * counting what it ever queued and finished, so an event can capture a position. */
#ifndef UFORM_CUDA_EMULATED_STREAMS_H
#define UFORM_CUDA_EMULATED_STREAMS_H

#include <pthread.h>
#include <stddef.h>

#include "emulated_state.h"
#include "gpu/cuda/cuda_abi.h"

struct emulated_stream_t;
/* One stream's position: done once that stream has finished `position` operations. */
typedef struct stream_position_t {
    struct emulated_stream_t *stream; /* with a reference of its own */
    unsigned long long position;
} stream_position_t;

typedef enum { OPERATION_COPY, OPERATION_SET, OPERATION_HOST_FUNCTION, OPERATION_WAIT_EVENT } operation_kind_t;
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
    /* OPERATION_WAIT_EVENT (cuStreamWaitEvent): the event's recording, waited for before the
     * stream's later work; the operation owns the array and its references. */
    stream_position_t *waits;
    size_t wait_count;
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
    int per_thread;           /* a thread's CU_STREAM_PER_THREAD stream, made on its first use */
    pthread_t owner;          /* that thread */
    int references;           /* its thread's and callers' in flight, under streams_lock */
} emulated_stream_t;

extern pthread_mutex_t streams_lock;
extern emulated_stream_t *live_streams; /* under streams_lock */
/* The legacy NULL stream of each context, created on first use. */
extern emulated_stream_t *null_streams[EMULATED_MAX_DEVICES]; /* under streams_lock */

/* Drops a reference; the last one frees the stream. */
void put_stream(emulated_stream_t *stream);

/* The live stream behind a handle in `context` (0 and CU_STREAM_LEGACY are the context's legacy
 * NULL stream, CU_STREAM_PER_THREAD the calling thread's default stream), with a reference the
 * caller puts back. INVALID_HANDLE for a handle that is no live stream. */
uform_cuResult stream_of(uform_cuStream handle, emulated_context_t *context, emulated_stream_t **out);

/* Waits until `stream` has finished `position` operations: with `spin`, polling on the calling
 * thread's CPU (the driver's CU_CTX_SCHED_SPIN, which CU_CTX_SCHED_AUTO picks while the process
 * has no more contexts than logical CPUs, and every wait on an event without
 * CU_EVENT_BLOCKING_SYNC then); else blocked, off the CPU (CU_EVENT_BLOCKING_SYNC). */
void wait_finished(emulated_stream_t *stream, unsigned long long position, int spin);

/* Queues a wait for `waits` (taken over, references and array) on the stream behind `handle`
 * (cuStreamWaitEvent): not counted by `fault sticky=`, as no work of its own. */
uform_cuResult enqueue_wait(uform_cuStream handle, emulated_context_t *context, stream_position_t *waits,
                            size_t wait_count);

#endif
