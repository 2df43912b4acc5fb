/* hipInit fails (fault injected into the HIP runtime test double): DEVICE_FAULT with the
 * runtime's own error name, the same answer on every later call, hip not available, and
 * `uform info` still reports, naming the failure. */
#include "hip_double.h"

int main(void) {
    use_hip_double("device name=unreachable\nfault init=hipErrorInsufficientDriver");
    CHECK_HIP_FAILURE(UFORM_STATUS_DEVICE_FAULT, "hipInit", "hipErrorInsufficientDriver");
    CHECK_INFO_HOLDS(UFORM_INFO_JSON, "\"gpus\":[]");
    CHECK_INFO_HOLDS(UFORM_INFO_JSON, "\"gpus_error\":\"DEVICE_FAULT: hipInit");
    TEST_DONE();
}
