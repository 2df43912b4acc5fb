/**
 * @file bench/peers.h
 * @brief The pools this build measures, in the order rows are printed within a thread count.
 */
#ifndef UFORM_BENCH_PEERS_H
#define UFORM_BENCH_PEERS_H

#include "options.h"
#include "peer.h"

extern bench_peer_t const *const bench_peers[];
extern size_t const bench_peers_count;

bench_peer_t const *bench_find_peer(char const *name);
/** Whether --peers selects `name` (every pool when --peers was not given). */
int bench_peer_selected(options_t const *o, char const *name);
/** Number of variants (1 for a pool with a single unnamed one). */
size_t bench_peer_variant_count(bench_peer_t const *peer);

/** A child process's configuration, from its spec "name:variant:threads[:extra]". */
typedef struct bench_child_t {
    char name[64], variant_text[64];
    char const *variant; /* NULL where the spec says "-" */
    size_t threads;
    size_t extra;             /* the fourth field, for parts that have one (--nbody's bodies) */
    bench_peer_t const *peer; /* NULL for a name no pool has (--pairs' floor) */
} bench_child_t;

/** Parses a child's spec (with a fourth field when `with_extra`); 0, or 1 with the reason
 *  printed, naming `part`. */
int bench_child_parse(char const *spec, char const *part, int with_extra, bench_child_t *child);
/** Creates the pool the child names at its thread count; NULL with the reason printed. */
void *bench_child_create(bench_child_t const *child);

#endif /* UFORM_BENCH_PEERS_H */
