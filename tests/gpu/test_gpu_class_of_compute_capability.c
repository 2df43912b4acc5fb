/* The GPU class table (src/gpu/gpu_classes.c), row by row, including the floor for capabilities
 * it does not name; every compute capability CUDA 13.0 lists has a confirmed row, and the rows no
 * driver has confirmed yet (10.7 -> nvidia_rubin, gfx1250 -> amd_cdna5) are marked so. */
#include <string.h>

#include "gpu/gpu_classes.h"
#include "test.h"

/* The table's row for a compute capability (minor exact), or NULL. */
static const uform__gpu_class_row_t *nvidia_row(int major, int minor) {
    size_t count = 0;
    const uform__gpu_class_row_t *rows = uform__gpu_class_rows(&count);
    for (size_t i = 0; i < count; i++)
        if (rows[i].vendor == UFORM_GPU_VENDOR_NVIDIA && rows[i].major == major && rows[i].minor == minor)
            return &rows[i];
    return NULL;
}

static const uform__gpu_class_row_t *amd_row(const char *arch) {
    size_t count = 0;
    const uform__gpu_class_row_t *rows = uform__gpu_class_rows(&count);
    for (size_t i = 0; i < count; i++)
        if (rows[i].vendor == UFORM_GPU_VENDOR_AMD && strcmp(rows[i].arch, arch) == 0) return &rows[i];
    return NULL;
}

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
    {11, 0, "nvidia_ampere"}, {13, 0, "nvidia_ampere"}, {8, 8, "nvidia_ampere"},
};

int main(void) {
    static const int cuda_13_0[][2] = {{7, 5}, {8, 0}, {8, 6}, {8, 7}, {8, 8}, {8, 9},
                                       {9, 0}, {10, 0}, {10, 3}, {11, 0}, {12, 0}, {12, 1}};
    for (size_t i = 0; i < sizeof cuda_13_0 / sizeof cuda_13_0[0]; i++) {
        const uform__gpu_class_row_t *row = nvidia_row(cuda_13_0[i][0], cuda_13_0[i][1]);
        CHECK(row != NULL);
        if (row) CHECK(row->confirmed);
    }
    const uform__gpu_class_row_t *rubin = nvidia_row(10, 7);
    CHECK(rubin != NULL && !rubin->confirmed && rubin->gpu_class == UFORM_GPU_CLASS_NVIDIA_RUBIN);
    CHECK(amd_row("gfx942") && amd_row("gfx942")->confirmed);
    CHECK(amd_row("gfx950") && amd_row("gfx950")->confirmed);
    CHECK(amd_row("gfx1250") && !amd_row("gfx1250")->confirmed);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *name = uform_gpu_class_name(uform__gpu_class_of_compute_capability(rows[i].major, rows[i].minor));
        printf("compute %d.%d -> %s\n", rows[i].major, rows[i].minor, name ? name : "none");
        CHECK_EQ_STR(name ? name : "none", rows[i].expected);
    }
    TEST_DONE();
}
