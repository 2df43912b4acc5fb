/* The CUDA driver test double's peers and multicast (README.md, "Peers and multicast"): peers by
 * `nvlink=` group, multicast objects and their teams, cuMemCreate's physical memory, binding and
 * unbinding, and the `fault multicast=` steps. */
#include <pthread.h>
#include <stdlib.h>

#include "emulated_entry_points.h"
#include "emulated_state.h"

/* cuda.h: 1 when contexts on `handle` can access memory of contexts on `peer`. The double's peers
 * are the devices of one `nvlink=` group; a device is no peer of itself (the driver answers 0). */
EXPORT uform_cuResult cuDeviceCanAccessPeer(int *can_access, uform_cuDevice handle, uform_cuDevice peer) {
    OPEN_QUERY(handle, can_access != NULL);
    const emulated_device_t *other = device_of(peer);
    if (!other) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    *can_access = handle != peer && device->nvlink_group >= 0 && device->nvlink_group == other->nvlink_group;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: the attribute `attribute` of the link from `source` to `destination`. The double's
 * links are its `nvlink=` groups: within one, access, native atomics and CUDA array access are
 * supported and every link ranks 0 (alike); across groups or without one, all four are 0. The
 * same device twice is CUDA_ERROR_INVALID_DEVICE, as the driver documents; an unknown attribute
 * or a NULL value is CUDA_ERROR_INVALID_VALUE. */
EXPORT uform_cuResult cuDeviceGetP2PAttribute(int *value, uform_cuDeviceP2PAttribute attribute, uform_cuDevice source,
                                              uform_cuDevice destination) {
    OPEN_QUERY(source, value != NULL);
    const emulated_device_t *other = device_of(destination);
    if (!other || source == destination) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    if (attribute < UFORM_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ||
        attribute > UFORM_CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED)
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    int linked = device->nvlink_group >= 0 && device->nvlink_group == other->nvlink_group;
    *value = attribute == UFORM_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ? 0 : linked;
    return UFORM_CUDA_SUCCESS;
}

/* The granularities the double answers: 2 MiB minimum, for multicast objects and cuMemCreate
 * alike (the large-page size drivers report on current GPUs), and a recommended multicast
 * granularity well above it (512 MiB, the double's choice) so a caller mixing the two shows. */
#define MULTICAST_MINIMUM_GRANULARITY (2ull << 20)
#define MULTICAST_RECOMMENDED_GRANULARITY (512ull << 20)
/* The exportable handle types the double accepts on Linux (the Win32 ones are refused). */
#define LINUX_HANDLE_TYPES (UFORM_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | UFORM_CU_MEM_HANDLE_TYPE_FABRIC)

/* One binding of a multicast object: a device's physical memory at an offset of the object. */
typedef struct binding_t {
    struct binding_t *next;
    struct vmm_object_t *memory; /* holds a reference of the binding's */
    int device;
    size_t multicast_offset, bytes;
} binding_t;

/* A CUmemGenericAllocationHandle: physical memory of cuMemCreate, or a multicast object. One
 * handle space for both, as the driver's cuMemRelease takes either. */
typedef struct vmm_object_t {
    struct vmm_object_t *next;
    uform_cuMemGenericAllocationHandle handle;
    int multicast;
    int released; /* cuMemRelease'd: the handle is no longer valid */
    /* physical memory */
    int device;
    size_t bytes;
    int bindings; /* multicast bindings holding it: it is freed when released and unbound */
    /* multicast object */
    unsigned team_size;
    size_t size;
    int members[EMULATED_MAX_DEVICES];
    unsigned member_count;
    binding_t *bound;
    int waiters; /* binds blocked until the team is complete */
} vmm_object_t;

static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t team_changed = PTHREAD_COND_INITIALIZER; /* a device added, an object released */
static vmm_object_t *vmm_objects;                               /* under vmm_lock */
static uform_cuMemGenericAllocationHandle next_vmm_handle = 0x1000; /* under vmm_lock */

/* The error `fault multicast=<step>` injects for a call concerning `device` (-1: none), or 0. */
static uform_cuResult multicast_fault(multicast_step_t step, int device) {
    for (size_t i = 0; i < config.multicast_fault_count; i++) {
        const emulated_multicast_fault_t *fault = &config.multicast_faults[i];
        if (fault->step == step && (fault->device < 0 || fault->device == device)) return fault->result;
    }
    return UFORM_CUDA_SUCCESS;
}

/* Whether multicast objects can be made from this thread: the device of its current context
 * supports multicast; without a current context, some device does. */
static int multicast_available(void) {
    emulated_context_t *context = current;
    if (context) return device_of(CONTEXT_DEVICE(context))->multicast;
    for (size_t i = 0; i < config.device_count; i++)
        if (config.devices[i].multicast) return 1;
    return 0;
}

/* The live (not released) object behind a handle, of the kind asked for, or NULL. Under vmm_lock. */
static vmm_object_t *vmm_object(uform_cuMemGenericAllocationHandle handle, int multicast) {
    for (vmm_object_t *o = vmm_objects; o; o = o->next)
        if (o->handle == handle && !o->released) return o->multicast == multicast ? o : NULL;
    return NULL;
}

/* Frees an object nothing refers to any more: released, and (memory) bound nowhere or
 * (multicast) waited on by no bind. Under vmm_lock. */
static void vmm_collect(vmm_object_t *object) {
    if (!object->released || (object->multicast ? object->waiters : object->bindings)) return;
    for (vmm_object_t **link = &vmm_objects; *link; link = &(*link)->next)
        if (*link == object) {
            *link = object->next;
            break;
        }
    if (!object->multicast) {
        pthread_mutex_lock(&memory_lock);
        device_used[object->device] -= object->bytes;
        pthread_mutex_unlock(&memory_lock);
    }
    free(object);
}

static vmm_object_t *vmm_add(vmm_object_t *object) {
    pthread_mutex_lock(&vmm_lock);
    object->handle = next_vmm_handle++;
    object->next = vmm_objects;
    vmm_objects = object;
    pthread_mutex_unlock(&vmm_lock);
    return object;
}

static int aligned_to(size_t value, size_t granularity) { return value % granularity == 0; }

/* cuda.h: the prop's flags must be 0; the double takes handle types NONE, POSIX fd and fabric. */
static int multicast_prop_valid(const uform_cuMulticastObjectProp *prop) {
    return prop->flags == 0 && !(prop->handleTypes & ~(unsigned long long)LINUX_HANDLE_TYPES);
}

EXPORT uform_cuResult cuMulticastGetGranularity(size_t *granularity, const uform_cuMulticastObjectProp *prop,
                                                uform_cuMulticastGranularityFlags option) {
    REQUIRE_INITIALIZED();
    if (!granularity || !prop || option > UFORM_CU_MULTICAST_GRANULARITY_RECOMMENDED || !multicast_prop_valid(prop))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    uform_cuResult fault = multicast_fault(MULTICAST_STEP_GRANULARITY, -1);
    if (fault) return fault;
    if (!multicast_available()) return UFORM_CUDA_ERROR_NOT_SUPPORTED;
    *granularity = option == UFORM_CU_MULTICAST_GRANULARITY_MINIMUM ? MULTICAST_MINIMUM_GRANULARITY
                                                                    : MULTICAST_RECOMMENDED_GRANULARITY;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: a team of prop->numDevices devices, each binding up to prop->size bytes (a multiple
 * of the minimum granularity). No context needed; NOT_SUPPORTED where multicast is not. */
EXPORT uform_cuResult cuMulticastCreate(uform_cuMemGenericAllocationHandle *handle,
                                        const uform_cuMulticastObjectProp *prop) {
    REQUIRE_INITIALIZED();
    if (!handle || !prop || prop->numDevices == 0 || prop->size == 0 ||
        !aligned_to(prop->size, MULTICAST_MINIMUM_GRANULARITY) || !multicast_prop_valid(prop))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    uform_cuResult fault = multicast_fault(MULTICAST_STEP_CREATE, -1);
    if (fault) return fault;
    if (!multicast_available()) return UFORM_CUDA_ERROR_NOT_SUPPORTED;
    vmm_object_t *object = calloc(1, sizeof *object);
    if (!object) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    object->multicast = 1;
    object->team_size = prop->numDevices;
    object->size = prop->size;
    *handle = vmm_add(object)->handle;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: the device joins the team for the object's lifetime; a device outside the clique of
 * those added before is INVALID_DEVICE (the double's clique: one `nvlink=` group). A device
 * without multicast is NOT_SUPPORTED; one added twice, or past numDevices, INVALID_VALUE. */
EXPORT uform_cuResult cuMulticastAddDevice(uform_cuMemGenericAllocationHandle handle, uform_cuDevice device) {
    REQUIRE_INITIALIZED();
    const emulated_device_t *added = device_of(device);
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 1);
    uform_cuResult result = UFORM_CUDA_SUCCESS;
    if (!object) result = UFORM_CUDA_ERROR_INVALID_VALUE;
    else if (!added) result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    for (unsigned i = 0; result == UFORM_CUDA_SUCCESS && i < object->member_count; i++)
        if (object->members[i] == device) result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS && object->member_count == object->team_size) result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS) result = multicast_fault(MULTICAST_STEP_ADD, device);
    if (result == UFORM_CUDA_SUCCESS && !added->multicast) result = UFORM_CUDA_ERROR_NOT_SUPPORTED;
    if (result == UFORM_CUDA_SUCCESS && object->member_count) {
        const emulated_device_t *first = device_of(object->members[0]);
        if (added->nvlink_group < 0 || added->nvlink_group != first->nvlink_group)
            result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    }
    if (result == UFORM_CUDA_SUCCESS) {
        object->members[object->member_count++] = device;
        pthread_cond_broadcast(&team_changed);
    }
    pthread_mutex_unlock(&vmm_lock);
    return result;
}

/* The allocation properties the double emulates: pinned memory on a device, Linux handle types. */
static int allocation_prop_valid(const uform_cuMemAllocationProp *prop) {
    return prop->type == UFORM_CU_MEM_ALLOCATION_TYPE_PINNED && prop->location.type == UFORM_CU_MEM_LOCATION_TYPE_DEVICE &&
           !(prop->requestedHandleTypes & ~(unsigned)LINUX_HANDLE_TYPES);
}

/* cuda.h: "the minimal or recommended granularity for a given allocation specification", the
 * multiple cuMemCreate's size must be: the device's `granularity=` for both options. No context
 * needed. */
EXPORT uform_cuResult cuMemGetAllocationGranularity(size_t *granularity, const uform_cuMemAllocationProp *prop,
                                                    uform_cuMemAllocationGranularityFlags option) {
    REQUIRE_INITIALIZED();
    if (!granularity || !prop || option > UFORM_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED || !allocation_prop_valid(prop))
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    const emulated_device_t *device = device_of(prop->location.id);
    if (!device) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    *granularity = (size_t)device->allocation_granularity;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: physical memory on a device (the double emulates CU_MEM_LOCATION_TYPE_DEVICE with
 * CU_MEM_ALLOCATION_TYPE_PINNED only), a multiple of the device's allocation granularity, charged
 * against the device's memory like cuMemAlloc (cuMemGetInfo sees it) until cuMemRelease.
 * No context needed. The double does not map it: there is no cuMemMap. */
EXPORT uform_cuResult cuMemCreate(uform_cuMemGenericAllocationHandle *handle, size_t bytes,
                                  const uform_cuMemAllocationProp *prop, unsigned long long flags) {
    REQUIRE_INITIALIZED();
    if (!handle || !prop || bytes == 0 || flags || !allocation_prop_valid(prop)) return UFORM_CUDA_ERROR_INVALID_VALUE;
    const emulated_device_t *device = device_of(prop->location.id);
    if (!device) return UFORM_CUDA_ERROR_INVALID_DEVICE;
    if (!aligned_to(bytes, device->allocation_granularity)) return UFORM_CUDA_ERROR_INVALID_VALUE;
    uform_cuResult fault = multicast_fault(MULTICAST_STEP_MEMCREATE, prop->location.id);
    if (fault) return fault;
    vmm_object_t *object = calloc(1, sizeof *object);
    if (!object) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&memory_lock);
    int fits = bytes <= device->memory_bytes - device_used[prop->location.id];
    if (fits) device_used[prop->location.id] += bytes;
    pthread_mutex_unlock(&memory_lock);
    if (!fits) {
        free(object);
        return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    }
    object->device = prop->location.id;
    object->bytes = bytes;
    *handle = vmm_add(object)->handle;
    return UFORM_CUDA_SUCCESS;
}

/* cuda.h: releases either kind of handle. Physical memory is freed once no multicast binding
 * holds it any more; releasing a multicast object drops its bindings (and wakes binds blocked
 * on it: they answer INVALID_VALUE). A handle that is no live object: INVALID_VALUE (cuda.h
 * calls that undefined). */
EXPORT uform_cuResult cuMemRelease(uform_cuMemGenericAllocationHandle handle) {
    REQUIRE_INITIALIZED();
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 0);
    if (!object) object = vmm_object(handle, 1);
    if (!object) {
        pthread_mutex_unlock(&vmm_lock);
        return UFORM_CUDA_ERROR_INVALID_VALUE;
    }
    object->released = 1;
    if (object->multicast) {
        while (object->bound) {
            binding_t *binding = object->bound;
            object->bound = binding->next;
            binding->memory->bindings--;
            vmm_collect(binding->memory);
            free(binding);
        }
        pthread_cond_broadcast(&team_changed);
    }
    vmm_collect(object);
    pthread_mutex_unlock(&vmm_lock);
    return UFORM_CUDA_SUCCESS;
}

