/* Every cache of a seam reading (the topology, the CPU features and class, the available
 * capabilities) follows the seam when it moves: each compares the seam's generation, and the
 * seam names none of them. Two fixtures in turn, then back, each answered as its own. */
#include "fixture.h"

static void expect_two_socket(void) {
    CHECK_CLASS("intel_skylake");
    CHECK_EQ_INT(topology()->usable_count, 80);
    CHECK_EQ_INT(topology()->node_count, 2);
    CHECK(uform__cpu_class_runs(UFORM_CPU_CLASS_INTEL_SKYLAKE));
    if (has_token(uform_capabilities_compiled(), "intel_skylake"))
        CHECK(has_token(uform_capabilities_available(), "intel_skylake"));
}

int main(void) {
    use_fixture("two_socket_6248_smt");
    expect_two_socket();

    use_fixture("graviton2_m6g");
    CHECK_CLASS("aws_g2");
    CHECK_EQ_INT(topology()->usable_count, 64);
    CHECK_EQ_INT(topology()->node_count, 1);
    CHECK(!uform__cpu_class_runs(UFORM_CPU_CLASS_INTEL_SKYLAKE));
    CHECK(!has_token(uform_capabilities_available(), "intel_skylake"));

    use_fixture("two_socket_6248_smt");
    expect_two_socket();
    CHECK_OK(uform__seam_use_fixture(NULL));
    TEST_DONE();
}
