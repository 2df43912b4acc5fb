/* The loaded library's version is ncclGetVersion's code; `nccl` is available. */
#include "nccl_double.h"

int main(void) {
    use_nccl_double("version 22304 # NCCL 2.23.4", NULL, 0);
    int version = 0;
    CHECK_OK(uform__nccl_available(&version));
    CHECK_EQ_INT(version, 22304);
    CHECK_OK(uform__nccl_available(NULL));
    CHECK(has_token(uform_capabilities_compiled(), "nccl"));
    CHECK(has_token(uform_capabilities_available(), "nccl"));
    /* The order of the vocabulary: the backends after the CPU classes, nccl after hip. */
    CHECK(strstr(uform_capabilities_compiled(), "cuda,hip,nccl") != NULL);
    TEST_DONE();
}
