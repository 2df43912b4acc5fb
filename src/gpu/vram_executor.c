/* VRAM executors. Arguments are validated exactly as they will be once the executor lands;
 * uform_gpu_devices() lists the CUDA devices the driver sees, and a valid request for them
 * ends in UNSUPPORTED (the executor is later work), never in a pretend executor. Without a
 * GPU every valid request is NOT_FOUND ("no GPU"). */
#include "core/error.h"
#include "executor/executor_internal.h"
#include "gpu/gpu_devices.h"

uform_status_t uform_executor_for_vram(const int32_t *devices, size_t devices_count, uform_gpu_class_t gpu_class,
                                       const int32_t *memory_domains, size_t memory_domains_count,
                                       uform_cpu_class_t cpu_class, void *const *streams, size_t streams_count,
                                       size_t scratch_limit, size_t deferred_limit, uform_executor_t **executor_out) {
    static const char verb[] = "uform_executor_for_vram";
    (void)scratch_limit;
    if (!executor_out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: executor output is NULL", verb);
    *executor_out = NULL;
    if (!devices && devices_count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: devices is NULL with a count of %zu", verb,
                           devices_count);
    if (!streams && streams_count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: streams is NULL with a count of %zu", verb,
                           streams_count);
    if ((unsigned)gpu_class > UFORM_GPU_CLASS_APPLE_METAL10)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %d is not a GPU class", verb, (int)gpu_class);
    for (size_t i = 0; i < devices_count; i++) {
        if (devices[i] < 0)
            return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: device ordinal %d is negative", verb, (int)devices[i]);
        for (size_t j = 0; j < i; j++)
            if (devices[j] == devices[i])
                return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: device %d is listed twice", verb,
                                   (int)devices[i]);
    }
    const struct uform__topology_t *topology = NULL;
    uform_status_t status = uform__validate_ram_arguments(memory_domains, memory_domains_count, cpu_class,
                                                          deferred_limit, verb, &topology);
    if (status != UFORM_STATUS_OK) return status;
    if (streams_count)
        return uform__fail(UFORM_STATUS_UNSUPPORTED, "%s: borrowed streams are not supported yet; pass none", verb);
    size_t count = 0;
    status = uform_gpu_devices(NULL, 0, &count);
    if (status != UFORM_STATUS_OK) return status;
    if (!count)
        return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: no GPU: %s", verb, uform__gpu_note());
    for (size_t i = 0; i < devices_count; i++)
        if ((size_t)devices[i] >= count)
            return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: device %d does not exist (%zu GPUs)", verb,
                               (int)devices[i], count);
    return uform__fail(UFORM_STATUS_UNSUPPORTED, "%s: the devices are listed, but VRAM executors are not built yet",
                       verb);
}
