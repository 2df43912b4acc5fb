/* The CUDA backend's multicast operations (gpu_backend.h): the NVLink domain of a set of devices
 * and the multicast create-and-bind probe.
 *
 * The entry points (cuda_abi.h's UFORM_CUDA_MULTICAST_ENTRY_POINTS) are one table of optional
 * entries, bound once per process through the driver's resolver (uform__cuda_bind_once), so a
 * driver that lacks them still runs VRAM executors; the extent is then 1 and the probe says no,
 * naming the entry point. Callers (gpu_multicast.c) have checked that every device is CUDA's and
 * that this process opened them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/dynamic_library.h"
#include "core/error.h"
#include "core/memory.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/cuda/cuda_multicast.h"
#include "gpu/gpu_call.h"

typedef struct multicast_api_t {
#define MULTICAST_FIELD_(field, base, version, symbol, type) type field;
    UFORM_CUDA_MULTICAST_ENTRY_POINTS(MULTICAST_FIELD_)
#undef MULTICAST_FIELD_
} multicast_api_t;

/* Every entry optional: the extent needs only cuDeviceCanAccessPeer, the probe everything else.
 * The list puts cuDeviceCanAccessPeer last, so the table's message names the first entry the
 * probe lacks whenever it lacks one. */
#define MULTICAST_ENTRY_(field, base, version, symbol, type) \
    UFORM__LIBRARY_ENTRY(multicast_api_t, field, base, version, symbol, true)
static const uform__library_entry_t entries[] = {UFORM_CUDA_MULTICAST_ENTRY_POINTS(MULTICAST_ENTRY_)};
static multicast_api_t api;
static uform__library_table_t table;

/* The bound table, NULL when the driver is not there to bind it. */
static const multicast_api_t *multicast_api(void) {
    if (uform__cuda_bind_once(&table, entries, sizeof entries / sizeof entries[0], &api, sizeof api) != UFORM_STATUS_OK)
        return NULL;
    return &api;
}

/* True when the probe has every entry it calls. */
static bool probe_has_all(const multicast_api_t *mc) {
    return mc->cuMemCreate && mc->cuMemRelease && mc->cuMemGetAllocationGranularity && mc->cuMulticastGetGranularity &&
           mc->cuMulticastCreate && mc->cuMulticastAddDevice && mc->cuMulticastBindMem && mc->cuMulticastUnbind;
}

/* The caller's last error, kept across the driver work and put back on the way out. */
typedef struct saved_error_t {
    char message[512];
} saved_error_t;

static void save_error(saved_error_t *saved) {
    snprintf(saved->message, sizeof saved->message, "%s", uform_last_error());
}
static void restore_error(const saved_error_t *saved) { (void)uform__fail(UFORM_STATUS_OK, "%s", saved->message); }


size_t uform__cuda_multimem_extent(const uform__gpu_device_t *devices, size_t n) {
    if (n < 2) return 1;
    saved_error_t saved;
    save_error(&saved);
    size_t extent = 1;
    const uform__cuda_t *cuda = NULL;
    const multicast_api_t *mc = NULL;
    size_t *candidates = NULL; /* indices of the devices that support multicast */
    bool *mutual = NULL;       /* n x n over candidates: each can access the other */
    size_t *members = NULL;
    if (uform__cuda_get(&cuda) != UFORM_STATUS_OK || !cuda) goto done;
    mc = multicast_api();
    if (!mc || !mc->cuDeviceCanAccessPeer) goto done;
    candidates = uform__allocate_zeroed(n, sizeof *candidates);
    members = uform__allocate_zeroed(n, sizeof *members);
    mutual = uform__allocate_zeroed(n * n, sizeof *mutual);
    if (!candidates || !members || !mutual) goto done;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        int supported = 0;
        if (cuda->api.cuDeviceGetAttribute(&supported, UFORM_CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED,
                                           devices[i].native_device) == UFORM_CUDA_SUCCESS &&
            supported == 1)
            candidates[count++] = i;
    }
    for (size_t a = 0; a < count; a++)
        for (size_t b = a + 1; b < count; b++) {
            int forward = 0, backward = 0;
            uform_cuDevice x = devices[candidates[a]].native_device;
            uform_cuDevice y = devices[candidates[b]].native_device;
            bool both = mc->cuDeviceCanAccessPeer(&forward, x, y) == UFORM_CUDA_SUCCESS && forward == 1 &&
                        mc->cuDeviceCanAccessPeer(&backward, y, x) == UFORM_CUDA_SUCCESS && backward == 1;
            mutual[a * count + b] = mutual[b * count + a] = both;
        }
    /* The largest set of candidates that all reach each other. NVLink reach through a switch is
     * an equivalence (one group per switch fabric), where growing a set greedily from each
     * candidate finds every group whole; for anything stranger it is a lower bound. */
    for (size_t start = 0; start < count; start++) {
        size_t size = 0;
        members[size++] = start;
        for (size_t c = 0; c < count; c++) {
            if (c == start) continue;
            bool reaches_all = true;
            for (size_t m = 0; m < size && reaches_all; m++) reaches_all = mutual[c * count + members[m]];
            if (reaches_all) members[size++] = c;
        }
        if (size > extent) extent = size;
    }
    if (extent < 2) extent = 1;
