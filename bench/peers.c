/* The pools this build measures (see peers.h). */
#include "peers.h"

#include <stdio.h>
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

int bench_child_parse(char const *spec, char const *part, int with_extra, bench_child_t *child) {
    memset(child, 0, sizeof *child);
    int fields = sscanf(spec, "%63[^:]:%63[^:]:%zu:%zu", child->name, child->variant_text, &child->threads,
                        &child->extra);
    if (fields != (with_extra ? 4 : 3) || !child->threads || (with_extra && !child->extra)) {
        fprintf(stderr, "uform bench: bad %s spec %s\n", part, spec);
        return 1;
    }
    child->variant = strcmp(child->variant_text, "-") == 0 ? NULL : child->variant_text;
    child->peer = bench_find_peer(child->name);
    return 0;
}

void *bench_child_create(bench_child_t const *child) {
    char error[512] = "";
    void *pool = child->peer ? child->peer->create(child->threads, child->variant, error, sizeof(error)) : NULL;
    if (!pool)
        fprintf(stderr, "uform bench: %s: %s\n", child->name,
                !child->peer ? "no pool of that name in this build" : error[0] ? error : "create failed");
    return pool;
}
