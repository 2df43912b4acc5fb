#include <dlfcn.h>

#include "platform/platform.h"

void *uform__library_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
void *uform__library_symbol(void *library, const char *name) { return dlsym(library, name); }
void uform__library_close(void *library) {
    if (library) dlclose(library);
}
const char *uform__library_error(void) {
    const char *text = dlerror();
    return text ? text : "unknown loader error";
}
