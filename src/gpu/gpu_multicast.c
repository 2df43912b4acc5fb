/* Multicast over a VRAM executor's devices (gpu_multicast.h): the checks every backend would
 * repeat, then the backend's own operation. */
#include "gpu/gpu_multicast.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"
#include "gpu/gpu_call.h"
#include "gpu/vram_internal.h"
#include "platform/platform.h"


/* The executor's devices when they are all one backend's, that backend multicasts, and this is
 * the process that opened them; NULL otherwise, with the reason. */
static const uform__vram_t *multicast_devices(uform_executor_t *executor, char *why, size_t capacity) {
    if (!executor || !uform__vram_of(executor)) {
        uform__gpu_explain(why, capacity, "not a VRAM executor: no GPU to multicast to");
        return NULL;
    }
    if (uform__forked_since(executor->fork_generation)) {
        uform__gpu_explain(why, capacity, "in a fork()ed child, which must not call its parent's GPU driver");
        return NULL;
    }
    const uform__vram_t *vram = uform__vram_of(executor);
    if (vram->device_count == 0) {
        uform__gpu_explain(why, capacity, "the executor has no device");
        return NULL;
    }
    const uform__gpu_backend_t *backend = vram->devices[0].backend;
    for (size_t i = 0; i < vram->device_count; i++)
        if (vram->devices[i].backend != backend || !backend->multicast_probe) {
            uform__gpu_explain(why, capacity, "device %zu of the executor is not a CUDA device: multicast is CUDA's",
                               i);
            return NULL;
        }
    return vram;
}

size_t uform__gpu_multimem_extent(uform_executor_t *executor) {
    const uform__vram_t *vram = multicast_devices(executor, NULL, 0);
    if (!vram) return 1;
    return vram->devices[0].backend->multimem_extent(vram->devices, vram->device_count);
}

bool uform__gpu_multicast_probe(uform_executor_t *executor, char *why, size_t capacity) {
    uform__gpu_explain(why, capacity, "%s", "");
    const uform__vram_t *vram = multicast_devices(executor, why, capacity);
    if (!vram) return false;
    return vram->devices[0].backend->multicast_probe(vram->devices, vram->device_count, why, capacity);
}
