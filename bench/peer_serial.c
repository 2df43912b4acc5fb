/* The serial loop: every item on the calling thread, one after another. */
#include "peer.h"

static void *serial_create(size_t threads, const char *variant, char *error, size_t error_size) {
    (void)threads, (void)variant, (void)error, (void)error_size;
    static int pool; /* nothing to own; any non-NULL pointer */
    return &pool;
}

static int serial_fork_join(void *pool, size_t items, bench_item_t item, void *context) {
    (void)pool;
    for (size_t i = 0; i < items; i++) item(context, i);
    return 0;
}

static void serial_destroy(void *pool) { (void)pool; }

const bench_peer_t bench_peer_serial = {
    .name = "serial",
    .label = "serial loop",
    .variants = NULL,
    .single_thread_only = 1,
    .prepare_environment = NULL,
    .create = serial_create,
    .fork_join = serial_fork_join,
    .destroy = serial_destroy,
};
