/* The HIP runtime test double refuses a configuration with a typo (here an unknown device key)
 * instead of emulating a different machine: the runtime fails to initialise, and uform reports
 * that as DEVICE_FAULT naming hipInit and hipErrorUnknown. */
#include "hip_double.h"

int main(void) {
    use_hip_double("device arch=gfx942 cu=304");
    size_t count = 0;
    CHECK_STATUS(uform_gpu_devices(NULL, 0, &count), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("hipInit");
    CHECK_ERROR_NAMES("hipErrorUnknown");
    TEST_DONE();
}
