/* This process's NVLink domain and the multicast create-and-bind probe (mesh_internal.h).
 *
 * CUDA only. The entry points (cuda_abi.h's UFORM_CUDA_MULTICAST_ENTRY_POINTS) are optional:
 * each is resolved on its own through uform__cuda_resolve, once per process, so a driver that
 * lacks them still runs VRAM executors; the extent is then 1 and the probe says no, naming the
 * entry point. Neither function is a status: both leave uform_last_error() as they found it.
 * In a fork()ed child neither calls the driver (it belongs to the parent): extent 1, probe no. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "executor/executor_internal.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/vram_internal.h"
#include "mesh/mesh_internal.h"
#include "platform/platform.h"

typedef struct multicast_api_t {
#define MULTICAST_FIELD_(field, base, version, symbol, type) type field;
    UFORM_CUDA_MULTICAST_ENTRY_POINTS(MULTICAST_FIELD_)
#undef MULTICAST_FIELD_
} multicast_api_t;

/* Resolved once per process, under `lock`: each pointer NULL where the driver lacks it, and
 * `missing` the message of the first one the probe needs that is missing ("" when none is; the
 * extent needs only cuDeviceCanAccessPeer, the probe everything else). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool resolved;
static multicast_api_t api;
static char missing[400];

static const multicast_api_t *multicast_api(void) {
    pthread_mutex_lock(&lock);
    if (!resolved) {
#define MULTICAST_RESOLVE_(field, base, version, symbol, type)                                    \
        {                                                                                          \
            void *pointer_ = NULL;                                                                 \
            if (uform__cuda_resolve(base, version, symbol, &pointer_) == UFORM_STATUS_OK)          \
                api.field = (type)pointer_;                                                        \
            else if (!missing[0] && strcmp(base, "cuDeviceCanAccessPeer") != 0)                    \
                snprintf(missing, sizeof missing, "%s", uform_last_error());                       \
        }
        UFORM_CUDA_MULTICAST_ENTRY_POINTS(MULTICAST_RESOLVE_)
#undef MULTICAST_RESOLVE_
        resolved = true;
    }
    pthread_mutex_unlock(&lock);
    return &api;
}

/* The caller's last error, kept across the driver work and put back on the way out. */
typedef struct saved_error_t {
    char message[512];
} saved_error_t;

static void save_error(saved_error_t *saved) { snprintf(saved->message, sizeof saved->message, "%s", uform_last_error()); }
static void restore_error(const saved_error_t *saved) { (void)uform__fail(UFORM_STATUS_OK, "%s", saved->message); }

UFORM_PRINTF_(3, 4) static void explain(char *why, size_t capacity, const char *format, ...) {
    if (!why || !capacity) return;
    va_list args;
    va_start(args, format);
    vsnprintf(why, capacity, format, args);
    va_end(args);
}

/* The executor's devices when every one is CUDA's and the process is the one that opened them;
 * NULL otherwise, with the reason. */
static const uform__vram_t *cuda_devices(uform_executor_t *executor, char *why, size_t capacity) {
    if (!executor || !uform__vram_of(executor)) {
        explain(why, capacity, "not a VRAM executor: no GPU to multicast to");
        return NULL;
    }
    if (uform__forked_since(executor->fork_generation)) {
        explain(why, capacity, "in a fork()ed child, which must not call its parent's CUDA driver");
        return NULL;
    }
    const uform__vram_t *vram = uform__vram_of(executor);
    for (size_t i = 0; i < vram->device_count; i++)
        if (vram->devices[i].vendor != UFORM_GPU_VENDOR_NVIDIA) {
            explain(why, capacity, "device %zu of the executor is not a CUDA device: multicast is CUDA's", i);
            return NULL;
        }
    return vram;
}

size_t uform__mesh_multimem_extent(uform_executor_t *executor) {
    const uform__vram_t *vram = cuda_devices(executor, NULL, 0);
    if (!vram || vram->device_count < 2) return 1;
    saved_error_t saved;
    save_error(&saved);
    size_t extent = 1;
    const uform__cuda_t *cuda = NULL;
    const multicast_api_t *mc = NULL;
    size_t n = vram->device_count;
    size_t *candidates = NULL; /* indices of the devices that support multicast */
    bool *mutual = NULL;       /* n x n over candidates: each can access the other */
    size_t *members = NULL;
    if (uform__cuda_get(&cuda) != UFORM_STATUS_OK || !cuda) goto done;
    mc = multicast_api();
    if (!mc->cuDeviceCanAccessPeer) goto done;
    candidates = uform__allocate_zeroed(n, sizeof *candidates);
    members = uform__allocate_zeroed(n, sizeof *members);
    mutual = uform__allocate_zeroed(n * n, sizeof *mutual);
    if (!candidates || !members || !mutual) goto done;
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        int supported = 0;
        if (cuda->api.cuDeviceGetAttribute(&supported, UFORM_CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED,
                                           vram->devices[i].native_device) == UFORM_CUDA_SUCCESS &&
            supported == 1)
            candidates[count++] = i;
    }
    for (size_t a = 0; a < count; a++)
        for (size_t b = a + 1; b < count; b++) {
            int forward = 0, backward = 0;
            uform_cuDevice x = vram->devices[candidates[a]].native_device;
            uform_cuDevice y = vram->devices[candidates[b]].native_device;
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
    const uform__vram_t *vram;
    size_t granularity;
    bool have_multicast;
    uform_cuMemGenericAllocationHandle multicast;
    uform_cuMemGenericAllocationHandle *memory; /* per device; 0 none */
    bool *bound;                                /* per device */
    char *why;
    size_t capacity;
    bool failed;
} probe_t;

