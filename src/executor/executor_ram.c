/* RAM executors: creation (domains, class pin, thread placement), drain, free, accessors. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "executor/executor_internal.h"
#include "hardware/topology.h"

#define UFORM_DEFERRED_LIMIT_MAX 65536
#define UFORM_SPIN_DEFAULT_US 50

static uint64_t spin_budget_ns(void) {
    /* UFORM_SPIN_MICROSECONDS, documented in the README: the PARKED spin before sleeping. */
    const char *text = getenv("UFORM_SPIN_MICROSECONDS");
    if (text && *text) {
        char *end = NULL;
        errno = 0;
        unsigned long long microseconds = strtoull(text, &end, 10);
        if (!errno && end && *end == 0 && microseconds <= 10ull * 1000 * 1000) return microseconds * 1000ull;
    }
    return UFORM_SPIN_DEFAULT_US * 1000ull;
}

static uform_status_t validate_domains(const int32_t *domains, size_t count, const uform__topology_t *topology,
                                       const char *caller) {
    if (!domains && count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: memory_domains is NULL with a count of %zu", caller,
                           count);
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; j < i; j++)
            if (domains[j] == domains[i])
                return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: memory domain %d is listed twice", caller,
                                   (int)domains[i]);
        const uform__node_t *node = uform__topology_node(topology, domains[i]);
        if (!node)
            return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: no NUMA node %d on this machine", caller, (int)domains[i]);
        if (!node->cpu_count)
            return uform__fail(UFORM_STATUS_NOT_FOUND,
                               "%s: NUMA node %d has no CPU this process may use (a memory-only node)", caller,
                               (int)domains[i]);
    }
    return UFORM_STATUS_OK;
}

uform_status_t uform__validate_ram_arguments(const int32_t *domains, size_t count, uform_cpu_class_t cpu_class,
                                             size_t deferred_limit, const char *caller,
                                             const uform__topology_t **topology_out) {
    if ((unsigned)cpu_class > UFORM_CPU_CLASS_MONOVERSIONED)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %d is not a CPU class", caller, (int)cpu_class);
    if (deferred_limit > UFORM_DEFERRED_LIMIT_MAX)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: deferred_limit %zu exceeds %d", caller, deferred_limit,
                           UFORM_DEFERRED_LIMIT_MAX);
    const uform__topology_t *topology = NULL;
    uform_status_t status = uform__topology_get(&topology);
    if (status != UFORM_STATUS_OK) return status;
    status = validate_domains(domains, count, topology, caller);
    if (status != UFORM_STATUS_OK) return status;
    status = uform__cpu_class_check(cpu_class);
    if (status != UFORM_STATUS_OK) return status;
    *topology_out = topology;
    return UFORM_STATUS_OK;
}

/** The domains' CPUs interleaved node by node, so consecutive threads alternate domains. */
static uform_status_t place_cpus(uform_executor_t *executor, const uform__topology_t *topology,
                                 const int32_t *domains, size_t domain_count) {
    size_t nodes = domain_count, total = 0;
    const uform__node_t **chosen = uform__allocate_zeroed(topology->node_count ? topology->node_count : 1, sizeof *chosen);
    if (!chosen) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_executor_for_ram: placement");
    if (domain_count) {
        for (size_t i = 0; i < domain_count; i++) chosen[i] = uform__topology_node(topology, domains[i]);
    } else {
        nodes = 0;
        for (size_t i = 0; i < topology->node_count; i++)
            if (topology->nodes[i].cpu_count) chosen[nodes++] = &topology->nodes[i];
    }
    for (size_t i = 0; i < nodes; i++) total += chosen[i]->cpu_count;
    executor->cpus = uform__allocate((total ? total : 1) * sizeof(int32_t));
    executor->nodes = uform__allocate((nodes ? nodes : 1) * sizeof(int32_t));
    if (!executor->cpus || !executor->nodes) {
        uform__deallocate(chosen);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "uform_executor_for_ram: placement");
    }
    for (size_t i = 0; i < nodes; i++) executor->nodes[i] = chosen[i]->id;
    executor->node_count = nodes;
    size_t placed = 0;
    for (size_t round = 0; placed < total; round++)
        for (size_t i = 0; i < nodes; i++)
            if (round < chosen[i]->cpu_count) executor->cpus[placed++] = chosen[i]->cpus[round];
    executor->cpu_count = total;
    uform__deallocate(chosen);
    /* The order within the domains (free cores first, the caller's core in slot 0) is settled
     * process-wide by uform__placement_join once the thread count is known. */
    return UFORM_STATUS_OK;
}

