/* The pools this build measures (see peers.h). */
#include "peers.h"

#include <string.h>

bench_peer_t const *const bench_peers[] = {
    &bench_peer_uform,
    &bench_peer_serial,
#ifdef UFORM_BENCH_HAVE_OPENMP
    &bench_peer_openmp,
#endif
#ifdef UFORM_BENCH_HAVE_PTHREADPOOL
    &bench_peer_pthreadpool,
#endif
#ifdef UFORM_BENCH_HAVE_TBB
    &bench_peer_tbb,
#endif
#ifdef UFORM_BENCH_HAVE_FORK_UNION
    &bench_peer_fork_union,
#endif
};
size_t const bench_peers_count = sizeof(bench_peers) / sizeof(bench_peers[0]);

bench_peer_t const *bench_find_peer(char const *name) {
    for (size_t i = 0; i < bench_peers_count; i++)
        if (strcmp(bench_peers[i]->name, name) == 0) return bench_peers[i];
    return NULL;
}

int bench_peer_selected(options_t const *o, char const *name) {
    if (!o->peers) return 1;
    size_t length = strlen(name);
    for (char const *p = o->peers; *p;) {
        char const *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == length && strncmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

size_t bench_peer_variant_count(bench_peer_t const *peer) {
    size_t count = 0;
    if (!peer->variants) return 1;
    while (peer->variants[count]) count++;
    return count;
}
