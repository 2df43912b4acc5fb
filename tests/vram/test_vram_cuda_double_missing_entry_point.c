/* A CUDA driver lacking an entry point the VRAM executor needs (the double configured not to
 * resolve cuEventCreate, as an old driver might): the GPUs are still listed, and for_vram
 * answers UNSUPPORTED naming the entry point, every time, without crashing. */
#include "gpu/cuda_double.h"
#include "test.h"

int main(void) {
    use_cuda_double("device cc=9.0\nfault missing=cuEventCreate\n");
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 1);
    for (int attempt = 0; attempt < 2; attempt++) {
        uform_executor_t *executor = (uform_executor_t *)1;
        CHECK_STATUS(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0,
                                             0, &executor),
                     UFORM_STATUS_UNSUPPORTED);
        CHECK(executor == NULL);
        CHECK_ERROR_NAMES("lacks cuEventCreate");
    }
    TEST_DONE();
}
