/* An NCCL lacking an entry point the mesh binds is UNSUPPORTED naming it, every call; `nccl`
 * is not available then. */
#include "nccl_double.h"

int main(void) {
    use_nccl_double("fault missing=ncclCommUserRank", NULL, 0);
    for (int attempt = 0; attempt < 2; attempt++) {
        CHECK_STATUS(uform__nccl_available(NULL), UFORM_STATUS_UNSUPPORTED);
        CHECK_ERROR_NAMES("ncclCommUserRank");
        CHECK_ERROR_NAMES(UFORM_TEST_NCCL_DOUBLE);
    }
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_STATUS(uform__nccl_unique_id(id), UFORM_STATUS_UNSUPPORTED);
    CHECK(has_token(uform_capabilities_compiled(), "nccl"));
    CHECK(!has_token(uform_capabilities_available(), "nccl"));
    TEST_DONE();
}