/* Notes a failing driver call (the first one explains); true when `result` is success. */
static bool step(probe_t *probe, uform_cuResult result, const char *call, const uform__gpu_device_t *device) {
    if (result == UFORM_CUDA_SUCCESS) return true;
    if (!probe->failed) {
        char buffer[32];
        const char *name = uform__cuda_error_name(&probe->cuda->api, result, buffer, sizeof buffer);
        if (device)
            explain(probe->why, probe->capacity, "%s on CUDA device %d (the executor's device %zu) answered %s", call,
                    (int)device->native_device, device->index, name);
        else
            explain(probe->why, probe->capacity, "%s answered %s", call, name);
    }
    probe->failed = true;
    return false;
}

static void run_probe(probe_t *probe, const uform__cuda_execution_api_t *execution) {
    const multicast_api_t *mc = probe->mc;
    const uform__vram_t *vram = probe->vram;
    const uform__gpu_device_t *first = &vram->devices[0];
    if (!step(probe, execution->cuCtxSetCurrent((uform_cuContext)first->native_context), "cuCtxSetCurrent", first))
        return;
    uform_cuMulticastObjectProp prop = {.numDevices = (unsigned)vram->device_count,
                                        .handleTypes = UFORM_CU_MEM_HANDLE_TYPE_NONE};
    if (!step(probe, mc->cuMulticastGetGranularity(&probe->granularity, &prop, UFORM_CU_MULTICAST_GRANULARITY_MINIMUM),
              "cuMulticastGetGranularity", NULL))
        return;
    prop.size = probe->granularity;
    if (!step(probe, mc->cuMulticastCreate(&probe->multicast, &prop), "cuMulticastCreate", NULL)) return;
    probe->have_multicast = true;
    /* Every device joins before any binds: a bind waits for the whole team. */
    for (size_t i = 0; i < vram->device_count; i++)
        if (!step(probe, mc->cuMulticastAddDevice(probe->multicast, vram->devices[i].native_device),
                  "cuMulticastAddDevice", &vram->devices[i]))
            return;
    for (size_t i = 0; i < vram->device_count; i++) {
        const uform__gpu_device_t *device = &vram->devices[i];
        if (!step(probe, execution->cuCtxSetCurrent((uform_cuContext)device->native_context), "cuCtxSetCurrent",
                  device))
            return;
        uform_cuMemAllocationProp memory = {.type = UFORM_CU_MEM_ALLOCATION_TYPE_PINNED,
                                            .requestedHandleTypes = UFORM_CU_MEM_HANDLE_TYPE_NONE,
                                            .location = {.type = UFORM_CU_MEM_LOCATION_TYPE_DEVICE,
                                                         .id = device->native_device}};
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
    const uform__vram_t *vram = probe->vram;
    for (size_t i = 0; i < vram->device_count; i++)
        if (probe->bound[i])
            step(probe, mc->cuMulticastUnbind(probe->multicast, vram->devices[i].native_device, 0, probe->granularity),
                 "cuMulticastUnbind", &vram->devices[i]);
    for (size_t i = 0; i < vram->device_count; i++)
        if (probe->memory[i]) step(probe, mc->cuMemRelease(probe->memory[i]), "cuMemRelease", &vram->devices[i]);
    if (probe->have_multicast) step(probe, mc->cuMemRelease(probe->multicast), "cuMemRelease of the multicast object", NULL);
}

bool uform__mesh_multicast_probe(uform_executor_t *executor, char *why, size_t capacity) {
    explain(why, capacity, "%s", "");
    const uform__vram_t *vram = cuda_devices(executor, why, capacity);
    if (!vram) return false;
    if (vram->device_count == 0) {
        explain(why, capacity, "the executor has no device");
        return false;
    }
    saved_error_t saved;
    save_error(&saved);
    probe_t probe = {.vram = vram, .why = why, .capacity = capacity};
    const uform__cuda_execution_api_t *execution = NULL;
    uform_cuContext previous = NULL;
    bool answer = false;
    if (uform__cuda_get(&probe.cuda) != UFORM_STATUS_OK || !probe.cuda ||
        uform__cuda_execution(&execution) != UFORM_STATUS_OK) {
        explain(why, capacity, "no CUDA driver: %s", uform_last_error());
        goto done;
    }
    probe.mc = multicast_api();
    if (missing[0]) {
        explain(why, capacity, "%s", missing);
        goto done;
    }
    probe.memory = uform__allocate_zeroed(vram->device_count, sizeof *probe.memory);
    probe.bound = uform__allocate_zeroed(vram->device_count, sizeof *probe.bound);
    if (!probe.memory || !probe.bound) {
        explain(why, capacity, "no memory for the probe of %zu devices", vram->device_count);
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