/* Whether `device` is in the object's team. Under vmm_lock. */
static int team_member(const vmm_object_t *object, int device) {
    for (unsigned i = 0; i < object->member_count; i++)
        if (object->members[i] == device) return 1;
    return 0;
}

/* cuda.h: binds [memory_offset, + bytes) of physical memory to [multicast_offset, + bytes) of the
 * object, for the memory's device; offsets and size multiples of the minimum granularity and
 * inside both; flags 0. As the driver, it blocks until every device of the team was added. The
 * memory's device must be in the team (INVALID_DEVICE); a range overlapping that device's
 * earlier binding is INVALID_VALUE. */
EXPORT uform_cuResult cuMulticastBindMem(uform_cuMemGenericAllocationHandle handle, size_t multicast_offset,
                                         uform_cuMemGenericAllocationHandle memory_handle, size_t memory_offset,
                                         size_t bytes, unsigned long long flags) {
    REQUIRE_INITIALIZED();
    binding_t *binding = calloc(1, sizeof *binding);
    if (!binding) return UFORM_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 1);
    vmm_object_t *memory = vmm_object(memory_handle, 0);
    uform_cuResult result = UFORM_CUDA_SUCCESS;
    if (!object || !memory || flags || bytes == 0 || !aligned_to(multicast_offset, MULTICAST_MINIMUM_GRANULARITY) ||
        !aligned_to(memory_offset, MULTICAST_MINIMUM_GRANULARITY) || !aligned_to(bytes, MULTICAST_MINIMUM_GRANULARITY) ||
        memory_offset > memory->bytes || bytes > memory->bytes - memory_offset || multicast_offset > object->size ||
        bytes > object->size - multicast_offset)
        result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS) {
        /* Both objects stay allocated while this waits (another thread may release them). */
        object->waiters++;
        memory->bindings++;
        while (!object->released && object->member_count < object->team_size)
            pthread_cond_wait(&team_changed, &vmm_lock);
        object->waiters--;
        memory->bindings--;
        if (object->released || memory->released) {
            vmm_collect(object);
            vmm_collect(memory);
            result = UFORM_CUDA_ERROR_INVALID_VALUE;
        }
    }
    if (result == UFORM_CUDA_SUCCESS && !team_member(object, memory->device)) result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    for (binding_t *b = result == UFORM_CUDA_SUCCESS ? object->bound : NULL; b; b = b->next)
        if (b->device == memory->device && multicast_offset < b->multicast_offset + b->bytes &&
            b->multicast_offset < multicast_offset + bytes)
            result = UFORM_CUDA_ERROR_INVALID_VALUE;
    if (result == UFORM_CUDA_SUCCESS) result = multicast_fault(MULTICAST_STEP_BIND, memory->device);
    if (result == UFORM_CUDA_SUCCESS) {
        binding->memory = memory;
        binding->device = memory->device;
        binding->multicast_offset = multicast_offset;
        binding->bytes = bytes;
        binding->next = object->bound;
        object->bound = binding;
        memory->bindings++;
        binding = NULL;
    }
    pthread_mutex_unlock(&vmm_lock);
    free(binding);
    return result;
}

