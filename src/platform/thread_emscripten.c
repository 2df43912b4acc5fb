/* Threads on WebAssembly: pthreads on Web Workers over shared memory (-pthread). There is no
 * CPU affinity: a CPU list is accepted and ignored, pinning reports "not pinned" and the
 * current CPU is unknown. There is no fork either, so the fork generation never changes. */
#include <emscripten/threading.h>
#include <pthread.h>
#include <string.h>

#include "platform/platform.h"

int uform__thread_start(uform__thread_t *thread, void *(*entry)(void *), void *argument, const char *name,
                        const int32_t *cpus, size_t cpu_count) {
    (void)cpus, (void)cpu_count;
    pthread_t handle;
    int error = pthread_create(&handle, NULL, entry, argument);
    if (error) return error;
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    emscripten_set_thread_name(handle, short_name);
    thread->handle = (uintptr_t)handle;
    return 0;
}

void uform__thread_join(uform__thread_t thread) { pthread_join((pthread_t)thread.handle, NULL); }

bool uform__thread_pin(uform__thread_t thread, int32_t cpu) {
    (void)thread, (void)cpu;
    return false;
}

int uform__current_cpu(void) { return -1; }

/* ---- fork: none on WebAssembly ------------------------------------------------------------- */

_Atomic uint32_t uform__fork_generation_value = 0;

uint32_t uform__fork_generation(void) { return uform__fork_generation_value; }