done:
    uform__deallocate(candidates);
    uform__deallocate(members);
    uform__deallocate(mutual);
    restore_error(&saved);
    return extent;
}

/* One probe's state, so that every path releases what was taken. */
typedef struct probe_t {
    const uform__cuda_t *cuda;
    const multicast_api_t *mc;
    const uform__gpu_device_t *devices;
    size_t count;
    size_t granularity; /* the size of the object, of each device's memory and of each binding */
    bool have_multicast;
    uform_cuMemGenericAllocationHandle multicast;
    uform_cuMemGenericAllocationHandle *memory; /* per device; 0 none */
    bool *bound;                                /* per device */
    char *why;
    size_t capacity;
    bool failed;
} probe_t;

/* `value` rounded up to a multiple of `granularity` (a power of two; 0 leaves it). */
static size_t align_up(size_t value, size_t granularity) {
    if (!granularity) return value;
    return (value + granularity - 1) & ~(granularity - 1);
}

/* Notes a failing driver call (the first one explains); true when `result` is success. */
static bool step(probe_t *probe, uform_cuResult result, const char *call, const uform__gpu_device_t *device) {
    if (result == UFORM_CUDA_SUCCESS) return true;
    if (!probe->failed) {
        char buffer[32];
        const char *name = uform__cuda_error_name(&probe->cuda->api, result, buffer, sizeof buffer);
        if (device)
            uform__gpu_explain(probe->why, probe->capacity,
                               "%s on CUDA device %d (the executor's device %zu) answered %s", call,
                               (int)device->native_device, device->index, name);
        else
            uform__gpu_explain(probe->why, probe->capacity, "%s answered %s", call, name);
    }
    probe->failed = true;
    return false;
}

