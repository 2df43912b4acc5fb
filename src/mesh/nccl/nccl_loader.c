/* Loading NCCL at run time, once per process (core/dynamic_library.h). Nothing here links
 * against NCCL: libnccl.so.2 (or UFORM_NCCL_LIBRARY) is dlopen'ed and nccl_abi.h's entry points
 * bound by name. Without the library the mesh forms without a data plane. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dynamic_library.h"
#include "core/error.h"
#include "mesh/nccl/nccl_loader.h"
#include "platform/platform.h"

#define DEFAULT_LIBRARY "libnccl.so.2"

_Static_assert(UFORM_NCCL_ID_BYTES == UFORM_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId is 128 bytes");
_Static_assert(sizeof(uform_ncclUniqueId) == UFORM_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId has no padding");

UFORM__LIBRARY_DEFINE(loader)
static uform__nccl_api_t api;

/* nccl_abi.h's lists as one binding table, looked up by exported name: the main list required. */
#define ENTRY_(field, symbol, type) UFORM__LIBRARY_ENTRY(uform__nccl_api_t, field, symbol, 0, symbol, false)
/* nccl_abi.h's optional list: newer entry points an older NCCL lacks, bound to NULL there. */
#define OPTIONAL_ENTRY_(field, symbol, type) UFORM__LIBRARY_ENTRY(uform__nccl_api_t, field, symbol, 0, symbol, true)
static const uform__library_entry_t entries[] = {UFORM_NCCL_ENTRY_POINTS(ENTRY_)
                                                     UFORM_NCCL_OPTIONAL_ENTRY_POINTS(OPTIONAL_ENTRY_)};

static uform_status_t load(void) {
    static const char *const candidates[] = {DEFAULT_LIBRARY, NULL};
    /* Without the library the load fails (NOT_FOUND): the mesh asks for NCCL only when it wants it. */
    if (!uform__library_open_first(&loader, "NCCL", "UFORM_NCCL_LIBRARY", candidates))
        return uform__library_fail(&loader, UFORM_STATUS_NOT_FOUND, "%s", loader.note);
    /* Bound with the library open; it stays loaded for the process's life, as communicators
     * and their proxy threads live in it. */
    char why[512];
    uform_status_t status = uform__library_bind(&loader, "NCCL library", NULL, NULL, entries,
                                                sizeof entries / sizeof entries[0], &api, sizeof api, why, sizeof why);
    if (status != UFORM_STATUS_OK) return uform__library_fail(&loader, status, "%s", why);
    return UFORM_STATUS_OK;
}

uform_status_t uform__nccl_get(const uform__nccl_api_t **out) {
    *out = NULL;
    uform_status_t status = uform__library_load_once(&loader, load, &api, sizeof api);
    if (status != UFORM_STATUS_OK) return status;
    if (uform__forked_since(loader.generation))
        return uform__fail(UFORM_STATUS_FORKED, "NCCL was loaded by the parent of this fork()ed process, "
                                                "which cannot use it (its communicators and threads stay "
                                                "with the parent)");
    *out = &api;
    return UFORM_STATUS_OK;
}

const char *uform__nccl_error_string(const uform__nccl_api_t *library, uform_ncclResult result, char *buffer,
                                     size_t capacity) {
    const char *text = library && library->ncclGetErrorString ? library->ncclGetErrorString(result) : NULL;
    if (text && *text) return text;
    snprintf(buffer, capacity, "ncclResult_t %u", result);
    return buffer;
}

const char *uform__nccl_result_name(uform_ncclResult result) {
    switch (result) {
    case UFORM_NCCL_SUCCESS: return "ncclSuccess";
    case UFORM_NCCL_UNHANDLED_CUDA_ERROR: return "ncclUnhandledCudaError";
    case UFORM_NCCL_SYSTEM_ERROR: return "ncclSystemError";
    case UFORM_NCCL_INTERNAL_ERROR: return "ncclInternalError";
    case UFORM_NCCL_INVALID_ARGUMENT: return "ncclInvalidArgument";
    case UFORM_NCCL_INVALID_USAGE: return "ncclInvalidUsage";
    case UFORM_NCCL_REMOTE_ERROR: return "ncclRemoteError";
    case UFORM_NCCL_IN_PROGRESS: return "ncclInProgress";
    case UFORM_NCCL_TIMEOUT: return "ncclTimeout";
    default: return "ncclResult_t";
    }
}

uform_status_t uform__nccl_status(uform_ncclResult result) {
    switch (result) {
    case UFORM_NCCL_SUCCESS: return UFORM_STATUS_OK;
    case UFORM_NCCL_INVALID_ARGUMENT:
    case UFORM_NCCL_INVALID_USAGE: return UFORM_STATUS_INVALID_ARGUMENT;
    case UFORM_NCCL_SYSTEM_ERROR:
    case UFORM_NCCL_REMOTE_ERROR: return UFORM_STATUS_IO_ERROR;
    case UFORM_NCCL_TIMEOUT: return UFORM_STATUS_TIMEOUT;
    default: return UFORM_STATUS_DEVICE_FAULT;
    }
}

uform_status_t uform__nccl_available(int *version) {
    if (version) *version = 0;
    const uform__nccl_api_t *library = NULL;
    uform_status_t status = uform__nccl_get(&library);
    if (status != UFORM_STATUS_OK) return status;
    if (version) {
        int code = 0;
        if (library->ncclGetVersion(&code) == UFORM_NCCL_SUCCESS) *version = code;
    }
    return UFORM_STATUS_OK;
}

uform_status_t uform__nccl_unique_id(uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES]) {
    if (!id) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform__nccl_unique_id: output is NULL");
    const uform__nccl_api_t *library = NULL;
    uform_status_t status = uform__nccl_get(&library);
    if (status != UFORM_STATUS_OK) return status;
    uform_ncclUniqueId unique;
    memset(&unique, 0, sizeof unique);
    uform_ncclResult result = library->ncclGetUniqueId(&unique);
    if (result != UFORM_NCCL_SUCCESS) {
        char buffer[32];
        return uform__fail(uform__nccl_status(result), "ncclGetUniqueId: %s: %s", uform__nccl_result_name(result),
                           uform__nccl_error_string(library, result, buffer, sizeof buffer));
    }
    memcpy(id, unique.internal, UFORM_NCCL_UNIQUE_ID_BYTES);
    return UFORM_STATUS_OK;
}
