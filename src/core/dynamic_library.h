/* Internal: a vendor library loaded at run time, once per process, and its entry points bound
 * from a table. The CUDA driver and the HIP runtime (src/gpu/), NVML (src/gpu/nvml/), NCCL
 * (src/mesh/nccl/) and the CUDA multicast probe all load through here; nothing in uform links
 * against a vendor library.
 *
 * A library's entry points are an X-macro list in its ABI header (cuda_abi.h, hip_abi.h,
 * nccl_abi.h). The loader expands that list twice: once into a struct of typed function
 * pointers, once into an array of uform__library_entry_t naming each field's offset. One
 * function, uform__library_bind, fills the struct from the array, through the library's own
 * versioned resolver where it has one (cuGetProcAddress_v2) and dlsym otherwise.
 *
 * The load runs under a mutex that fork handlers hold across fork(), so a child sees either a
 * finished load or none, never half of one; the load records the process generation it ran in,
 * so callers can tell a child that inherited it (uform__forked_since). */
#ifndef UFORM_CORE_DYNAMIC_LIBRARY_H
#define UFORM_CORE_DYNAMIC_LIBRARY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "uform/status.h"

/** One entry point of a table. */
typedef struct uform__library_entry_t {
    const char *name;   /**< the resolver's base name ("cuMemAlloc"); the symbol when there is no resolver */
    int version;        /**< the ABI version the resolver is asked for (CUDA: 1000 * major + 10 * minor) */
    const char *symbol; /**< the exported name dlsym looks up ("cuMemAlloc_v2") */
    size_t offset;      /**< of its function-pointer field in the table struct */
    bool optional;      /**< missing: the field stays NULL and binding goes on */
} uform__library_entry_t;

/** An entry of `table_type` (a struct of function pointers) for field `field`. */
#define UFORM__LIBRARY_ENTRY(table_type, field, name, version, symbol, optional) \
    {(name), (version), (symbol), offsetof(table_type, field), (optional)},

/**
 * A library's own lookup, for libraries that have one (CUDA's cuGetProcAddress_v2): answers the
 * entry's pointer at its ABI version, or NULL with the reason written to `why`, starting with its
 * own separator (" (ABI of CUDA 12.1): ..."), as it follows the symbol's name in the message. `context` is
 * what uform__library_bind was given.
 */
typedef void *(*uform__library_resolver_t)(void *context, const uform__library_entry_t *entry, char *why,
                                           size_t capacity);

/** A once-per-process load and what it found. Define one per library with UFORM__LIBRARY_DEFINE. */
typedef struct uform__library_t {
    pthread_mutex_t lock; /**< held by the load, by the fork handlers and by later binding */
    pthread_once_t fork_handlers_once;
    void (*install_fork_handlers)(void); /**< pthread_atfork of handlers that hold `lock` */
    bool loaded;
    uform_status_t status; /**< the load's answer, the process's from then on */
    uint32_t generation;   /**< uform__fork_generation() when the load ran */
    void *handle;          /**< the open library; NULL when none was found */
    char path[512];        /**< the name it was opened by */
    char message[512];     /**< a failed load's message */
    char note[1024];       /**< why there are no devices, in words; "" when there are */
} uform__library_t;

/** Defines `static uform__library_t name` with fork handlers of its own (pthread_atfork takes no
 *  argument, so each library needs its own pair). */
#define UFORM__LIBRARY_DEFINE(name)                                                          \
    static void name##_install_fork_handlers_(void);                                         \
    static uform__library_t name = {.lock = PTHREAD_MUTEX_INITIALIZER,                       \
                                    .fork_handlers_once = PTHREAD_ONCE_INIT,                 \
                                    .install_fork_handlers = name##_install_fork_handlers_}; \
    static void name##_before_fork_(void) { pthread_mutex_lock(&name.lock); }                \
    static void name##_after_fork_(void) { pthread_mutex_unlock(&name.lock); }               \
    static void name##_install_fork_handlers_(void) {                                        \
        pthread_atfork(name##_before_fork_, name##_after_fork_, name##_after_fork_);         \
    }

/**
 * Runs `load` on the first call, under the lock (fork handlers installed first, generation
 * recorded); when it fails, zeroes the `clear_size` bytes at `clear` (the bound entry points), so
 * nothing calls a half-bound library. From then on answers the load's status: OK, or the failure
 * with its message (through uform__fail). What `load` wrote is safe to read after an OK answer.
 */
uform_status_t uform__library_load_once(uform__library_t *library, uform_status_t (*load)(void), void *clear,
                                        size_t clear_size);

/** Records a failure as the process's answer: the message, also as the note. Answers `status`. */
UFORM_PRINTF_(3, 4)
uform_status_t uform__library_fail(uform__library_t *library, uform_status_t status, const char *format, ...);

/** Writes the note (why there are no devices) without failing. */
UFORM_PRINTF_(2, 3) void uform__library_note(uform__library_t *library, const char *format, ...);

/**
 * Opens the library: the path in environment variable `variable` when it is set and not empty
 * (that one alone: an explicit choice is never replaced by another library), else the first of
 * the NULL-terminated `candidates` that opens. True with `handle` and `path` set; false with the
 * note "no <what>: <each candidate's error>". Call from inside the load.
 */
bool uform__library_open_first(uform__library_t *library, const char *what, const char *variable,
                               const char *const *candidates);

/**
 * Binds `count` entries of `entries` into `table` (`table_size` bytes): each through `resolver`
 * when it is not NULL, else dlsym of the entry's symbol in the library's handle. `why` receives
 * "<what> <path> lacks <symbol><reason>" for the first entry the library lacks, optional or
 * not ("" when none is missing). A required one missing is UNSUPPORTED with the table zeroed
 * (nothing recorded: the caller decides whether it is the load's failure); an optional one
 * leaves its field NULL. Call inside the load, or through uform__library_bind_once.
 */
uform_status_t uform__library_bind(const uform__library_t *library, const char *what,
                                   uform__library_resolver_t resolver, void *context,
                                   const uform__library_entry_t *entries, size_t count, void *table, size_t table_size,
                                   char *why, size_t capacity);

/** A table bound after the load, on first use (execution entry points, the multicast probe's). */
typedef struct uform__library_table_t {
    bool bound;
    uform_status_t status;
    char message[512]; /**< the first missing entry, optional or not; "" when none is */
} uform__library_table_t;

/**
 * uform__library_bind once per process under the library's lock: the first call binds, every
 * call answers the first one's status (a failure through uform__fail with its message). The
 * library must have loaded (uform__library_load_once answered OK).
 */
uform_status_t uform__library_bind_once(uform__library_t *library, uform__library_table_t *state, const char *what,
                                        uform__library_resolver_t resolver, void *context,
                                        const uform__library_entry_t *entries, size_t count, void *table,
                                        size_t table_size);

#endif