static int32_t node_of_cpu(const uform__topology_t *topology, int32_t cpu) {
    for (size_t i = 0; i < topology->node_count; i++)
        for (size_t j = 0; j < topology->nodes[i].cpu_count; j++)
            if (topology->nodes[i].cpus[j] == cpu) return topology->nodes[i].id;
    return -1;
}

int (*_Atomic uform__test_thread_start)(size_t index); /* static storage: starts NULL */

static void release_memory(uform_executor_t *executor) {
    if (executor->ops) executor->ops->release_memory(executor); /* host memory only: no driver call */
    if (executor->workers)
        for (size_t i = 0; i < executor->threads; i++)
            uform__pages_free(executor->workers[i].scratch, executor->workers[i].scratch_bytes);
    uform__deallocate(executor->workers);
    uform__deallocate(executor->queue);
    uform__deallocate(executor->cpus);
    uform__deallocate(executor->nodes);
    uform__deallocate(executor);
}

static void stop_threads(uform_executor_t *executor) {
    atomic_store(&executor->stopping, true);
    atomic_fetch_add(&executor->generation, 1);
    uform__futex_wake(uform__generation_word(executor), INT_MAX);
    pthread_mutex_lock(&executor->lock);
    pthread_cond_broadcast(&executor->queued);
    pthread_mutex_unlock(&executor->lock);
    for (size_t i = 0; i < executor->threads; i++)
        if (executor->workers[i].started) uform__thread_join(executor->workers[i].thread);
}

uform_status_t uform_executor_for_ram(const int32_t *memory_domains, size_t memory_domains_count,
                                      uform_cpu_class_t cpu_class, size_t threads, size_t deferred_limit,
                                      uform_executor_t **executor_out) {
    return uform__executor_create(memory_domains, memory_domains_count, cpu_class, threads, deferred_limit,
                                  "uform_executor_for_ram", executor_out);
}

uform_status_t uform__executor_create(const int32_t *memory_domains, size_t memory_domains_count,
                                      uform_cpu_class_t cpu_class, size_t threads, size_t deferred_limit,
                                      const char *caller, uform_executor_t **executor_out) {
    if (!executor_out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: executor output is NULL", caller);
    *executor_out = NULL;
    if (threads > UFORM_THREADS_MAX)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %zu threads exceeds the limit of %d", caller, threads,
                           UFORM_THREADS_MAX);
    const uform__topology_t *topology = NULL;
    uform_status_t status = uform__validate_ram_arguments(memory_domains, memory_domains_count, cpu_class,
                                                          deferred_limit, caller, &topology);
    if (status != UFORM_STATUS_OK) return status;

    uform_executor_t *executor = uform__allocate_aligned(UFORM_LINE_, (sizeof *executor + UFORM_LINE_ - 1) / UFORM_LINE_ *
                                                                UFORM_LINE_);
    if (!executor) return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: executor", caller);
    memset(executor, 0, sizeof *executor);
    status = place_cpus(executor, topology, memory_domains, memory_domains_count);
    if (status != UFORM_STATUS_OK) {
        release_memory(executor);
        return status;
    }
    size_t cores = executor->cpu_count;
    if (topology->quota_cpus > 0) {
        /* A cgroup quota caps how many cores this process really gets, whatever the cpuset. */
        size_t quota = (size_t)ceil(topology->quota_cpus);
        if (quota >= 1 && quota < cores) cores = quota;
    }
    if (!threads) threads = uform__default_threads_for(cores);
    if (!threads) threads = 1;
    executor->threads = threads;
    executor->cpu_class = cpu_class ? cpu_class : uform_cpu_class_derived();
    executor->fork_generation = uform__fork_generation();
    executor->oversubscribed = threads > cores;
    executor->spin_ns = spin_budget_ns();
    executor->deferred_limit = deferred_limit ? deferred_limit : UFORM_DEFERRED_LIMIT_DEFAULT;
    atomic_init(&executor->mood, UFORM_MOOD_PARKED);
    atomic_init(&executor->references, 1);
    uform__placement_join(executor); /* orders executor->cpus: before any thread is pinned */
    pthread_mutex_init(&executor->lock, NULL);
    pthread_cond_init(&executor->changed, NULL);
    pthread_cond_init(&executor->queued, NULL);
    executor->queue = uform__allocate_zeroed(executor->deferred_limit, sizeof *executor->queue);
    executor->workers = uform__allocate_aligned(UFORM_LINE_, threads * sizeof *executor->workers);
    if (executor->workers) memset(executor->workers, 0, threads * sizeof *executor->workers);
    if (!executor->queue || !executor->workers) {
        uform__placement_leave(executor);
        release_memory(executor);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: %zu threads", caller, threads);
    }
    for (size_t i = 0; i < threads; i++) {
        uform__worker_t *worker = &executor->workers[i];
        worker->executor = executor;
        worker->index = i;
        worker->node = executor->cpu_count ? node_of_cpu(topology, executor->cpus[i % executor->cpu_count]) : -1;
    }
    /* Thread 0's work runs on the caller (synchronous calls) or the leader (deferred ones);
     * workers 1.. are pinned one per core round-robin, or to the whole set when oversubscribed. */
    for (size_t i = 0; i < threads && status == UFORM_STATUS_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "uform:ram:%zu", i);
        const int32_t *cpus = executor->cpus;
        size_t cpu_count = executor->cpu_count;
        if (!executor->oversubscribed && cpu_count) {
            cpus = &executor->cpus[i % executor->cpu_count];
            cpu_count = 1;
        }
        uform__worker_t *worker = &executor->workers[i];
        worker->cpu = cpu_count == 1 ? cpus[0] : -1;
        int (*refuse)(size_t) = atomic_load_explicit(&uform__test_thread_start, memory_order_relaxed);
        int error = refuse ? refuse(i) : 0;
        if (!error)
            error = uform__thread_start(&worker->thread, i ? uform__worker_main : uform__leader_main, worker, name,
                                        cpus, cpu_count);
        if (error)
            status = uform__fail_errno(error == ENOMEM ? UFORM_STATUS_OUT_OF_MEMORY : UFORM_STATUS_IO_ERROR, error,
                                       "%s: cannot start thread %zu of %zu (%s)", caller, i, threads, name);
        worker->started = !error;
    }
    if (status != UFORM_STATUS_OK) {
        stop_threads(executor);
        uform__placement_leave(executor);
        pthread_mutex_destroy(&executor->lock);
        pthread_cond_destroy(&executor->changed);
        pthread_cond_destroy(&executor->queued);
        release_memory(executor);
        return status;
    }
    executor->slot0_cpu = executor->cpu_count ? executor->cpus[0] : -1;
    executor->join_spin_ns = executor->spin_ns;
    *executor_out = executor;
    return UFORM_STATUS_OK;
}

