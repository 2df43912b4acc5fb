/* capabilities_compiled() lists hip right after cuda; capabilities_available() lists it when the
 * HIP runtime (here its test double) loads and sees a device, and cuda not when no driver loads. */
#include "hip_double.h"

int main(void) {
    use_hip_double("device arch=gfx942");
    const char *compiled = uform_capabilities_compiled();
    CHECK(has_token(compiled, "hip"));
    CHECK(strstr(compiled, "cuda,hip") != NULL);
    const char *available = uform_capabilities_available();
    CHECK(has_token(available, "hip"));
    CHECK(!has_token(available, "cuda"));
    for (const char *p = available; *p;) { /* available is a subset of compiled */
        char token[64];
        size_t n = strcspn(p, ",");
        CHECK(n < sizeof token);
        memcpy(token, p, n);
        token[n] = '\0';
        CHECK(has_token(compiled, token));
        p += n + (p[n] == ',');
    }
    TEST_DONE();
}
