/* The NVML double's entry points, opened with dlopen and bound by name from nvml_abi.h's own
 * list (UFORM_NVML_ENTRY_POINTS), so the tests call them as a program using NVML would and a
 * new entry point is bound here without another line. */
#ifndef UFORM_TEST_NVML_DOUBLE_API_H
#define UFORM_TEST_NVML_DOUBLE_API_H

#include <dlfcn.h>

#include "gpu/nvml/nvml_abi.h"
#include "test.h"

typedef struct nvml_double_api_t {
#define NVML_DOUBLE_FIELD_(field, symbol, type, optional) type field;
    UFORM_NVML_ENTRY_POINTS(NVML_DOUBLE_FIELD_)
#undef NVML_DOUBLE_FIELD_
} nvml_double_api_t;

/* Opens the double (UFORM_TEST_NVML_DOUBLE) and binds every entry point, optional ones too: the
 * double exports them all. A missing one fails the test. */
static inline void *nvml_double_open(nvml_double_api_t *api) {
    void *library = dlopen(UFORM_TEST_NVML_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    if (!library) TEST_FAIL_("cannot open the NVML double: %s", dlerror());
#define NVML_DOUBLE_BIND_(field, symbol, type, optional) \
    if (!(*(void **)&api->field = dlsym(library, symbol))) TEST_FAIL_("the NVML double lacks %s", symbol);
    UFORM_NVML_ENTRY_POINTS(NVML_DOUBLE_BIND_)
#undef NVML_DOUBLE_BIND_
    return library;
}

#endif
