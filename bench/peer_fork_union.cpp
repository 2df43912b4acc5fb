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
    pause_pool_t *pause_pool;
    yield_pool_t *yield_pool;
};

template <typename pool_t> bool spawn(pool_t *&pool, size_t threads) {
    pool = new (std::nothrow) pool_t();
    return pool && pool->try_spawn(threads);
}

void *fork_union_create(size_t threads, const char *variant, char *error, size_t error_size) {
    auto *peer = new (std::nothrow) fork_union_peer_t{!variant || variant[0] == 'p', nullptr, nullptr};
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

/* Resting, the workers nap in sleep_for() slices (basic_pool::sleep) instead of spinning; the
 * next fork sets them grinding again, each noticing within one slice. A short slice wakes the
 * resting pool's worker often on a core another pool is timed on; a long one makes the next
 * turn's first call wait for it (--turns warms each turn up for longer than a slice). */
constexpr std::size_t rest_slice_micros = 2000;

void fork_union_rest(void *pool, const char *variant, int resting) {
    (void)variant;
    auto *peer = static_cast<fork_union_peer_t *>(pool);
    if (!resting) return;
    if (peer->pause) peer->pause_pool->sleep(rest_slice_micros);
    else peer->yield_pool->sleep(rest_slice_micros);
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
