// oneTBB: a task_arena of max_concurrency = threads (the caller's slot included), entered
// with execute(), running parallel_for over unit-grain ranges with static_partitioner.
// global_control lifts the process-wide worker limit so 2x oversubscription really happens.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "peer.h"

namespace {

struct tbb_pool {
    std::unique_ptr<tbb::global_control> control;
    std::unique_ptr<tbb::task_arena> arena;
};

void *tbb_create(size_t threads, const char *, char *error, size_t error_size) {
    try {
        auto pool = std::make_unique<tbb_pool>();
        pool->control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
        pool->arena = std::make_unique<tbb::task_arena>(static_cast<int>(threads));
        pool->arena->initialize();
        return pool.release();
    } catch (std::exception const &e) {
        std::snprintf(error, error_size, "oneTBB: %s", e.what());
        return nullptr;
    }
}

int tbb_fork_join(void *opaque, size_t items, bench_item_t item, void *context) {
    auto *pool = static_cast<tbb_pool *>(opaque);
    try {
        pool->arena->execute([&] {
            tbb::parallel_for(
                tbb::blocked_range<size_t>(0, items, 1),
                [&](tbb::blocked_range<size_t> const &range) {
                    for (size_t i = range.begin(); i != range.end(); ++i) item(context, i);
                },
                tbb::static_partitioner());
        });
    } catch (std::exception const &e) {
        std::fprintf(stderr, "oneTBB: %s\n", e.what());
        return 1;
    }
    return 0;
}

void tbb_destroy(void *opaque) { delete static_cast<tbb_pool *>(opaque); }

#define UFORM_BENCH_STR2_(x) #x
#define UFORM_BENCH_STR_(x) UFORM_BENCH_STR2_(x)

} // namespace

extern "C" const bench_peer_t bench_peer_tbb = {
    "tbb",
    "oneTBB " UFORM_BENCH_STR_(TBB_VERSION_MAJOR) "." UFORM_BENCH_STR_(TBB_VERSION_MINOR),
    nullptr,
    0,
    nullptr,
    tbb_create,
    tbb_fork_join,
    tbb_destroy,
    nullptr, /* no dynamic split of its own here: N-body's dynamic rows skip oneTBB */
    nullptr, /* no way to rest its threads through this interface: left out of --turns */
};