uform_status_t uform_executor_on_pool(const int32_t *memory_domains, size_t memory_domains_count,
                                      uform_cpu_class_t cpu_class, void *pool, size_t deferred_limit,
                                      uform_executor_t **executor_out) {
    static const char caller[] = "uform_executor_on_pool";
    if (!executor_out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: executor output is NULL", caller);
    *executor_out = NULL;
    if (!pool) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: pool is NULL", caller);
    const uform__topology_t *topology = NULL;
    uform_status_t status = uform__validate_ram_arguments(memory_domains, memory_domains_count, cpu_class,
                                                          deferred_limit, caller, &topology);
    if (status != UFORM_STATUS_OK) return status;
    return uform__fail(UFORM_STATUS_UNSUPPORTED,
                       "%s: borrowing a ForkUnion pool is not designed yet; use uform_executor_for_ram", caller);
}

static uform_status_t validate_mood(uform_mood_t mood) {
    if (mood != UFORM_MOOD_SPINNING && mood != UFORM_MOOD_PARKED)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_executor_drain: %d is not a mood", (int)mood);
    return UFORM_STATUS_OK;
}


uform_status_t uform_executor_drain(uform_executor_t *executor, uform_mood_t mood) {
    uform_status_t status = validate_mood(mood);
    if (status != UFORM_STATUS_OK || !executor) return status;
    /* Counted in until the last touch below, so a free racing this drain waits for it. */
    status = uform__enter_call(executor, "uform_executor_drain");
    if (status != UFORM_STATUS_OK) return status;
    pthread_mutex_lock(&executor->lock);
    uform__bias_revoke_locked(executor); /* its owner's call, if one runs, is in the word now */
    uform__wait_locked(executor, UFORM_WAIT_IDLE, executor->submitted);
    pthread_mutex_unlock(&executor->lock);
    if (executor->ops) {
        /* The layer idles too (device streams); a sticky fault of its own fails the drain. */
        status = executor->ops->drain(executor);
        if (status != UFORM_STATUS_OK) {
            uform__leave(executor);
            return status;
        }
    }
    uint32_t previous = atomic_exchange(&executor->mood, (uint32_t)mood);
    /* Sleeping workers only look at the mood when woken: wake them to start spinning. One
     * that read PARKED but had not yet slept misses a single wake, so wake until none sleeps
     * (bounded: a worker descheduled for long is left to the next call's wake). */
    if (previous != (uint32_t)mood && mood == UFORM_MOOD_SPINNING) {
        for (int attempt = 0; attempt < 1000; attempt++) {
            uform__futex_wake(uform__generation_word(executor), INT_MAX);
            if (!atomic_load(&executor->sleepers)) break;
            uform__thread_yield();
        }
    }
    uform__leave(executor);
    return UFORM_STATUS_OK;
}

uform_status_t uform_executor_free(uform_executor_t *executor) {
    if (!executor) return UFORM_STATUS_OK;
    /* Counted in first, like any caller: a second free racing this one is one more thread to
     * wait for, and reads nothing before it is counted. */
    uform__enter(executor);
    if (uform__forked_since(executor->fork_generation)) {
        /* In a fork()ed child the threads are gone and the locks may be held by ghosts: release
         * memory only. */
        release_memory(executor);
        return uform__fail(UFORM_STATUS_FORKED,
                           "uform_executor_free: executor inherited across fork(); memory released, no threads joined");
    }
    if (uform__thread_belongs_to(executor)) {
        uform__leave(executor);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "uform_executor_free: called from inside one of this executor's own callbacks");
    }
    pthread_mutex_lock(&executor->lock);
    if (atomic_fetch_or(&executor->hold, UFORM_HOLD_CLOSING) & UFORM_HOLD_CLOSING) {
        pthread_mutex_unlock(&executor->lock);
        uform__leave(executor);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_executor_free: already being freed by another thread");
    }
    pthread_cond_broadcast(&executor->changed); /* a claiming synchronous call gives up */
    uform__bias_revoke_locked(executor); /* CLOSING set: no bias is granted again */
    /* Every queued call runs, every thread inside the API (a call finishing, a verb refused,
     * a drain, a second free) has counted itself out: nobody touches the executor after this. */
    uform__wait_locked(executor, UFORM_WAIT_CLOSED, executor->submitted);
    pthread_mutex_unlock(&executor->lock);
    /* Drained. Its holders (device arenas, meshes) keep it: the last of them closes it. */
    if (executor->ops) executor->ops->drain(executor);
    uform__executor_release(executor);
    return UFORM_STATUS_OK;
}

