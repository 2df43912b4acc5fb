/* Device names reach every binding as UTF-8, so uform cuts what the driver gives at a
 * character boundary: the CUDA driver test double, like the driver, truncates the name to the
 * buffer byte-wise, splitting a character; and a stray byte ends the name. */
#include "cuda_double.h"

/* 254 ASCII bytes, then a two-byte character straddling the 255-byte limit of a 256-byte
 * buffer: the driver writes its first byte only. */
#define A50 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define A254 A50 A50 A50 A50 A50 "AAAA"

int main(void) {
    use_cuda_double("device pci=0000:01:00.0 name=" A254 "\\xC3\\xA9 tail\n"                  /* é split */
                    "device pci=0000:02:00.0 name=" A50 A50 A50 A50 A50 "AA\\xE2\\x82\\xAC\n" /* € whole, 255 bytes */
                    "device pci=0000:03:00.0 name=GPU \\xE2\\x82\\xAC \\xFF rest\n"                /* stray byte */
                    "device pci=0000:04:00.0 name=Caf\\xC3\\xA9 \\xF0\\x9F\\x9A\\x80\n");        /* é and U+1F680 */
    uform_gpu_device_t devices[4];
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(devices, 4, &count));
    CHECK_EQ_INT(count, 4);
    CHECK_EQ_INT(strlen(devices[0].name), 254);
    CHECK_EQ_STR(devices[0].name, A254);
    CHECK_EQ_INT(strlen(devices[1].name), 255);
    CHECK_EQ_STR(devices[1].name, A50 A50 A50 A50 A50 "AA\xE2\x82\xAC");
    CHECK_EQ_STR(devices[2].name, "GPU \xE2\x82\xAC ");
    CHECK_EQ_STR(devices[3].name, "Caf\xC3\xA9 \xF0\x9F\x9A\x80");
    TEST_DONE();
}
