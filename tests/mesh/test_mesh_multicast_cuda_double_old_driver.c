/* A CUDA 12.0 driver (the double's `driver version=12000`): VRAM executors run (their ABI is
 * 12.0's), cuDeviceCanAccessPeer (CUDA 4.0) answers so the extent is still derived, but the
 * multicast objects of CUDA 12.1 cannot be resolved: the probe says no, naming the first entry
 * point it lacks and the ABI version asked for. */
#include "mesh/mesh_multicast_double.h"

static const char config[] = "driver version=12000\n"
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=0\n";

int main(void) {
    cuda_double_t cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    char why[512];
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 3);
    CHECK(!probe_leaves_nothing(&cu, 3, executor, why, sizeof why));
    CHECK_WHY_NAMES(why, "lacks cuMulticastGetGranularity (ABI of CUDA 12.1)");
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
