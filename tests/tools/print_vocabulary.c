/* Prints the C library's vocabularies, one member a line, as the check of the faces
 * (check_faces.py) reads them: "<list> <MEMBER> <number> <snake_name or message>". */
#include <stdio.h>

#include "hardware/seam.h"
#include "hardware/vocabulary.h"
#include "uform.h"

int main(void) {
#define CPU_LINE_(member, number, name, isa, requires) printf("cpu_class %s %d %s\n", #member, number, #name);
    UFORM__CPU_CLASSES(CPU_LINE_)
#undef CPU_LINE_
#define GPU_LINE_(member, number, name) printf("gpu_class %s %d %s\n", #member, number, #name);
    UFORM__GPU_CLASSES(GPU_LINE_)
#undef GPU_LINE_
#define VENDOR_LINE_(member, number, name) printf("gpu_vendor %s %d %s\n", #member, number, #name);
    UFORM__GPU_VENDORS(VENDOR_LINE_)
#undef VENDOR_LINE_
#define STATUS_LINE_(name, number, message) printf("status %s %d %s\n", #name, number, message);
    UFORM_STATUS_MAP(STATUS_LINE_)
#undef STATUS_LINE_
    printf("count status %d\n", (int)UFORM_STATUS_COUNT_);
    return 0;
}
