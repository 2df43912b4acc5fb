/* A HIP runtime lacking an execution entry point (the HIP runtime test double hides
 * hipMemcpyAsync from dlsym) still lists its GPUs; the backend answers UNSUPPORTED naming the
 * symbol, every time. */
#include "hip_backend_test.h"

int main(void) {
    use_hip_double("device arch=gfx942\nfault missing=hipMemcpyAsync");
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 1);
    CHECK(has_token(uform_capabilities_available(), "hip"));
    for (int attempt = 0; attempt < 2; attempt++) {
        uform_status_t status = UFORM_STATUS_OK;
        CHECK(uform__hip_backend(&status) == NULL);
        CHECK_EQ_INT(status, UFORM_STATUS_UNSUPPORTED);
        CHECK_ERROR_NAMES("lacks hipMemcpyAsync");
    }
    TEST_DONE();
}
