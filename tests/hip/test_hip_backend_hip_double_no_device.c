/* Without HIP devices (no runtime library here) the backend is NOT_FOUND, saying why. */
#include "hip_backend_test.h"

int main(void) {
    setenv("UFORM_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
    uform_status_t status = UFORM_STATUS_OK;
    CHECK(uform__hip_backend(&status) == NULL);
    CHECK_EQ_INT(status, UFORM_STATUS_NOT_FOUND);
    CHECK_ERROR_NAMES("no HIP runtime");
    TEST_DONE();
}
