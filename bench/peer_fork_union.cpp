/*
 * ForkUnion (Ash Vardanian's single header, taken from UFORM_BENCH_FORK_UNION_DIR at configure
 * time, never copied here): `basic_pool` in its two spins. "pause" is
 * basic_pool<std::allocator<std::thread>, x86_pause_t> (a `pause` per spin turn, its fastest);
 * "yield" is the default basic_pool (std::this_thread::yield per turn). The calling thread is
 * one of the pool's threads, as in uform. Built with FU_ENABLE_NUMA=0.
 */
#include <fork_union.hpp>

#include <cstdio>
#include <new>

#include "peer.h"

namespace fu = ashvardanian::fork_union;

namespace {

char const *const fork_union_variants[] = {"pause", "yield", nullptr};

#if defined(__x86_64__) || defined(__i386__)
using pause_pool_t = fu::basic_pool<std::allocator<std::thread>, fu::x86_pause_t>;
#else
using pause_pool_t = fu::basic_pool<>; /* no x86 pause: the default spin */
#endif
using yield_pool_t = fu::basic_pool<>;

struct fork_union_peer_t {
    bool pause;
    size_t threads;
    pause_pool_t *pause_pool;
    yield_pool_t *yield_pool;
};

template <typename pool_t> bool spawn(pool_t *&pool, size_t threads) {
    pool = new (std::nothrow) pool_t();
    return pool && pool->try_spawn(threads);
}

void *fork_union_create(size_t threads, const char *variant, char *error, size_t error_size) {
    auto *peer = new (std::nothrow) fork_union_peer_t{!variant || variant[0] == 'p', threads, nullptr, nullptr};
    bool ok = peer && (peer->pause ? spawn(peer->pause_pool, threads) : spawn(peer->yield_pool, threads));
    if (!ok) {
        std::snprintf(error, error_size, "ForkUnion try_spawn(%zu) failed", threads);
        if (peer) {
            delete peer->pause_pool;
            delete peer->yield_pool;
            delete peer;
        }
        return nullptr;
    }
    return peer;
}

template <typename pool_t> void run_static(pool_t &pool, size_t items, bench_item_t item, void *context) {
    pool.for_n(items, [=](auto prong) noexcept { item(context, prong.task); });
}

template <typename pool_t> void run_dynamic(pool_t &pool, size_t items, bench_item_t item, void *context) {
    pool.for_n_dynamic(items, [=](auto prong) noexcept { item(context, prong.task); });
}

int fork_union_fork_join(void *pool, size_t items, bench_item_t item, void *context) {
    auto *peer = static_cast<fork_union_peer_t *>(pool);
    if (peer->pause) run_static(*peer->pause_pool, items, item, context);
    else run_static(*peer->yield_pool, items, item, context);
    return 0;
}

int fork_union_fork_join_dynamic(void *pool, size_t items, bench_item_t item, void *context) {
    auto *peer = static_cast<fork_union_peer_t *>(pool);
    if (peer->pause) run_dynamic(*peer->pause_pool, items, item, context);
    else run_dynamic(*peer->yield_pool, items, item, context);
    return 0;
}

/* Resting, the pool ends its threads (basic_pool::terminate) and back from rest spawns them
 * again: a resting pool then wakes nobody on the cores another pool is being timed on. Its own
 * sleep() would leave each worker napping in sleep_for() slices, waking every slice; with 2 ms
 * slices, uform's batches beside two such pools read 1.12-1.13x the context floor, against
 * 1.02-1.06x beside none (bench/RESULTS.md). --turns warms every turn up before timing it. */
int fork_union_rest(void *pool, const char *variant, int resting) {
    (void)variant;
    auto *peer = static_cast<fork_union_peer_t *>(pool);
    size_t threads = peer->threads;
    bool ok = true;
    if (resting) {
        if (peer->pause) peer->pause_pool->terminate();
        else peer->yield_pool->terminate();
    } else {
        ok = peer->pause ? peer->pause_pool->try_spawn(threads) : peer->yield_pool->try_spawn(threads);
    }
    if (!ok) std::fprintf(stderr, "ForkUnion try_spawn(%zu) failed after a rest\n", threads);
    return ok ? 0 : 1;
}

void fork_union_destroy(void *pool) {
    auto *peer = static_cast<fork_union_peer_t *>(pool);
    if (peer->pause_pool) peer->pause_pool->terminate();
    if (peer->yield_pool) peer->yield_pool->terminate();
    delete peer->pause_pool;
    delete peer->yield_pool;
    delete peer;
}

} // namespace

extern "C" const bench_peer_t bench_peer_fork_union = {
    "forkunion",       "ForkUnion",          fork_union_variants,          0, nullptr, fork_union_create,
    fork_union_fork_join, fork_union_destroy, fork_union_fork_join_dynamic, fork_union_rest,
};
