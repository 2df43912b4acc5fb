/*
 * OpenMP (libgomp): one parallel region per call, schedule(static). The wait policy is read
 * once when libgomp initialises, so each variant runs in a process started with its own
 * OMP_WAIT_POLICY: "default" (unset: libgomp spins a while, then sleeps), "active", "passive".
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#include "peer.h"

static const char *const openmp_variants[] = {"default", "active", "passive", NULL};

static void openmp_prepare_environment(const char *variant) {
    unsetenv("GOMP_SPINCOUNT");
    if (!variant || variant[0] == 'd') unsetenv("OMP_WAIT_POLICY");
    else setenv("OMP_WAIT_POLICY", variant, 1);
}

static void *openmp_create(size_t threads, const char *variant, char *error, size_t error_size) {
    (void)variant, (void)error, (void)error_size;
    omp_set_dynamic(0);
    omp_set_num_threads((int)threads);
    return (void *)(uintptr_t)threads;
}

static int openmp_fork_join(void *pool, size_t items, bench_item_t item, void *context) {
    int const threads = (int)(uintptr_t)pool;
    long const count = (long)items;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long i = 0; i < count; i++) item(context, (size_t)i);
    return 0;
}

static int openmp_fork_join_dynamic(void *pool, size_t items, bench_item_t item, void *context) {
    int const threads = (int)(uintptr_t)pool;
    long const count = (long)items;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (long i = 0; i < count; i++) item(context, (size_t)i);
    return 0;
}

static void openmp_destroy(void *pool) { (void)pool; }

const bench_peer_t bench_peer_openmp = {
    .name = "openmp",
    .label = "OpenMP",
    .variants = openmp_variants,
    .single_thread_only = 0,
    .prepare_environment = openmp_prepare_environment,
    .create = openmp_create,
    .fork_join = openmp_fork_join,
    .destroy = openmp_destroy,
    .fork_join_dynamic = openmp_fork_join_dynamic,
};
