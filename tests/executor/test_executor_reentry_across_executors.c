/* Re-entry through another executor: X's thread calls Y; Y's callback, running on that same OS
 * thread (as Y's thread 0), calls X. The header promises INVALID_ARGUMENT for a callback calling
 * its own executor, and this thread is still running X's callback underneath Y's. Before the
 * "belongs to" mark survived nested calls, the synchronous case got CONTENDED and the deferred
 * case (X's leader running the outer call) deadlocked. Y's own workers calling X are other
 * threads: they get CONTENDED while X runs a synchronous call, as any other thread would. (While
 * X runs a deferred call, another thread's synchronous call waits its turn, so a Y worker
 * calling X then would be the longer cycle the header leaves to the caller: not done here.) */
#include "executor/executor_test_util.h"
#include "test.h"

typedef struct world_t {
    uform_executor_t *x, *y;
    uform_deferred_t *x_handle; /* a deferred call of X's that X has yet to run */
    /* what Y's thread 0 (X's thread underneath) saw when it reached back into X */
    _Atomic uform_status_t sync_call, deferred_call, drain, free_status, wait_status, dynamic_call;
    /* what Y's thread 1 (Y's own worker) saw */
    _Atomic uform_status_t other_thread_call;
    _Atomic int inner_calls;
    bool deferred_outer;
    gate_t published; /* the deferred case: opened once x_handle is set */
} world_t;

static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

static uform_status_t y_callback(void *context, size_t task, size_t thread) {
    world_t *world = context;
    atomic_fetch_add(&world->inner_calls, 1);
    if (thread == 0) {
        world->sync_call = uform_executor_for_n(world->x, NULL, 4, nothing, NULL);
        world->dynamic_call = uform_executor_for_n_dynamic(world->x, NULL, 4, nothing, NULL);
        uform_deferred_t *handle = NULL;
        uform_call_t call = UFORM_CALL_INIT;
        call.deferred = &handle;
        world->deferred_call = uform_executor_for_n(world->x, &call, 4, nothing, NULL);
        if (handle) uform_deferred_free(handle);
        world->drain = uform_executor_drain(world->x, UFORM_MOOD_PARKED);
        world->free_status = uform_executor_free(world->x);
        if (world->x_handle) world->wait_status = uform_deferred_wait(world->x_handle, -1);
    } else if (!world->deferred_outer) {
        world->other_thread_call = uform_executor_for_n(world->x, NULL, 4, nothing, NULL);
    }
    return UFORM_STATUS_OK;
}

static uform_status_t x_callback(void *context, size_t task, size_t thread) {
    world_t *world = context;
    /* Only X's thread 1 goes through Y, so Y's thread 0 is a thread of X's that is not the
     * caller of the outer call (for a deferred call, X's leader is thread 0). */
    if (thread != 1) return UFORM_STATUS_OK;
    if (world->deferred_outer) gate_pass(&world->published);
    return uform_executor_for_threads(world->y, NULL, y_callback, world);
}

static void reset(world_t *world) {
    world->sync_call = world->deferred_call = world->drain = world->free_status = world->wait_status =
        world->dynamic_call = world->other_thread_call = UFORM_STATUS_OK;
    world->inner_calls = 0;
}

static void check_refused(world_t *world, bool with_wait) {
    CHECK_EQ_INT(world->inner_calls, 2);
    CHECK_STATUS(world->sync_call, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(world->dynamic_call, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(world->deferred_call, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(world->drain, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(world->free_status, UFORM_STATUS_INVALID_ARGUMENT);
    if (with_wait) CHECK_STATUS(world->wait_status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(world->other_thread_call, world->deferred_outer ? UFORM_STATUS_OK : UFORM_STATUS_CONTENDED);
}

int main(void) {
    world_t world = {0};
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &world.x));
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &world.y));

    /* X's synchronous call: its worker (thread 1) calls Y, whose thread 0 is that worker. */
    for (int round = 0; round < 20; round++) {
        reset(&world);
        CHECK_OK(uform_executor_for_threads(world.x, NULL, x_callback, &world));
        check_refused(&world, false);
    }

    /* X's deferred call (X's leader is thread 0), with a second call queued behind it: waiting
     * for that one from underneath the first would never end. */
    world.deferred_outer = true;
    for (int round = 0; round < 20; round++) {
        reset(&world);
        gate_init(&world.published);
        uform_deferred_t *outer = NULL, *queued = NULL;
        uform_call_t call = UFORM_CALL_INIT;
        call.deferred = &outer;
        CHECK_OK(uform_executor_for_threads(world.x, &call, x_callback, &world));
        call.deferred = &queued;
        CHECK_OK(uform_executor_for_n(world.x, &call, 1, nothing, NULL));
        world.x_handle = queued;
        gate_open(&world.published);
        CHECK_OK(uform_deferred_wait(outer, 30.0)); /* a deadlock would time out here */
        check_refused(&world, true);
        CHECK_OK(uform_deferred_wait(queued, 30.0));
        uform_deferred_free(outer);
        uform_deferred_free(queued);
        world.x_handle = NULL;
    }
    CHECK_OK(uform_executor_free(world.y));
    CHECK_OK(uform_executor_free(world.x));
    TEST_DONE();
}