/* cuda.h: unbinds what `device` bound at [multicast_offset, + bytes), which "must match the
 * corresponding values specified during the bind call"; the double answers INVALID_VALUE
 * where no binding of that device matches (cuda.h: undefined). A device outside the team:
 * INVALID_DEVICE. */
EXPORT uform_cuResult cuMulticastUnbind(uform_cuMemGenericAllocationHandle handle, uform_cuDevice device,
                                        size_t multicast_offset, size_t bytes) {
    REQUIRE_INITIALIZED();
    pthread_mutex_lock(&vmm_lock);
    vmm_object_t *object = vmm_object(handle, 1);
    uform_cuResult result = UFORM_CUDA_SUCCESS;
    if (!object || bytes == 0 || !aligned_to(multicast_offset, MULTICAST_MINIMUM_GRANULARITY) ||
        !aligned_to(bytes, MULTICAST_MINIMUM_GRANULARITY) || multicast_offset > object->size ||
        bytes > object->size - multicast_offset)
        result = UFORM_CUDA_ERROR_INVALID_VALUE;
    else if (!device_of(device) || !team_member(object, device))
        result = UFORM_CUDA_ERROR_INVALID_DEVICE;
    if (result == UFORM_CUDA_SUCCESS) result = multicast_fault(MULTICAST_STEP_UNBIND, device);
    if (result == UFORM_CUDA_SUCCESS) {
        binding_t **link = &object->bound;
        while (*link && !((*link)->device == device && (*link)->multicast_offset == multicast_offset &&
                          (*link)->bytes == bytes))
            link = &(*link)->next;
        binding_t *found = *link;
        if (!found) {
            result = UFORM_CUDA_ERROR_INVALID_VALUE;
        } else {
            *link = found->next;
            found->memory->bindings--;
            vmm_collect(found->memory);
            free(found);
        }
    }
    pthread_mutex_unlock(&vmm_lock);
    return result;
}
