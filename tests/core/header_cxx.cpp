// uform.h alone, as C++ with every warning an error: the extern "C" wrapping and the enums
// must be clean for C++ callers too.
#include "uform.h"

#include <cstdio>
#include <cstring>

static_assert(sizeof(uform_gpu_device_t) == 280 || sizeof(void *) != 8, "GPU device layout is pinned on LP64");

int main() {
    uform_cpu_class_t cpu_class = UFORM_CPU_CLASS_AMD_GENOA;
    uform_status_t status = uform_cpu_class_parse("amd_genoa", &cpu_class);
    if (status != UFORM_STATUS_OK || std::strcmp(uform_version(), UFORM_VERSION_STRING) != 0) return 1;
    std::puts("uform.h compiles as C++ with -Wall -Wextra -pedantic -Werror");
    return 0;
}
