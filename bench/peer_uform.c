/* uform's RAM executor, in its two moods: SPINNING and PARKED (set with a drain). */
#include <stdio.h>
#include <string.h>

#include "peer.h"
#include "uform/executor.h"

static const char *const uform_variants[] = {"spinning", "parked", NULL};

typedef struct uform_peer_call_t {
    bench_item_t item;
    void *context;
} uform_peer_call_t;

static uform_status_t uform_peer_task(void *context, size_t task, size_t thread) {
    (void)thread;
    uform_peer_call_t const *call = (uform_peer_call_t const *)context;
    call->item(call->context, task);
    return UFORM_STATUS_OK;
}

static void *uform_peer_create(size_t threads, const char *variant, char *error, size_t error_size) {
    uform_executor_t *executor = NULL;
    uform_status_t status = uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &executor);
    if (status != UFORM_STATUS_OK) {
        snprintf(error, error_size, "uform_executor_for_ram: %s (%s)", uform_status_name(status), uform_last_error());
        return NULL;
    }
    uform_mood_t mood = (variant && strcmp(variant, "spinning") == 0) ? UFORM_MOOD_SPINNING : UFORM_MOOD_PARKED;
    status = uform_executor_drain(executor, mood);
    if (status != UFORM_STATUS_OK) {
        snprintf(error, error_size, "uform_executor_drain: %s (%s)", uform_status_name(status), uform_last_error());
        uform_executor_free(executor);
        return NULL;
    }
    if (uform_executor_threads(executor) != threads || uform_executor_mood(executor) != mood) {
        snprintf(error, error_size, "executor reports %zu threads, mood %d; asked %zu, %d",
                 uform_executor_threads(executor), (int)uform_executor_mood(executor), threads, (int)mood);
        uform_executor_free(executor);
        return NULL;
    }
    return executor;
}

static int uform_peer_fork_join(void *pool, size_t items, bench_item_t item, void *context) {
    uform_peer_call_t call = {item, context};
    uform_status_t status = uform_executor_for_n((uform_executor_t *)pool, NULL, items, uform_peer_task, &call);
    if (status != UFORM_STATUS_OK) {
        fprintf(stderr, "uform_executor_for_n: %s (%s)\n", uform_status_name(status), uform_last_error());
        return 1;
    }
    return 0;
}

static int uform_peer_fork_join_dynamic(void *pool, size_t items, bench_item_t item, void *context) {
    uform_peer_call_t call = {item, context};
    uform_status_t status =
        uform_executor_for_n_dynamic((uform_executor_t *)pool, NULL, items, uform_peer_task, &call);
    if (status != UFORM_STATUS_OK) {
        fprintf(stderr, "uform_executor_for_n_dynamic: %s (%s)\n", uform_status_name(status), uform_last_error());
        return 1;
    }
    return 0;
}

/* Resting, the executor parks (its workers sleep on a futex); back from rest it takes the
 * variant's mood again. A drain waits for nothing here: calls run one at a time. */
static int uform_peer_rest(void *pool, const char *variant, int resting) {
    int spinning = variant && strcmp(variant, "spinning") == 0;
    uform_status_t status = uform_executor_drain((uform_executor_t *)pool,
                                                 !resting && spinning ? UFORM_MOOD_SPINNING : UFORM_MOOD_PARKED);
    if (status == UFORM_STATUS_OK) return 0;
    fprintf(stderr, "uform_executor_drain: %s (%s)\n", uform_status_name(status), uform_last_error());
    return 1;
}

static void uform_peer_destroy(void *pool) { uform_executor_free((uform_executor_t *)pool); }

const bench_peer_t bench_peer_uform = {
    .name = "uform",
    .label = "uform",
    .variants = uform_variants,
    .single_thread_only = 0,
    .prepare_environment = NULL,
    .create = uform_peer_create,
    .fork_join = uform_peer_fork_join,
    .destroy = uform_peer_destroy,
    .fork_join_dynamic = uform_peer_fork_join_dynamic,
    .rest = uform_peer_rest,
};
