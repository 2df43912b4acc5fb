/* A multicast step failing on one GPU (the double's `fault multicast=`): the probe says no,
 * naming the entry point, the device and the driver's error, and releases everything it took
 * on every device: memory created on the devices before the failure, bindings included. A
 * failing unbind is still a "no", and still leaks nothing (releasing the multicast object drops
 * the binding). The extent does not depend on the probe. */
#include "mesh/mesh_multicast_double.h"

static const char config[] = "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"
                             "fault multicast=bind@5:CUDA_ERROR_SYSTEM_NOT_READY\n"
                             "fault multicast=unbind@2:CUDA_ERROR_ILLEGAL_STATE\n"
                             "fault multicast=memcreate@7:CUDA_ERROR_OUT_OF_MEMORY\n";

int main(void) {
    cuda_double_t cu = vram_double_open(config);
    char why[256];

    /* Everything: device 5's bind fails after devices 0-4 bound (2's unbind fails too: the first
     * failure is the one named). */
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 8);
    CHECK(!probe_leaves_nothing(&cu, 8, executor, why, sizeof why));
    CHECK_WHY_NAMES(why, "cuMulticastBindMem on CUDA device 5");
    CHECK_WHY_NAMES(why, "CUDA_ERROR_SYSTEM_NOT_READY");
    CHECK_OK(uform_executor_free(executor));

    /* Only the unbind fails. */
    const int32_t first_five[] = {0, 1, 2, 3, 4};
    executor = vram_executor(first_five, 5, 0);
    CHECK(!probe_leaves_nothing(&cu, 8, executor, why, sizeof why));
    CHECK_WHY_NAMES(why, "cuMulticastUnbind on CUDA device 2");
    CHECK_WHY_NAMES(why, "CUDA_ERROR_ILLEGAL_STATE");
    CHECK_OK(uform_executor_free(executor));

    /* Memory cannot be created on device 7, after device 6's was created and bound. */
    const int32_t last_two[] = {6, 7};
    executor = vram_executor(last_two, 2, 0);
    CHECK(!probe_leaves_nothing(&cu, 8, executor, why, sizeof why));
    CHECK_WHY_NAMES(why, "cuMemCreate on CUDA device 7 (the executor's device 1)");
    CHECK_WHY_NAMES(why, "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK_OK(uform_executor_free(executor));

    /* Devices no fault concerns: yes. */
    const int32_t clean[] = {0, 1, 3, 4, 6};
    executor = vram_executor(clean, 5, 0);
    CHECK(probe_leaves_nothing(&cu, 8, executor, why, sizeof why));
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
