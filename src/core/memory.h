/* Internal: the library's heap allocations go through here, so tests can make the Nth one fail
 * and check that every path answers OUT_OF_MEMORY cleanly (no crash, no leak, no half state). */
#ifndef UFORM_CORE_MEMORY_H
#define UFORM_CORE_MEMORY_H

#include <stddef.h>

void *uform__allocate(size_t bytes);                    /* malloc */
void *uform__allocate_zeroed(size_t count, size_t size); /* calloc, overflow-checked */
void *uform__allocate_aligned(size_t alignment, size_t bytes); /* zeroed, bytes rounded up */
void uform__deallocate(void *pointer);

/** Tests only: the next `countdown` allocations succeed, then every one fails (-1: never). */
void uform__test_fail_allocations_after(long countdown);

#endif
