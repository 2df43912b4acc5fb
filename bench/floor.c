/* The floor: two pinned threads, one line each way, a slot each (see floor.h). */
#include "floor.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work.h"

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* What a C caller of any pool hands over for a call: the item and its context, in a struct on
 * its stack built for the call (bench/peer_uform.c's adapter; ForkUnion's lambda likewise). */
typedef struct floor_call_t {
    bench_item_t item;
    void *context;
} floor_call_t;

enum { FLOOR_RUNNING = 0, FLOOR_RESTING, FLOOR_STOPPING };

struct bench_floor_t {
    _Alignas(128) _Atomic size_t ping;
    /* On ping's line: the "with context" floor's call struct, NULL for the plain floor. */
    _Atomic(floor_call_t *) call;
    _Alignas(128) _Atomic size_t pong;
    /* Read by the spinning answerer on every turn, written only between calls. */
    _Alignas(128) _Atomic int state;
    pthread_mutex_t lock; /* with `woken`: where a resting answerer sleeps */
    pthread_cond_t woken;
    int context;
    int cpus[2];
    pthread_t answerer;
    bench_item_t item;
    bench_work_slot_t slots[2];
};

static void pin_self(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* Sleeps while the floor rests; false once it stops. */
static int keep_answering(bench_floor_t *f) {
    pthread_mutex_lock(&f->lock);
    while (atomic_load(&f->state) == FLOOR_RESTING) pthread_cond_wait(&f->woken, &f->lock);
    int const running = atomic_load(&f->state) == FLOOR_RUNNING;
    pthread_mutex_unlock(&f->lock);
    return running;
}

static void *floor_answer(void *argument) {
    bench_floor_t *f = (bench_floor_t *)argument;
    pin_self(f->cpus[1]);
    size_t seen = 0;
    for (;;) {
        size_t value;
        while ((value = atomic_load_explicit(&f->ping, memory_order_acquire)) == seen) {
            if (atomic_load_explicit(&f->state, memory_order_relaxed) != FLOOR_RUNNING && !keep_answering(f))
                return NULL;
            relax();
        }
        seen = value;
        floor_call_t *call = atomic_load_explicit(&f->call, memory_order_relaxed);
        if (call)
            call->item(call->context, 1); /* through the caller's struct, a line its stores own */
        else
            f->item(f->slots, 1);
        atomic_store_explicit(&f->pong, value, memory_order_release);
    }
}

bench_floor_t *bench_floor_start(bench_item_t item, int context, char *error, size_t error_size) {
    cpu_set_t mine;
    sched_getaffinity(0, sizeof mine, &mine);
    int cpus[2], found = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
        if (CPU_ISSET(cpu, &mine)) cpus[found++] = cpu;
    if (found < 2) {
        snprintf(error, error_size, "the floor needs two CPUs");
        return NULL;
    }
    bench_floor_t *f = aligned_alloc(128, sizeof *f);
    if (!f) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->woken, NULL);
    f->item = item;
    f->context = context;
    memcpy(f->cpus, cpus, sizeof cpus);
    if (pthread_create(&f->answerer, NULL, floor_answer, f) != 0) {
        snprintf(error, error_size, "pthread_create failed");
        pthread_cond_destroy(&f->woken);
        pthread_mutex_destroy(&f->lock);
        free(f);
        return NULL;
    }
    pin_self(f->cpus[0]);
    return f;
}

int bench_floor_call(bench_floor_t *f, size_t *calls) {
    if (atomic_load_explicit(&f->state, memory_order_relaxed) != FLOOR_RUNNING) {
        /* The answerer sleeps until woken: the call would wait for ever. */
        fprintf(stderr, "uform bench: a floor call while the floor rests\n");
        return 1;
    }
    size_t call = ++*calls;
    floor_call_t on_stack = {f->item, f->slots};
    if (f->context) atomic_store_explicit(&f->call, &on_stack, memory_order_relaxed);
    atomic_store_explicit(&f->ping, call, memory_order_release);
    f->item(f->slots, 0);
    while (atomic_load_explicit(&f->pong, memory_order_acquire) != call) relax();
    return bench_work_check(f->slots, 2, call, "floor");
}

static void set_state(bench_floor_t *f, int state) {
    pthread_mutex_lock(&f->lock);
    atomic_store(&f->state, state);
    pthread_cond_broadcast(&f->woken);
    pthread_mutex_unlock(&f->lock);
}

void bench_floor_rest(bench_floor_t *f, int resting) { set_state(f, resting ? FLOOR_RESTING : FLOOR_RUNNING); }

void bench_floor_stop(bench_floor_t *f) {
    set_state(f, FLOOR_STOPPING);
    pthread_join(f->answerer, NULL);
    pthread_cond_destroy(&f->woken);
    pthread_mutex_destroy(&f->lock);
    free(f);
}
