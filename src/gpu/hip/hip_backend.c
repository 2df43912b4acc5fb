/* Placeholder until the HIP backend lands: discovery lists no AMD device yet, so nothing
 * reaches this. */
#include "core/error.h"
#include "gpu/gpu_backend.h"

const uform__gpu_backend_t *uform__hip_backend(uform_status_t *status) {
    *status = uform__fail(UFORM_STATUS_UNSUPPORTED, "the HIP backend is not built yet");
    return NULL;
}
