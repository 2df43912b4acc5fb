/* Mixed machines against the CUDA driver test double: two NVLink groups of four multicast GPUs,
 * a group-0 GPU without multicast, and a multicast GPU on no NVLink. The extent is the largest
 * set of multicast GPUs that all reach each other; the probe over GPUs of two cliques fails at
 * cuMulticastAddDevice (CUDA_ERROR_INVALID_DEVICE), over a GPU without multicast with
 * CUDA_ERROR_NOT_SUPPORTED, and succeeds within one group; nothing is ever left allocated. */
#include "mesh/mesh_multicast_double.h"

static const char config[] = "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"  /* 0 1 */
                             "device multicast=yes nvlink=0\ndevice multicast=yes nvlink=0\n"  /* 2 3 */
                             "device multicast=yes nvlink=1\ndevice multicast=yes nvlink=1\n"  /* 4 5 */
                             "device multicast=yes nvlink=1\ndevice multicast=yes nvlink=1\n"  /* 6 7 */
                             "device nvlink=0\n"                                               /* 8 */
                             "device multicast=yes\n";                                         /* 9 */

static uform_executor_t *over(const int32_t *devices, size_t count) { return vram_executor(devices, count, 0); }

int main(void) {
    cuda_double_t cu = vram_double_open(config);
    char why[256];

    uform_executor_t *all = over(NULL, 0);
    CHECK_EQ_INT(uform__mesh_multimem_extent(all), 4);
    CHECK(!probe_leaves_nothing(&cu, 10, all, why, sizeof why));
    CHECK_WHY_NAMES(why, "cuMulticastAddDevice on CUDA device 4");
    CHECK_WHY_NAMES(why, "CUDA_ERROR_INVALID_DEVICE");
    CHECK_OK(uform_executor_free(all));

    /* Group 0 and its GPU without multicast: the extent leaves that one out. */
    const int32_t group0_and_plain[] = {0, 1, 2, 3, 8};
    uform_executor_t *executor = over(group0_and_plain, 5);
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 4);
    CHECK(!probe_leaves_nothing(&cu, 10, executor, why, sizeof why));
    CHECK_WHY_NAMES(why, "cuMulticastAddDevice on CUDA device 8 (the executor's device 4)");
    CHECK_WHY_NAMES(why, "CUDA_ERROR_NOT_SUPPORTED");
    CHECK_OK(uform_executor_free(executor));

    /* Half of each group: two domains of two. */
    const int32_t halves[] = {0, 1, 4, 5};
    executor = over(halves, 4);
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 2);
    CHECK(!probe_leaves_nothing(&cu, 10, executor, why, sizeof why));
    CHECK_OK(uform_executor_free(executor));

    /* One group: a domain, and the probe succeeds. */
    const int32_t group1[] = {4, 5, 6};
    executor = over(group1, 3);
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 3);
    CHECK(probe_leaves_nothing(&cu, 10, executor, why, sizeof why));
    CHECK_OK(uform_executor_free(executor));

    /* A multicast GPU on no NVLink reaches no peer. */
    const int32_t lonely[] = {0, 9};
    executor = over(lonely, 2);
    CHECK_EQ_INT(uform__mesh_multimem_extent(executor), 1);
    CHECK(!probe_leaves_nothing(&cu, 10, executor, why, sizeof why));
    CHECK_WHY_NAMES(why, "cuMulticastAddDevice on CUDA device 9");
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
}
