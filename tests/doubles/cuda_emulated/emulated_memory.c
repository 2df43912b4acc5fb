/* The CUDA driver test double's memory (README.md, "Device memory", "Pinned host memory"):
 * device memory (host memory tagged with its device, charged against the device's `memory=`),
 * pinned and registered host memory, and the pointer attributes of all of them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "emulated_entry_points.h"
#include "emulated_state.h"

/* Every allocation the double made or registered: device memory, cuMemHostAlloc'd and
 * cuMemHostRegister'ed host memory. Device memory is host memory tagged with its device. */
typedef enum { ALLOCATION_DEVICE, ALLOCATION_HOST, ALLOCATION_REGISTERED } allocation_kind_t;
typedef struct allocation_t {
    struct allocation_t *next;
    allocation_kind_t kind;
    char *base;
    size_t bytes;   /* what the caller asked for */
    size_t charged; /* device memory: what it counts against the device (256-byte granules) */
    int device;
} allocation_t;

static allocation_t *allocations; /* under memory_lock */
static atomic_ulong alloc_calls;  /* cuMemAlloc calls, for `fault alloc=N` */

/* The allocation holding [address, address + bytes), or NULL. Under memory_lock. */
static allocation_t *allocation_holding(const void *address, size_t bytes) {
    const char *p = address;
    for (allocation_t *a = allocations; a; a = a->next)
        if (p >= a->base && p <= a->base + a->bytes && bytes <= (size_t)(a->base + a->bytes - p) &&
            (bytes || p < a->base + a->bytes))
            return a;
    return NULL;
}

/* Unlinks and answers the allocation of `kind` starting at `base`, or NULL. Under memory_lock. */
static allocation_t *unlink_allocation(const void *base, allocation_kind_t kind) {
    for (allocation_t **link = &allocations; *link; link = &(*link)->next)
        if ((*link)->base == base && (*link)->kind == kind) {
            allocation_t *found = *link;
            *link = found->next;
            return found;
        }
    return NULL;
}

/* The driver checks an async copy's device range against its allocations up front. */
int device_range_valid(uform_cuDevicePtr pointer, size_t bytes) {
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = allocation_holding((void *)(uintptr_t)pointer, bytes);
    int valid = found && found->kind == ALLOCATION_DEVICE;
    pthread_mutex_unlock(&memory_lock);
    return valid;
}

/* A primary context's last release frees its device memory. Under memory_lock. */
void free_device_allocations(int device) {
    for (allocation_t **link = &allocations; *link;) {
        allocation_t *a = *link;
        if (a->kind == ALLOCATION_DEVICE && a->device == device) {
            *link = a->next;
            device_used[device] -= a->charged;
            free(a->base);
            free(a);
        } else {
            link = &a->next;
        }
    }
}

/* ---- Device memory ---- */

