/* SPEC.md section 4's table, row by row, including the floor for capabilities it does not name. */
#include "gpu/gpu_devices.h"
#include "test.h"

static const struct {
    int major, minor;
    const char *expected;
} rows[] = {
    /* Below 8.0: no class. */
    {6, 0, "none"}, {7, 0, "none"}, {7, 5, "none"}, {-1, 0, "none"},
    /* Named rows. */
    {8, 9, "nvidia_ada"}, {9, 0, "nvidia_hopper"}, {9, 1, "nvidia_hopper"},
    {10, 0, "nvidia_blackwell"}, {10, 3, "nvidia_blackwell"}, {10, 7, "nvidia_rubin"},
    {12, 0, "nvidia_blackwellrtx"}, {12, 1, "nvidia_blackwellrtx"},
    /* Anything else from 8.0 up: the floor whose code runs on every newer GPU. */
    {8, 0, "nvidia_ampere"}, {8, 6, "nvidia_ampere"}, {8, 7, "nvidia_ampere"}, {10, 1, "nvidia_ampere"},
    {11, 0, "nvidia_ampere"}, {13, 0, "nvidia_ampere"},
};

int main(void) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *name = uform_gpu_class_name(uform__gpu_class_of_compute_capability(rows[i].major, rows[i].minor));
        printf("compute %d.%d -> %s\n", rows[i].major, rows[i].minor, name ? name : "none");
        CHECK_EQ_STR(name ? name : "none", rows[i].expected);
    }
    TEST_DONE();
}
