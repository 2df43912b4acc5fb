/* Dynamic libraries on WebAssembly: this build links no dynamic loader (no MAIN_MODULE), so
 * every open fails with one plain reason and the GPU and mesh backends answer zero devices. */
#include "platform/platform.h"

void *uform__library_open(const char *path) {
    (void)path;
    return NULL;
}
void *uform__library_symbol(void *library, const char *name) {
    (void)library, (void)name;
    return NULL;
}
void uform__library_close(void *library) { (void)library; }
const char *uform__library_error(void) { return "no dynamic libraries in this build (WebAssembly)"; }
