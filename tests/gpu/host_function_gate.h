/* A gate a host function can wait on inside a stream (cuLaunchHostFunc, hipLaunchHostFunc), so a
 * test of a driver double holds the stream's work back until it opens the gate. */
#ifndef UFORM_TEST_HOST_FUNCTION_GATE_H
#define UFORM_TEST_HOST_FUNCTION_GATE_H

#include <pthread.h>

typedef struct gate_t {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int open;
} gate_t;

#define GATE_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}

/** A host function: returns once the gate is open. */
static inline void gate_wait(void *argument) {
    gate_t *gate = argument;
    pthread_mutex_lock(&gate->lock);
    while (!gate->open) pthread_cond_wait(&gate->changed, &gate->lock);
    pthread_mutex_unlock(&gate->lock);
}

/** Opens the gate, from the test or as a host function of another stream. */
static inline void gate_open(void *argument) {
    gate_t *gate = argument;
    pthread_mutex_lock(&gate->lock);
    gate->open = 1;
    pthread_cond_broadcast(&gate->changed);
    pthread_mutex_unlock(&gate->lock);
}

#endif
