/* Per-thread scratch. Each thread grows its own buffer from inside its callback, so no lock is
 * needed; pages are bound to the thread's NUMA node and first touched by the thread itself. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/thread_local.h"
#include "executor/executor_internal.h"

static size_t round_up(size_t bytes) {
    size_t rounded = 64 * 1024;
#if SIZE_MAX > 0xFFFFFFFFu
    while (rounded < bytes && rounded < ((size_t)1 << 62)) rounded <<= 1;
#else
    while (rounded < bytes && rounded < ((size_t)1 << 30)) rounded <<= 1; /* 32-bit (wasm32) */
#endif
    return rounded;
}

static uform_status_t grow(void **scratch, size_t *scratch_bytes, size_t bytes, int32_t node) {
    if (bytes <= *scratch_bytes && *scratch) return UFORM_STATUS_OK;
    size_t rounded = round_up(bytes);
    void *pages = uform__pages_map(rounded);
    if (!pages) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_executor_scratch: %zu bytes", bytes);
    if (node >= 0) uform__pages_bind(pages, rounded, &node, 1);
    uform__pages_free(*scratch, *scratch_bytes);
    *scratch = pages;
    *scratch_bytes = rounded;
    return UFORM_STATUS_OK;
}

/* The NULL executor's scratch belongs to the calling thread and dies with it. */
typedef struct inline_scratch_t {
    void *pointer;
    size_t bytes;
} inline_scratch_t;

/* Initial-exec where it may be (core/thread_local.h): a NULL executor's callback may ask for its
 * scratch on every task, and the default model's __tls_get_addr was most of that. */
UFORM_HOT_THREAD_LOCAL_ inline_scratch_t uform__inline_scratch; /* hidden: the macro makes it so */
/* Its key exists only for the destructor, which unmaps at thread exit. Made by the first thread
 * that needs it, without a lock: each racer makes one, the first to publish it wins, the others
 * delete theirs (never set by anyone). Unlike pthread_once, a key that could not be made (every
 * key in use) is answered and tried again by the next call. 0: not made yet, else the key plus
 * one. */
static _Atomic uintptr_t inline_key_plus_one;

static void inline_release(void *value) {
    inline_scratch_t *scratch = value;
    uform__pages_free(scratch->pointer, scratch->bytes);
    scratch->pointer = NULL;
    scratch->bytes = 0;
}

static bool inline_key(pthread_key_t *key) {
    uintptr_t published = atomic_load_explicit(&inline_key_plus_one, memory_order_acquire);
    if (!published) {
        pthread_key_t made;
        uintptr_t expected = 0;
        if (pthread_key_create(&made, inline_release) != 0) {
            /* Every key in use; the last may have gone to a racer making this same key. */
            published = atomic_load_explicit(&inline_key_plus_one, memory_order_acquire);
            if (!published) return false;
        } else if (atomic_compare_exchange_strong(&inline_key_plus_one, &expected, (uintptr_t)made + 1)) {
            published = (uintptr_t)made + 1;
        } else {
            pthread_key_delete(made);
            published = expected;
        }
    }
    *key = (pthread_key_t)(published - 1);
    return true;
}

/** The NULL executor's scratch for the calling thread: registered for unmapping at its exit
 *  before any page is mapped, so a refused registration maps nothing (and leaks nothing). */
static uform_status_t inline_scratch(size_t bytes, void **scratch) {
    /* Already big enough: its key was set when it was first grown. */
    if (uform__inline_scratch.pointer && bytes <= uform__inline_scratch.bytes) {
        *scratch = uform__inline_scratch.pointer;
        return UFORM_STATUS_OK;
    }
    inline_scratch_t *mine = &uform__inline_scratch;
    pthread_key_t key;
    if (!inline_key(&key))
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_executor_scratch: no thread-specific key left "
                                                       "(PTHREAD_KEYS_MAX in use) to free the NULL executor's "
                                                       "scratch at thread exit");
    if (!pthread_getspecific(key) && pthread_setspecific(key, mine) != 0)
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY,
                           "uform_executor_scratch: pthread_setspecific failed for the NULL executor's scratch");
    uform_status_t status = grow(&mine->pointer, &mine->bytes, bytes, -1);
    if (status == UFORM_STATUS_OK) *scratch = mine->pointer;
    return status;
}

uform_status_t uform_executor_scratch(uform_executor_t *executor, size_t thread, size_t bytes, void **scratch) {
    if (!scratch) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_executor_scratch: output is NULL");
    size_t threads = uform_executor_threads(executor);
    if (thread >= threads)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_executor_scratch: thread %zu of %zu", thread, threads);
    if (!bytes) bytes = 1;
    if (!executor) return inline_scratch(bytes, scratch);
    uform__worker_t *worker = &executor->workers[thread];
    uform_status_t status = grow(&worker->scratch, &worker->scratch_bytes, bytes, worker->node);
    if (status == UFORM_STATUS_OK) *scratch = worker->scratch;
    return status;
}
