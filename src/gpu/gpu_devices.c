/* GPU discovery. This build carries no GPU backend yet (CUDA and HIP arrive with their own
 * folders under src/gpu/), so it answers exactly what a build without backends must: no
 * devices, which is OK, never an error. */
#include "core/error.h"
#include "uform.h"

uform_status_t uform_gpu_devices(uform_gpu_device_t *devices, size_t capacity, size_t *count) {
    if (!count) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_gpu_devices: count is NULL");
    if (!devices && capacity)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_gpu_devices: devices is NULL with capacity %zu",
                           capacity);
    *count = 0;
    return UFORM_STATUS_OK;
}
