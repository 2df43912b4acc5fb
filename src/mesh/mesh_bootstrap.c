/* The mesh joins processes over a VRAM executor. This build has no VRAM executor yet (see
 * src/gpu/), so bootstrap validates its options and then refuses the executor it was given,
 * as a build without GPU backends must; nothing pretends to meet peers. */
#include <stdlib.h>

#include "core/error.h"
#include "uform.h"

struct uform_mesh_t {
    uform_mesh_description_t description;
};

uform_status_t uform_mesh_bootstrap(uform_executor_t *executor, const uform_mesh_options_t *options,
                                    uform_mesh_t **mesh) {
    static const char verb[] = "uform_mesh_bootstrap";
    if (!mesh) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: mesh output is NULL", verb);
    *mesh = NULL;
    if (options) {
        if (options->struct_size < sizeof(uform_mesh_options_t))
            return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                               "%s: options->struct_size is %zu, expected %zu (use UFORM_MESH_OPTIONS_INIT)", verb,
                               options->struct_size, sizeof(uform_mesh_options_t));
        size_t count = options->host_domain_count ? options->host_domain_count : 1;
        if (options->host_domain_index >= count)
            return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: host_domain_index %zu is outside a run of %zu", verb,
                               options->host_domain_index, count);
        if (!(options->timeout_seconds >= 0))
            return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: timeout_seconds must be 0 or positive", verb);
        if (count > 1 && (!options->directory || !options->job))
            return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a run with peers needs a directory and a job", verb);
    }
    return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                       "%s: the mesh needs a VRAM executor, and this build cannot make one yet", verb);
}

uform_status_t uform_mesh_describe(const uform_mesh_t *mesh, uform_mesh_description_t *description) {
    if (!mesh || !description)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_mesh_describe: NULL argument");
    *description = mesh->description;
    return UFORM_STATUS_OK;
}

void uform_mesh_free(uform_mesh_t *mesh) { free(mesh); }
