/* SPEC.md section 4's table, row by row, including the floor for capabilities it does not name. */
#include "gpu/gpu_devices.h"
#include "test.h"

#define CHECK_CLASS_OF(major, minor, expected)                                                     \
    CHECK_EQ_STR(uform_gpu_class_name(uform__gpu_class_of_compute_capability(major, minor)) ?: "none", expected)

int main(void) {
    CHECK_CLASS_OF(6, 0, "none");
    CHECK_CLASS_OF(7, 0, "none");
    CHECK_CLASS_OF(7, 5, "none");
    CHECK_CLASS_OF(8, 0, "nvidia_ampere");
    CHECK_CLASS_OF(8, 6, "nvidia_ampere");
    CHECK_CLASS_OF(8, 7, "nvidia_ampere");
    CHECK_CLASS_OF(8, 9, "nvidia_ada");
    CHECK_CLASS_OF(9, 0, "nvidia_hopper");
    CHECK_CLASS_OF(9, 1, "nvidia_hopper");
    CHECK_CLASS_OF(10, 0, "nvidia_blackwell");
    CHECK_CLASS_OF(10, 3, "nvidia_blackwell");
    CHECK_CLASS_OF(10, 7, "nvidia_rubin");
    CHECK_CLASS_OF(10, 1, "nvidia_ampere"); /* unnamed: the floor */
    CHECK_CLASS_OF(11, 0, "nvidia_ampere");
    CHECK_CLASS_OF(12, 0, "nvidia_blackwellrtx");
    CHECK_CLASS_OF(12, 1, "nvidia_blackwellrtx");
    CHECK_CLASS_OF(13, 0, "nvidia_ampere");
    CHECK_CLASS_OF(-1, 0, "none");
    TEST_DONE();
}
