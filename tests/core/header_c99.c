/* uform.h alone, as strict C99 with every warning an error: the public header must compile
 * in any C99 project. Built by tests/core/tests.cmake; running it checks it links too. */
#include "uform.h"

#include <stdio.h>
#include <string.h>

int main(void) {
    uform_gpu_device_t device;
    uform_numa_domain_t domain;
    (void)device;
    (void)domain;
    if (strcmp(uform_version(), UFORM_VERSION_STRING) != 0) return 1;
    puts("uform.h compiles as C99 with -Wall -Wextra -pedantic -Werror");
    return 0;
}
