#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

int uform__thread_start(uform__thread_t *thread, void *(*entry)(void *), void *argument, const char *name,
                        const int32_t *cpus, size_t cpu_count) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    cpu_set_t *set = NULL;
    size_t set_size = 0;
    if (cpu_count) {
        int32_t highest = 0;
        for (size_t i = 0; i < cpu_count; i++)
            if (cpus[i] > highest) highest = cpus[i];
        set = CPU_ALLOC((int)highest + 1);
        if (!set) {
            pthread_attr_destroy(&attributes);
            return ENOMEM;
        }
        set_size = CPU_ALLOC_SIZE((int)highest + 1);
        CPU_ZERO_S(set_size, set);
        for (size_t i = 0; i < cpu_count; i++)
            if (cpus[i] >= 0) CPU_SET_S((size_t)cpus[i], set_size, set);
        /* Pinning at creation means the thread's first touch of its stack and scratch lands on
         * its own node; a failure here (a CPU that vanished) falls back to no pinning. musl has
         * no such attribute: there the thread is pinned just after it starts (below). */
#if defined(__GLIBC__)
        if (pthread_attr_setaffinity_np(&attributes, set_size, set) != 0) {
            /* keep going unpinned */
        }
#endif
    }
    pthread_t handle;
    int error = pthread_create(&handle, &attributes, entry, argument);
    if (error == EINVAL && set) {
        /* The kernel refused the mask (e.g. a fixture CPU that doesn't exist here): unpinned. */
        pthread_attr_destroy(&attributes);
        pthread_attr_init(&attributes);
        error = pthread_create(&handle, &attributes, entry, argument);
    }
    pthread_attr_destroy(&attributes);
#if !defined(__GLIBC__)
    if (!error && set) (void)pthread_setaffinity_np(handle, set_size, set); /* refused: unpinned */
#endif
    if (set) CPU_FREE(set);
    if (error) return error;
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    pthread_setname_np(handle, short_name);
    thread->handle = (uintptr_t)handle;
    return 0;
}

void uform__thread_join(uform__thread_t thread) { pthread_join((pthread_t)thread.handle, NULL); }

bool uform__thread_pin(uform__thread_t thread, int32_t cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np((pthread_t)thread.handle, sizeof set, &set) == 0;
}

int uform__current_cpu(void) { return sched_getcpu(); }

/* ---- fork ---------------------------------------------------------------------------------- */

_Atomic uint32_t uform__fork_generation_value = 0;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void) { uform__fork_generation_value++; }
static void install_fork_handler(void) { pthread_atfork(NULL, NULL, on_fork_child); }

uint32_t uform__fork_generation(void) {
    /* The handler is installed before any executor reads the generation, so an executor
     * created in the parent always sees the child's increment. */
    pthread_once(&fork_once, install_fork_handler);
    return uform__fork_generation_value;
}
