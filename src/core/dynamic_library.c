/* Loading a vendor library once per process and binding its entry-point tables
 * (dynamic_library.h). */
#include "core/dynamic_library.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

uform_status_t uform__library_load_once(uform__library_t *library, uform_status_t (*load)(void), void *clear,
                                        size_t clear_size) {
    pthread_once(&library->fork_handlers_once, library->install_fork_handlers);
    pthread_mutex_lock(&library->lock);
    if (!library->loaded) {
        library->generation = uform__fork_generation();
        library->status = load();
        if (library->status != UFORM_STATUS_OK && clear) memset(clear, 0, clear_size);
        library->loaded = true;
    }
    uform_status_t status = library->status;
    pthread_mutex_unlock(&library->lock);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", library->message);
    return UFORM_STATUS_OK;
}

uform_status_t uform__library_fail(uform__library_t *library, uform_status_t status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(library->message, sizeof library->message, format, args);
    va_end(args);
    snprintf(library->note, sizeof library->note, "%s", library->message);
    return status;
}

void uform__library_note(uform__library_t *library, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(library->note, sizeof library->note, format, args);
    va_end(args);
}

/* Appends `text` to the note, after "; " when it holds something, cut at its capacity. */
static void append_note(uform__library_t *library, const char *text) {
    size_t used = strlen(library->note);
    if (used + 1 >= sizeof library->note) return;
    snprintf(library->note + used, sizeof library->note - used, "%s%s", used ? "; " : "", text);
}

bool uform__library_open_first(uform__library_t *library, const char *what, const char *variable,
                               const char *const *candidates) {
    const char *chosen = variable ? getenv(variable) : NULL;
    const char *single[2] = {chosen, NULL};
    if (chosen && *chosen) candidates = single;
    char errors[sizeof library->note];
    errors[0] = '\0';
    library->note[0] = '\0';
    for (size_t i = 0; candidates[i]; i++) {
        void *handle = uform__library_open(candidates[i]);
        if (handle) {
            library->handle = handle;
            snprintf(library->path, sizeof library->path, "%s", candidates[i]);
            library->note[0] = '\0';
            return true;
        }
        append_note(library, uform__library_error());
    }
    snprintf(errors, sizeof errors, "%s", library->note);
    snprintf(library->note, sizeof library->note, "no %s: %s", what, errors);
    return false;
}

uform_status_t uform__library_bind(const uform__library_t *library, const char *what,
                                   uform__library_resolver_t resolver, void *context,
                                   const uform__library_entry_t *entries, size_t count, void *table, size_t table_size,
                                   char *why, size_t capacity) {
    if (capacity) why[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        const uform__library_entry_t *entry = &entries[i];
        char reason[400] = "";
        void *pointer = NULL;
        if (resolver)
            pointer = resolver(context, entry, reason, sizeof reason);
        else {
            pointer = uform__library_symbol(library->handle, entry->symbol);
            /* dlsym may answer NULL without an error (a symbol whose value is NULL). */
            if (!pointer) snprintf(reason, sizeof reason, ": dlsym: %s", uform__library_error());
        }
        if (!pointer) {
            if (capacity && !why[0])
                snprintf(why, capacity, "%s %s lacks %s%s", what, library->path, entry->symbol, reason);
            if (entry->optional) continue;
            memset(table, 0, table_size);
            return UFORM_STATUS_UNSUPPORTED;
        }
        /* Every field is a function pointer of the same representation as void * (POSIX dlsym). */
        memcpy((char *)table + entry->offset, &pointer, sizeof pointer);
    }
    return UFORM_STATUS_OK;
}

uform_status_t uform__library_bind_once(uform__library_t *library, uform__library_table_t *state, const char *what,
                                        uform__library_resolver_t resolver, void *context,
                                        const uform__library_entry_t *entries, size_t count, void *table,
                                        size_t table_size) {
    pthread_mutex_lock(&library->lock);
    if (!state->bound) {
        state->status = uform__library_bind(library, what, resolver, context, entries, count, table, table_size,
                                            state->message, sizeof state->message);
        state->bound = true;
    }
    uform_status_t status = state->status;
    pthread_mutex_unlock(&library->lock);
    if (status != UFORM_STATUS_OK) return uform__fail(status, "%s", state->message);
    return UFORM_STATUS_OK;
}
