/* Process-wide placement. One process often holds several executors (a model server, a data
 * loader, one executor per group of threads that overlap in time). Each pins its workers one
 * per core; placed alone, every executor would pin worker i to the same core i, stacking threads
 * with single-CPU affinity the scheduler cannot undo, and none would know it is oversubscribed.
 *
 * So every live executor is registered with the cores it reserves (the first min(threads, cores)
 * of its order: slot 0, kept for the forking thread, and one per pinned worker). A new executor
 * orders its domains' cores by how many live executors reserve each, fewest first (keeping the
 * NUMA interleave among equals), so it takes free cores while there are any. Once cores are
 * shared, every executor reserving them is marked `sharing`: its spin loops yield and its PARKED
 * budget holds, as when oversubscribed. Creation and free take one process-wide mutex; the hot
 * path only reads the executor's own `sharing` flag. */
#include <pthread.h>
#include <stdlib.h>

#include "core/memory.h"
#include "executor/executor_internal.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static uform_executor_t *live = NULL;
static uint32_t *users = NULL; /* per CPU id: live executors reserving it */
static size_t users_size = 0;

/* fork(): the child must not find the lock held by a thread that does not exist there, and the
 * parent's executors are dead in the child (freeing them there releases memory only), so the
 * child starts with an empty registry. */
static void before_fork(void) { pthread_mutex_lock(&registry_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&registry_lock); }
static void after_fork_child(void) {
    live = NULL;
    for (size_t i = 0; i < users_size; i++) users[i] = 0;
    pthread_mutex_unlock(&registry_lock);
}
static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;
static void install_fork_handlers(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

static size_t reserved_count(const uform_executor_t *executor) {
    return executor->threads < executor->cpu_count ? executor->threads : executor->cpu_count;
}

static uint32_t users_of(int32_t cpu) { return cpu >= 0 && (size_t)cpu < users_size ? users[cpu] : 0; }

/** Grows the per-CPU table to hold `cpu`; false when memory is short (placement then just
 *  goes unregistered: correct, only less well spread). */
static bool ensure_cpu(int32_t cpu) {
    if ((size_t)cpu < users_size) return true;
    size_t size = users_size ? users_size : 64;
    while (size <= (size_t)cpu) size *= 2;
    uint32_t *grown = uform__allocate_zeroed(size, sizeof *grown);
    if (!grown) return false;
    for (size_t i = 0; i < users_size; i++) grown[i] = users[i];
    uform__deallocate(users);
    users = grown;
    users_size = size;
    return true;
}

/** Whether any core this executor reserves is reserved by another executor too. */
static bool overlaps(const uform_executor_t *executor) {
    size_t reserved = reserved_count(executor);
    for (size_t i = 0; i < reserved; i++)
        if (users_of(executor->cpus[i]) > 1) return true;
    return false;
}

/** Stable order of the cores by users, fewest first; then the caller's core, if it is among
 *  the least used, goes to slot 0 so pinned workers take the others. */
static void order_cores(uform_executor_t *executor) {
    size_t count = executor->cpu_count;
    int32_t *cpus = executor->cpus;
    for (size_t i = 1; i < count; i++) { /* insertion sort: stable, and free cores are usually first */
        int32_t cpu = cpus[i];
        uint32_t key = users_of(cpu);
        size_t j = i;
        while (j > 0 && users_of(cpus[j - 1]) > key) {
            cpus[j] = cpus[j - 1];
            j--;
        }
        cpus[j] = cpu;
    }
    int current = uform__current_cpu();
    for (size_t i = 1; i < count; i++)
        if (cpus[i] == current && users_of(cpus[i]) == users_of(cpus[0])) {
            cpus[i] = cpus[0];
            cpus[0] = current;
            break;
        }
}

void uform__placement_join(uform_executor_t *executor) {
    pthread_once(&fork_handlers_once, install_fork_handlers);
    pthread_mutex_lock(&registry_lock);
    order_cores(executor);
    size_t reserved = reserved_count(executor);
    bool registered = true;
    for (size_t i = 0; i < reserved; i++)
        if (executor->cpus[i] < 0 || !ensure_cpu(executor->cpus[i])) registered = false;
    if (registered && reserved) {
        for (size_t i = 0; i < reserved; i++) users[executor->cpus[i]]++;
        executor->placed = true;
        executor->placement_next = live;
        live = executor;
        for (uform_executor_t *other = live; other; other = other->placement_next)
            atomic_store(&other->sharing, overlaps(other));
    }
    pthread_mutex_unlock(&registry_lock);
}

void uform__placement_leave(uform_executor_t *executor) {
    if (!executor->placed) return;
    pthread_mutex_lock(&registry_lock);
    size_t reserved = reserved_count(executor);
    for (size_t i = 0; i < reserved; i++) users[executor->cpus[i]]--;
    for (uform_executor_t **link = &live; *link; link = &(*link)->placement_next)
        if (*link == executor) {
            *link = executor->placement_next;
            break;
        }
    executor->placed = false;
    for (uform_executor_t *other = live; other; other = other->placement_next)
        atomic_store(&other->sharing, overlaps(other));
    pthread_mutex_unlock(&registry_lock);
}

size_t uform__placement_users(int32_t cpu) {
    pthread_mutex_lock(&registry_lock);
    size_t count = users_of(cpu);
    pthread_mutex_unlock(&registry_lock);
    return count;
}
