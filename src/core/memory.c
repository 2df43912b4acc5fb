#include "core/memory.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static _Atomic long countdown = -1;

void uform__test_fail_allocations_after(long value) { atomic_store(&countdown, value); }

static int injected_failure(void) {
    long left = atomic_load_explicit(&countdown, memory_order_relaxed);
    if (left < 0) return 0;
    while (left > 0 && !atomic_compare_exchange_weak(&countdown, &left, left - 1)) {
    }
    return left == 0;
}

void *uform__allocate(size_t bytes) { return injected_failure() ? NULL : malloc(bytes ? bytes : 1); }

void *uform__allocate_zeroed(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    return injected_failure() ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *uform__allocate_aligned(size_t alignment, size_t bytes) {
    if (injected_failure()) return NULL;
    if (bytes > SIZE_MAX - alignment) return NULL;
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void *pointer = aligned_alloc(alignment, rounded ? rounded : alignment);
    if (pointer) memset(pointer, 0, rounded);
    return pointer;
}

void uform__deallocate(void *pointer) { free(pointer); }
