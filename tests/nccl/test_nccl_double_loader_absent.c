/* No NCCL here: the loader answers NOT_FOUND with a "no NCCL: <dlerror>" message, every call,
 * and the mesh's calls that need it answer the same; `nccl` stays compiled, not available. */
#include "nccl_double.h"

int main(void) {
    setenv("UFORM_NCCL_LIBRARY", "/nonexistent/uform-test/libnccl.so.2", 1);
    CHECK(has_token(uform_capabilities_compiled(), "nccl"));
    CHECK(!has_token(uform_capabilities_available(), "nccl"));
    for (int attempt = 0; attempt < 2; attempt++) {
        int version = 7;
        CHECK_STATUS(uform__nccl_available(&version), UFORM_STATUS_NOT_FOUND);
        CHECK_EQ_INT(version, 0);
        CHECK(strncmp(uform_last_error(), "no NCCL: ", 9) == 0);
        CHECK_ERROR_NAMES("/nonexistent/uform-test/libnccl.so.2");
    }
    CHECK_STATUS(uform__nccl_available(NULL), UFORM_STATUS_NOT_FOUND);
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_STATUS(uform__nccl_unique_id(id), UFORM_STATUS_NOT_FOUND);
    CHECK_ERROR_NAMES("no NCCL: ");
    /* A later change of the variable is not seen: the load is the process's answer. */
    setenv("UFORM_NCCL_LIBRARY", UFORM_TEST_NCCL_DOUBLE, 1);
    CHECK_STATUS(uform__nccl_available(NULL), UFORM_STATUS_NOT_FOUND);
    /* Destroying nothing is safe. */
    uform__nccl_communicators_t none;
    memset(&none, 0, sizeof none);
    uform__nccl_communicators_destroy(&none);
    uform__nccl_communicators_destroy(NULL);
    TEST_DONE();
}
