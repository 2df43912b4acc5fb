/* gpus_per_multimem_domain is a domain's size: 0 derives it, 1 to the run's GPUs are taken, and
 * a value no run could have (more GPUs than the run has, SIZE_MAX on a one-GPU run included) is
 * INVALID_ARGUMENT naming the bound, before any peer is met. */
#include <stdint.h>

#include "mesh_processes.h"

static member_t members[1];

static void alone(size_t gpus, size_t multimem) {
    members_fill(members, 1, "alone", gpus, 2);
    members[0].multimem = multimem;
    members_start(members, 1);
    members_finish(members, 1);
}

int main(void) {
    make_mesh_directory();
    alone(1, SIZE_MAX);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "gpus_per_multimem_domain 18446744073709551615 is more than the run's 1 GPUs");
    alone(2, 3);
    CHECK_STATUS(members[0].status, UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_MESSAGE(members[0], "gpus_per_multimem_domain 3 is more than the run's 2 GPUs");
    CHECK_MESSAGE(members[0], "1 to 2");
    alone(2, 2);
    CHECK_OK(members[0].status);
    CHECK_EQ_INT(members[0].description.gpus_per_multimem_domain, 2);
    alone(2, 0);
    CHECK_OK(members[0].status);
    CHECK_EQ_INT(members[0].description.gpus_per_multimem_domain, 1); /* derived: no NVLink here */
    CHECK(rmdir(mesh_directory) == 0);
    TEST_DONE();
}
