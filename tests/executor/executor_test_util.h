/* Helpers shared by the executor tests: a spin-free gate callbacks can block on, a task that
 * counts its runs, a clock. */
#ifndef UFORM_EXECUTOR_TEST_UTIL_H
#define UFORM_EXECUTOR_TEST_UTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "uform.h"

typedef struct gate_t {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
    _Atomic int arrived;
} gate_t;

static inline void gate_init(gate_t *gate) {
    pthread_mutex_init(&gate->lock, NULL);
    pthread_cond_init(&gate->cond, NULL);
    gate->open = false;
    atomic_init(&gate->arrived, 0);
}
static inline void gate_pass(gate_t *gate) {
    atomic_fetch_add(&gate->arrived, 1);
    pthread_mutex_lock(&gate->lock);
    while (!gate->open) pthread_cond_wait(&gate->cond, &gate->lock);
    pthread_mutex_unlock(&gate->lock);
}
static inline void gate_open(gate_t *gate) {
    pthread_mutex_lock(&gate->lock);
    gate->open = true;
    pthread_cond_broadcast(&gate->cond);
    pthread_mutex_unlock(&gate->lock);
}
static inline void wait_arrived(gate_t *gate, int count) {
    while (atomic_load(&gate->arrived) < count) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
}
/** A task that counts its runs: `context` is an array of _Atomic size_t, one per task. */
static inline uform_status_t count_task_runs(void *context, size_t task, size_t thread) {
    (void)thread;
    ((_Atomic size_t *)context)[task]++;
    return UFORM_STATUS_OK;
}

static inline double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

#endif
