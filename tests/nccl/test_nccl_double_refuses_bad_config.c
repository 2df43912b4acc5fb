/* A configuration the double does not understand is no library: every call answers
 * ncclInternalError (and the double says why on stderr), so a typo never quietly emulates
 * something else; uform's loader then has NCCL but nothing works. */
#include <dlfcn.h>

#include "nccl_double.h"

int main(void) {
    setenv("UFORM_NCCL_DOUBLE_CONFIG", "fault init=ncclSytemError", 1);
    void *library = dlopen(UFORM_TEST_NCCL_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    CHECK(library != NULL);
    uform_ncclGetVersion_t get_version = (uform_ncclGetVersion_t)dlsym(library, "ncclGetVersion");
    uform_ncclGetUniqueId_t get_id = (uform_ncclGetUniqueId_t)dlsym(library, "ncclGetUniqueId");
    CHECK(get_version && get_id);
    int version = 0;
    uform_ncclUniqueId id;
    CHECK_EQ_INT(get_version(&version), UFORM_NCCL_INTERNAL_ERROR);
    CHECK_EQ_INT(get_id(&id), UFORM_NCCL_INTERNAL_ERROR);
    /* Through uform: the unique id's failure carries NCCL's words. */
    setenv("UFORM_NCCL_LIBRARY", UFORM_TEST_NCCL_DOUBLE, 1);
    uint8_t bytes[UFORM_NCCL_UNIQUE_ID_BYTES];
    CHECK_STATUS(uform__nccl_unique_id(bytes), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("ncclGetUniqueId: ncclInternalError: internal error");
    TEST_DONE();
}
