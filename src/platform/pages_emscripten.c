/* Page-level memory on WebAssembly: one linear memory, no mmap of our own, no NUMA, no huge
 * pages. Pages are page-aligned, zeroed heap blocks (anonymous mmap hands out zeroed pages). */
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

#define UFORM_WASM_PAGE 65536u

void *uform__pages_map(size_t bytes) {
    if (bytes == 0 || bytes > SIZE_MAX - UFORM_WASM_PAGE) return NULL;
    size_t rounded = (bytes + UFORM_WASM_PAGE - 1) / UFORM_WASM_PAGE * UFORM_WASM_PAGE;
    void *pointer = aligned_alloc(UFORM_WASM_PAGE, rounded);
    if (pointer) memset(pointer, 0, rounded);
    return pointer;
}

void uform__pages_free(void *pointer, size_t bytes) {
    (void)bytes;
    free(pointer);
}

void uform__pages_bind(void *pointer, size_t bytes, const int32_t *nodes, size_t node_count) {
    (void)pointer, (void)bytes, (void)nodes, (void)node_count;
}

void uform__pages_advise_huge(void *pointer, size_t bytes) { (void)pointer, (void)bytes; }
