/**
 * @file bench/peer.h
 * @brief The small interface every pool in the benchmark implements, one file per pool.
 *
 * A pool is measured through one verb, `fork_join`: run `item(context, i)` for every i in
 * [0, items) across the pool's threads (a static split where the pool has one) and return
 * when all have finished. The fork-join, first-touch, reduction and wake measurements are
 * all built from it in bench_main.c, so every pool runs exactly the same work and the same
 * reduction kernel. Adding a pool: write bench/peer_<name>.c defining a bench_peer_t, list
 * it in bench_main.c's table (guarded by its UFORM_BENCH_HAVE_<NAME>) and in
 * bench/CMakeLists.txt.
 */
#ifndef UFORM_BENCH_PEER_H
#define UFORM_BENCH_PEER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One work item; `context` is the caller's. */
typedef void (*bench_item_t)(void *context, size_t item);

typedef struct bench_peer_t {
    /** Selection key for --peers, lower case: "uform", "openmp", ... */
    const char *name;
    /** Printed name: "uform", "OpenMP", "oneTBB 2021.8", ... */
    const char *label;
    /**
     * Variants measured as separate rows, NULL-terminated (e.g. {"spinning", "parked"}), or
     * NULL for a single unnamed variant.
     */
    const char *const *variants;
    /** Nonzero: measured at 1 thread only (the serial loop). */
    int single_thread_only;
    /**
     * Optional. Runs in the forked child just before it re-executes, to set per-process
     * environment (OMP_WAIT_POLICY). `variant` is NULL for an unnamed variant.
     */
    void (*prepare_environment)(const char *variant);
    /**
     * Makes a pool of `threads` threads, the calling thread included where the pool counts
     * it. Returns NULL and writes a reason into `error` when it cannot.
     */
    void *(*create)(size_t threads, const char *variant, char *error, size_t error_size);
    /** Runs every item once and returns when all are done: 0, or nonzero on failure. */
    int (*fork_join)(void *pool, size_t items, bench_item_t item, void *context);
    /** Frees the pool. */
    void (*destroy)(void *pool);
    /**
     * Optional (NULL: the pool has none): as fork_join, but threads take items one at a time
     * (the dynamic split: a shared counter in most pools, each thread's own part first in
     * uform's).
     */
    int (*fork_join_dynamic)(void *pool, size_t items, bench_item_t item, void *context);
    /**
     * Optional (NULL: the pool cannot take part in `--turns`): with `resting` 1, puts the pool's
     * threads to sleep, so that another process's pool has the cores to itself while it takes
     * its turn; with 0, makes the pool ready for calls again as `variant` runs them (its first
     * calls may still wait for threads to wake). Called between calls only. 0, or nonzero
     * with the reason printed when the pool could not.
     */
    int (*rest)(void *pool, const char *variant, int resting);
} bench_peer_t;

extern const bench_peer_t bench_peer_serial;
extern const bench_peer_t bench_peer_uform;
extern const bench_peer_t bench_peer_openmp;
extern const bench_peer_t bench_peer_pthreadpool;
extern const bench_peer_t bench_peer_tbb;
extern const bench_peer_t bench_peer_fork_union;

#ifdef __cplusplus
}
#endif

#endif /* UFORM_BENCH_PEER_H */
