/* Page-level memory: mmap, NUMA binding through the raw mbind syscall (no libnuma), and
 * transparent huge pages. Binding is advice that never fails a caller: on a machine or
 * container without NUMA the memory is simply local. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/platform.h"

#ifndef MPOL_BIND
#define MPOL_BIND 2
#define MPOL_INTERLEAVE 3
#endif

void *uform__pages_map(size_t bytes) {
    void *pointer = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return pointer == MAP_FAILED ? NULL : pointer;
}

void uform__pages_free(void *pointer, size_t bytes) {
    if (pointer) munmap(pointer, bytes);
}

void uform__pages_bind(void *pointer, size_t bytes, const int32_t *nodes, size_t node_count) {
#ifdef SYS_mbind
    if (!pointer || !node_count) return;
    unsigned long mask[16]; /* 1024 nodes */
    memset(mask, 0, sizeof mask);
    size_t bits = sizeof mask * 8;
    for (size_t i = 0; i < node_count; i++)
        if (nodes[i] >= 0 && (size_t)nodes[i] < bits)
            mask[nodes[i] / (8 * sizeof(unsigned long))] |= 1ul << (nodes[i] % (8 * sizeof(unsigned long)));
    int mode = node_count > 1 ? MPOL_INTERLEAVE : MPOL_BIND;
    syscall(SYS_mbind, pointer, bytes, mode, mask, bits + 1, 0);
#else
    (void)pointer, (void)bytes, (void)nodes, (void)node_count;
#endif
}

void uform__pages_advise_huge(void *pointer, size_t bytes) {
#ifdef MADV_HUGEPAGE
    if (pointer) madvise(pointer, bytes, MADV_HUGEPAGE);
#endif
}
