/* A HIP runtime that sees no GPU (the HIP runtime test double configured with none: its
 * hipGetDeviceCount answers hipErrorNoDevice, as HIP's does): zero devices, OK, a note. */
#include "gpu/gpu_devices.h"
#include "hip_double.h"

int main(void) {
    use_hip_double("");
    size_t count = 7;
    CHECK_OK(uform_gpu_devices(NULL, 0, &count));
    CHECK_EQ_INT(count, 0);
    CHECK(strstr(uform__gpu_note(), "sees no device") != NULL);
    CHECK(!has_token(uform_capabilities_available(), "hip"));
    TEST_DONE();
}