EXPORT uform_cuResult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
    ENTER_CONTEXT();
    if (!free_bytes || !total_bytes) return UFORM_CUDA_ERROR_INVALID_VALUE;
    uint64_t total = config.devices[order[CONTEXT_DEVICE(context)]].memory_bytes;
    pthread_mutex_lock(&memory_lock);
    *free_bytes = (size_t)(total - device_used[CONTEXT_DEVICE(context)]);
    pthread_mutex_unlock(&memory_lock);
    *total_bytes = (size_t)total;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemAlloc_v2(uform_cuDevicePtr *pointer, size_t bytes) {
    ENTER_CONTEXT();
    if (!pointer || bytes == 0) return UFORM_CUDA_ERROR_INVALID_VALUE; /* cuda.h: 0 bytes is INVALID_VALUE */
    unsigned long call = atomic_fetch_add(&alloc_calls, 1) + 1;
    if (config.alloc_fault && call == config.alloc_fault) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    size_t charged = (bytes + 255) & ~(size_t)255;
    if (charged < bytes) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    int device = CONTEXT_DEVICE(context);
    uint64_t total = config.devices[order[device]].memory_bytes;
    allocation_t *allocation = calloc(1, sizeof *allocation);
    if (!allocation) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&memory_lock);
    if (charged > total - device_used[device]) {
        pthread_mutex_unlock(&memory_lock);
        free(allocation);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    device_used[device] += charged;
    pthread_mutex_unlock(&memory_lock);
    allocation->base = aligned_alloc(256, charged); /* the driver aligns to at least 256 bytes */
    if (!allocation->base) {
        pthread_mutex_lock(&memory_lock);
        device_used[device] -= charged;
        pthread_mutex_unlock(&memory_lock);
        free(allocation);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    allocation->kind = ALLOCATION_DEVICE;
    allocation->bytes = bytes;
    allocation->charged = charged;
    allocation->device = device;
    pthread_mutex_lock(&memory_lock);
    allocation->next = allocations;
    allocations = allocation;
    pthread_mutex_unlock(&memory_lock);
    *pointer = (uform_cuDevicePtr)(uintptr_t)allocation->base;
    return UFORM_CUDA_SUCCESS;
}

/* Like the driver's, a free waits for the context's queued work first (no stream may still be
 * using the memory). An address that is no allocation's start is INVALID_VALUE. */
EXPORT uform_cuResult cuMemFree_v2(uform_cuDevicePtr pointer) {
    ENTER_CONTEXT();
    drain_context(context);
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = unlink_allocation((void *)(uintptr_t)pointer, ALLOCATION_DEVICE);
    if (found) device_used[found->device] -= found->charged;
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_INVALID_VALUE;
    free(found->base);
    free(found);
    return UFORM_CUDA_SUCCESS;
}

/* ---- Pinned host memory ---- */

/* Records pinned host memory; a registration overlapping pinned memory already known is
 * HOST_MEMORY_ALREADY_REGISTERED (checked and recorded under one lock). */
static uform_cuResult add_host_allocation(allocation_kind_t kind, void *base, size_t bytes, int device) {
    allocation_t *allocation = calloc(1, sizeof *allocation);
    if (!allocation) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    allocation->kind = kind;
    allocation->base = base;
    allocation->bytes = bytes;
    allocation->device = device;
    pthread_mutex_lock(&memory_lock);
    int overlaps = 0;
    for (allocation_t *a = allocations; a && kind == ALLOCATION_REGISTERED; a = a->next)
        overlaps |= a->kind != ALLOCATION_DEVICE && (char *)base < a->base + a->bytes && a->base < (char *)base + bytes;
    if (!overlaps) {
        allocation->next = allocations;
        allocations = allocation;
    }
    pthread_mutex_unlock(&memory_lock);
    if (overlaps) free(allocation);
    return overlaps ? UFORM_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemHostAlloc(void **pointer, size_t bytes, unsigned int flags) {
    ENTER_CONTEXT();
    if (!pointer || bytes == 0 ||
        (flags & ~(unsigned)(UFORM_CU_MEMHOSTALLOC_PORTABLE | UFORM_CU_MEMHOSTALLOC_DEVICEMAP |
                             UFORM_CU_MEMHOSTALLOC_WRITECOMBINED)))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    void *base = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095); /* page-locked memory is whole pages */
    if (!base) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    uform_cuResult result = add_host_allocation(ALLOCATION_HOST, base, bytes, CONTEXT_DEVICE(context));
    if (result != UFORM_CUDA_SUCCESS) {
        free(base);
        return result;
    }
    *pointer = base;
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemFreeHost(void *pointer) {
    ENTER_CONTEXT();
    drain_context(context);
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = unlink_allocation(pointer, ALLOCATION_HOST);
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_INVALID_VALUE;
    free(found->base);
    free(found);
    return UFORM_CUDA_SUCCESS;
}

EXPORT uform_cuResult cuMemHostRegister_v2(void *pointer, size_t bytes, unsigned int flags) {
    ENTER_CONTEXT();
    if (!pointer || bytes == 0 ||
        (flags & ~(unsigned)(UFORM_CU_MEMHOSTREGISTER_PORTABLE | UFORM_CU_MEMHOSTREGISTER_DEVICEMAP |
                             UFORM_CU_MEMHOSTREGISTER_IOMEMORY | UFORM_CU_MEMHOSTREGISTER_READ_ONLY)))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    return add_host_allocation(ALLOCATION_REGISTERED, pointer, bytes, CONTEXT_DEVICE(context));
}

EXPORT uform_cuResult cuMemHostUnregister(void *pointer) {
    ENTER_CONTEXT();
    if (!pointer) return UFORM_CUDA_ERROR_INVALID_VALUE;
    drain_context(context);
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = unlink_allocation(pointer, ALLOCATION_REGISTERED);
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    free(found); /* the memory is the caller's */
    return UFORM_CUDA_SUCCESS;
}

/* As cuda.h documents each attribute for each kind of memory:
 *   _MEMORY_TYPE       DEVICE for cuMemAlloc'd memory, HOST for cuMemHostAlloc'd or registered
 *                      host memory ("if ptr addresses host memory");
 *   _RANGE_START_ADDR  the start (CUdeviceptr-sized) and size (a size_t) of "the allocation
 *   _RANGE_SIZE        referenced by the device pointer": documented for device allocations
 *                      only, so host memory (allocated or registered) is INVALID_VALUE here, the
 *                      answer a driver may give and uform must live with.
 * An address the double did not allocate or register is INVALID_VALUE ("not allocated by, mapped
 * by, or registered with a CUcontext"); so is an attribute it does not emulate. Nothing is
 * written on failure. */
EXPORT uform_cuResult cuPointerGetAttribute(void *data, uform_cuPointerAttribute attribute, uform_cuDevicePtr pointer) {
    if (!atomic_load(&initialized)) return UFORM_CUDA_ERROR_NOT_INITIALIZED;
    if (!data || (attribute != UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE &&
                  attribute != UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR &&
                  attribute != UFORM_CU_POINTER_ATTRIBUTE_RANGE_SIZE))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&memory_lock);
    allocation_t *found = allocation_holding((void *)(uintptr_t)pointer, 1);
    unsigned type = !found ? 0 : found->kind == ALLOCATION_DEVICE ? UFORM_CU_MEMORYTYPE_DEVICE : UFORM_CU_MEMORYTYPE_HOST;
    uform_cuDevicePtr start = found ? (uform_cuDevicePtr)(uintptr_t)found->base : 0;
    size_t bytes = found ? found->bytes : 0;
    pthread_mutex_unlock(&memory_lock);
    if (!found) return UFORM_CUDA_ERROR_INVALID_VALUE;
    if (attribute != UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE && type != UFORM_CU_MEMORYTYPE_DEVICE)
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
    case UFORM_CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = type; break;
    case UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(uform_cuDevicePtr *)data = start; break;
    default: *(size_t *)data = bytes; break; /* RANGE_SIZE */
    }
    return UFORM_CUDA_SUCCESS;
}