static void run_probe(probe_t *probe, const uform__cuda_execution_api_t *execution) {
    const multicast_api_t *mc = probe->mc;
    const uform__gpu_device_t *devices = probe->devices;
    const uform__gpu_device_t *first = &devices[0];
    if (!step(probe, execution->cuCtxSetCurrent((uform_cuContext)first->native_context), "cuCtxSetCurrent", first))
        return;
    /* Sized as NCCL's nvls.cc sizes its buffers: the multicast object's size is set before its
     * granularity is asked (the answer may depend on it), and the physical memory is aligned to
     * the allocation granularity of every device as well, so one size suits cuMulticastCreate,
     * cuMemCreate and cuMulticastBindMem alike. The probe wants the smallest such size. */
    size_t size = 0;
    for (size_t i = 0; i < probe->count; i++) {
        uform_cuMemAllocationProp memory = {
            .type = UFORM_CU_MEM_ALLOCATION_TYPE_PINNED,
            .requestedHandleTypes = UFORM_CU_MEM_HANDLE_TYPE_NONE,
            .location = {.type = UFORM_CU_MEM_LOCATION_TYPE_DEVICE, .id = devices[i].native_device}};
        size_t granularity = 0;
        if (!step(probe,
                  mc->cuMemGetAllocationGranularity(&granularity, &memory, UFORM_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
                  "cuMemGetAllocationGranularity", &devices[i]))
            return;
        if (granularity > size) size = granularity;
    }
    uform_cuMulticastObjectProp prop = {
        .numDevices = (unsigned)probe->count, .size = size, .handleTypes = UFORM_CU_MEM_HANDLE_TYPE_NONE};
    size_t multicast_granularity = 0;
    if (!step(probe,
              mc->cuMulticastGetGranularity(&multicast_granularity, &prop, UFORM_CU_MULTICAST_GRANULARITY_MINIMUM),
              "cuMulticastGetGranularity", NULL))
        return;
    /* Granularities are powers of two: a multiple of the largest is a multiple of every one. */
    size = align_up(size, multicast_granularity);
    probe->granularity = size;
    prop.size = size;
    if (!step(probe, mc->cuMulticastCreate(&probe->multicast, &prop), "cuMulticastCreate", NULL)) return;
    probe->have_multicast = true;
    /* Every device joins before any binds: a bind waits for the whole team. */
    for (size_t i = 0; i < probe->count; i++)
        if (!step(probe, mc->cuMulticastAddDevice(probe->multicast, devices[i].native_device), "cuMulticastAddDevice",
                  &devices[i]))
            return;
    for (size_t i = 0; i < probe->count; i++) {
        const uform__gpu_device_t *device = &devices[i];
        if (!step(probe, execution->cuCtxSetCurrent((uform_cuContext)device->native_context), "cuCtxSetCurrent",
                  device))
            return;
        uform_cuMemAllocationProp memory = {
            .type = UFORM_CU_MEM_ALLOCATION_TYPE_PINNED,
            .requestedHandleTypes = UFORM_CU_MEM_HANDLE_TYPE_NONE,
            .location = {.type = UFORM_CU_MEM_LOCATION_TYPE_DEVICE, .id = device->native_device}};
        if (!step(probe, mc->cuMemCreate(&probe->memory[i], probe->granularity, &memory, 0), "cuMemCreate", device)) {
            probe->memory[i] = 0;
            return;
        }
        if (!step(probe, mc->cuMulticastBindMem(probe->multicast, 0, probe->memory[i], 0, probe->granularity, 0),
                  "cuMulticastBindMem", device))
            return;
        probe->bound[i] = true;
    }
}

/* Unbinds, then releases the memory, then the multicast object: every path, every device, even
 * after a failure (a failing release is still reported when nothing failed before). Releasing
 * the object drops any binding an unbind could not. */
static void release_probe(probe_t *probe) {
    const multicast_api_t *mc = probe->mc;
    const uform__gpu_device_t *devices = probe->devices;
    for (size_t i = 0; i < probe->count; i++)
        if (probe->bound[i])
            step(probe, mc->cuMulticastUnbind(probe->multicast, devices[i].native_device, 0, probe->granularity),
                 "cuMulticastUnbind", &devices[i]);
    for (size_t i = 0; i < probe->count; i++)
        if (probe->memory[i]) step(probe, mc->cuMemRelease(probe->memory[i]), "cuMemRelease", &devices[i]);
    if (probe->have_multicast)
        step(probe, mc->cuMemRelease(probe->multicast), "cuMemRelease of the multicast object", NULL);
}

bool uform__cuda_multicast_probe(const uform__gpu_device_t *devices, size_t count, char *why, size_t capacity) {
    saved_error_t saved;
    save_error(&saved);
    probe_t probe = {.devices = devices, .count = count, .why = why, .capacity = capacity};
    const uform__cuda_execution_api_t *execution = NULL;
    uform_cuContext previous = NULL;
    bool answer = false;
    if (uform__cuda_get(&probe.cuda) != UFORM_STATUS_OK || !probe.cuda ||
        uform__cuda_execution(&execution) != UFORM_STATUS_OK) {
        uform__gpu_explain(why, capacity, "no CUDA driver: %s", uform_last_error());
        goto done;
    }
    probe.mc = multicast_api();
    if (!probe.mc || !probe_has_all(probe.mc)) {
        uform__gpu_explain(why, capacity, "%s", probe.mc ? table.message : uform_last_error());
        goto done;
    }
    probe.memory = uform__allocate_zeroed(count, sizeof *probe.memory);
    probe.bound = uform__allocate_zeroed(count, sizeof *probe.bound);
    if (!probe.memory || !probe.bound) {
        uform__gpu_explain(why, capacity, "no memory for the probe of %zu devices", count);
        goto done;
    }
    /* The calling thread's context is put back: the probe borrows the thread. */
    if (!step(&probe, execution->cuCtxGetCurrent(&previous), "cuCtxGetCurrent", NULL)) goto done;
    run_probe(&probe, execution);
    release_probe(&probe);
    step(&probe, execution->cuCtxSetCurrent(previous), "cuCtxSetCurrent (restoring the caller's context)", NULL);
    answer = !probe.failed;
done:
    uform__deallocate(probe.memory);
    uform__deallocate(probe.bound);
    restore_error(&saved);
    return answer;
}
