/* pthreadpool: pthreadpool_parallelize_1d, default flags (workers spin briefly, then sleep). */
#include <pthreadpool.h>
#include <stdio.h>

#include "peer.h"

static void *pthreadpool_peer_create(size_t threads, const char *variant, char *error, size_t error_size) {
    (void)variant;
    pthreadpool_t pool = pthreadpool_create(threads);
    if (!pool) snprintf(error, error_size, "pthreadpool_create(%zu) failed", threads);
    return pool;
}

static int pthreadpool_peer_fork_join(void *pool, size_t items, bench_item_t item, void *context) {
    pthreadpool_parallelize_1d((pthreadpool_t)pool, (pthreadpool_task_1d_t)item, context, items, 0);
    return 0;
}

static void pthreadpool_peer_destroy(void *pool) { pthreadpool_destroy((pthreadpool_t)pool); }

const bench_peer_t bench_peer_pthreadpool = {
    .name = "pthreadpool",
    .label = "pthreadpool",
    .variants = NULL,
    .single_thread_only = 0,
    .prepare_environment = NULL,
    .create = pthreadpool_peer_create,
    .fork_join = pthreadpool_peer_fork_join,
    .destroy = pthreadpool_peer_destroy,
};
