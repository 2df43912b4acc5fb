/* A HIP runtime lacking the ROCm 6 properties entry (the HIP runtime test double hides
 * hipGetDevicePropertiesR0600 from dlsym, as a ROCm 5 library lacks it): UNSUPPORTED naming it,
 * never a crash, and the same on every call. */
#include "hip_double.h"

int main(void) {
    use_hip_double("device name=any\nfault missing=hipGetDevicePropertiesR0600");
    CHECK_HIP_FAILURE(UFORM_STATUS_UNSUPPORTED, "lacks hipGetDevicePropertiesR0600");
    CHECK_INFO_HOLDS(UFORM_INFO_TEXT, "GPUs:                   unavailable (UNSUPPORTED: ");
    TEST_DONE();
}
