/* CPU and GPU class names: every class has a snake-case name that parses back, in either
 * case; NONE and numbers that are no class have none. */
#include <ctype.h>

#include "fixture.h"

int main(void) {
    CHECK(uform_cpu_class_name(UFORM_CPU_CLASS_NONE) == NULL);
    CHECK(uform_cpu_class_name((uform_cpu_class_t)19) == NULL);
    CHECK(uform_cpu_class_name((uform_cpu_class_t)-1) == NULL);
    CHECK_EQ_STR(uform_cpu_class_name(UFORM_CPU_CLASS_AMD_GENOA), "amd_genoa");
    CHECK_EQ_STR(uform_cpu_class_name(UFORM_CPU_CLASS_WASM64_EXTENDED), "wasm64_extended");
    for (int c = 1; c <= 18; c++) {
        const char *name = uform_cpu_class_name((uform_cpu_class_t)c);
        CHECK(name != NULL);
        char upper[64];
        size_t i = 0;
        for (; name[i] && i < sizeof upper - 1; i++) upper[i] = (char)toupper((unsigned char)name[i]);
        upper[i] = '\0';
        uform_cpu_class_t parsed = UFORM_CPU_CLASS_NONE;
        CHECK_OK(uform_cpu_class_parse(name, &parsed));
        CHECK_EQ_INT(parsed, c);
        parsed = UFORM_CPU_CLASS_NONE;
        CHECK_OK(uform_cpu_class_parse(upper, &parsed));
        CHECK_EQ_INT(parsed, c);
    }
    uform_cpu_class_t cpu = UFORM_CPU_CLASS_SERIAL;
    CHECK_OK(uform_cpu_class_parse("Intel_Sapphire", &cpu));
    CHECK_EQ_INT(cpu, UFORM_CPU_CLASS_INTEL_SAPPHIRE);
    CHECK_STATUS(uform_cpu_class_parse("none", &cpu), UFORM_STATUS_NOT_FOUND);
    CHECK_STATUS(uform_cpu_class_parse("", &cpu), UFORM_STATUS_NOT_FOUND);
    CHECK_STATUS(uform_cpu_class_parse("amd_genoa ", &cpu), UFORM_STATUS_NOT_FOUND);
    CHECK(strstr(uform_last_error(), "not a CPU class") != NULL);
    CHECK_STATUS(uform_cpu_class_parse(NULL, &cpu), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_cpu_class_parse("serial", NULL), UFORM_STATUS_INVALID_ARGUMENT);

    CHECK(uform_gpu_class_name(UFORM_GPU_CLASS_NONE) == NULL);
    CHECK(uform_gpu_class_name((uform_gpu_class_t)13) == NULL);
    CHECK_EQ_STR(uform_gpu_class_name(UFORM_GPU_CLASS_NVIDIA_HOPPER), "nvidia_hopper");
    CHECK_EQ_STR(uform_gpu_class_name(UFORM_GPU_CLASS_APPLE_METAL10), "apple_metal10");
    for (int g = 1; g <= 12; g++) {
        uform_gpu_class_t parsed = UFORM_GPU_CLASS_NONE;
        CHECK_OK(uform_gpu_class_parse(uform_gpu_class_name((uform_gpu_class_t)g), &parsed));
        CHECK_EQ_INT(parsed, g);
    }
    uform_gpu_class_t gpu;
    CHECK_OK(uform_gpu_class_parse("NVIDIA_BLACKWELLRTX", &gpu));
    CHECK_EQ_INT(gpu, UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX);
    CHECK_STATUS(uform_gpu_class_parse("nvidia_volta", &gpu), UFORM_STATUS_NOT_FOUND);
    CHECK_STATUS(uform_gpu_class_parse(NULL, &gpu), UFORM_STATUS_INVALID_ARGUMENT);
    TEST_DONE();
}
