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

#endif /* UFORM_BENCH_PEERS_H */
