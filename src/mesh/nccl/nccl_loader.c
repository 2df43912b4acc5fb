/* Loading NCCL at run time, once per process. Nothing here links against NCCL: libnccl.so.2
 * (or UFORM_NCCL_LIBRARY) is dlopen'ed through the platform seam and its entry points bound by
 * name. Without the library the mesh forms without a data plane. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "mesh/nccl/nccl_loader.h"
#include "platform/platform.h"

#define DEFAULT_LIBRARY "libnccl.so.2"

_Static_assert(UFORM_NCCL_ID_BYTES == UFORM_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId is 128 bytes");
_Static_assert(sizeof(uform_ncclUniqueId) == UFORM_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId has no padding");

/* The load runs under `lock`, and the fork handlers hold `lock` across fork(), so a child sees
 * either a finished load or none, never half of one. No hot path: every call takes the lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;
static bool loaded;
static uform_status_t load_status;
static char load_message[512];
static uint32_t load_generation; /* the process generation that loaded the library */
static uform__nccl_api_t api;

static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork(void) { pthread_mutex_unlock(&lock); }
static void install_fork_handlers(void) { pthread_atfork(before_fork, after_fork, after_fork); }

UFORM_PRINTF_(2, 3) static uform_status_t fail_load(uform_status_t status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(load_message, sizeof load_message, format, args);
    va_end(args);
    return status;
}

static uform_status_t load(void) {
    /* The library name is read once, with the load; later changes are not seen. */
    const char *path = getenv("UFORM_NCCL_LIBRARY");
    if (!path || !*path) path = DEFAULT_LIBRARY;
    void *library = uform__library_open(path);
    if (!library) return fail_load(UFORM_STATUS_NOT_FOUND, "no NCCL: %s", uform__library_error());
    /* Bound with the library open; it stays loaded for the process's life, as communicators
     * and their proxy threads live in it. */
#define BIND_(field, symbol, type)                                                                 \
    {                                                                                              \
        void *pointer_ = uform__library_symbol(library, symbol);                                   \
        if (!pointer_)                                                                             \
            return fail_load(UFORM_STATUS_UNSUPPORTED, "NCCL library %s lacks %s: %s", path, symbol, \
                             uform__library_error());                                              \
        api.field = (type)pointer_;                                                                \
    }
    UFORM_NCCL_ENTRY_POINTS(BIND_)
#undef BIND_
#define BIND_OPTIONAL_(field, symbol, type) api.field = (type)uform__library_symbol(library, symbol);
    UFORM_NCCL_OPTIONAL_ENTRY_POINTS(BIND_OPTIONAL_)
#undef BIND_OPTIONAL_
    return UFORM_STATUS_OK;
}

uform_status_t uform__nccl_get(const uform__nccl_api_t **out) {
    *out = NULL;
    uint32_t generation = uform__fork_generation();
    pthread_once(&fork_handlers_once, install_fork_handlers);
    pthread_mutex_lock(&lock);
    if (!loaded) {
        load_status = load();
        if (load_status != UFORM_STATUS_OK) memset(&api, 0, sizeof api);
        load_generation = generation;
        loaded = true;
    }
    uform_status_t status = load_status;
    bool inherited = status == UFORM_STATUS_OK && load_generation != generation;
    pthread_mutex_unlock(&lock);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", load_message);
    if (inherited)
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
