/* The multicast probe sizes its memory as NCCL's nvls.cc does: the multicast object's size set
 * before its granularity is asked, and the physical memory aligned to the allocation granularity
 * (cuMemGetAllocationGranularity) as well as the multicast one. On devices whose allocation
 * granularity (8 MiB here) exceeds the multicast minimum (2 MiB), a probe that used the multicast
 * minimum as cuMemCreate's size would be refused (INVALID_VALUE) and report no multicast on a
 * machine that has it; sized as NCCL does, it succeeds and leaves nothing allocated. */
#include "mesh/mesh_multicast_double.h"

int main(void) {
    cuda_double_t cu = vram_double_open("device multicast=yes nvlink=0 granularity=8M\n"
                                        "device multicast=yes nvlink=0 granularity=8M\n"
                                        "device multicast=yes nvlink=0 granularity=4M");
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    char why[512];
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 3);
    if (!probe_leaves_nothing(&cu, 3, executor, why, sizeof why)) TEST_FAIL_("the probe said no: %s", why);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