void uform__executor_attach(uform_executor_t *executor, const uform__executor_ops_t *ops, void *layer) {
    executor->ops = ops;
    executor->layer = layer;
}

void *uform__executor_layer(const uform_executor_t *executor, const uform__executor_ops_t *ops) {
    return executor->ops == ops ? executor->layer : NULL;
}

void uform__executor_retain(uform_executor_t *executor) { atomic_fetch_add(&executor->references, 1); }

void uform__executor_release(uform_executor_t *executor) {
    if (atomic_fetch_sub(&executor->references, 1) != 1) return;
    stop_threads(executor);
    uform__placement_leave(executor);
    pthread_mutex_destroy(&executor->lock);
    pthread_cond_destroy(&executor->changed);
    pthread_cond_destroy(&executor->queued);
    if (executor->ops) executor->ops->close(executor);
    release_memory(executor);
}

/* The accessors count themselves in too: a free racing them waits until they have read. In a
 * fork()ed child nothing can free the executor under them, and leaving might take a mutex a
 * vanished thread holds: they only read. */
static bool count_in(const uform_executor_t *executor) {
    if (uform__forked_since(executor->fork_generation)) return false;
    uform__enter(executor);
    return true;
}
size_t uform_executor_threads(const uform_executor_t *executor) {
    if (!executor) return 1;
    bool counted = count_in(executor);
    size_t threads = executor->threads;
    if (counted) uform__leave(executor);
    return threads;
}

uform_cpu_class_t uform_executor_cpu_class(const uform_executor_t *executor) {
    if (!executor) return uform_cpu_class_derived();
    bool counted = count_in(executor);
    uform_cpu_class_t cpu_class = executor->cpu_class;
    if (counted) uform__leave(executor);
    return cpu_class;
}

uform_mood_t uform_executor_mood(const uform_executor_t *executor) {
    if (!executor) return UFORM_MOOD_PARKED;
    bool counted = count_in(executor);
    uform_mood_t mood = (uform_mood_t)atomic_load(&executor->mood);
    if (counted) uform__leave(executor);
    return mood;
}
