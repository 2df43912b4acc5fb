/* The class table's AMD rows (src/gpu/gpu_classes.c) from gcnArchName: gfx942 -> amd_cdna3, gfx950 -> amd_cdna4,
 * gfx1250 -> amd_cdna5, any other AMD GPU -> none; the target features after ':' do not matter.
 * Checked on the mapping itself and through the HIP runtime test double. */
#include "gpu/gpu_devices.h"
#include "gpu/hip/hip_loader.h"
#include "hip_double.h"

int main(void) {
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx942"), UFORM_GPU_CLASS_AMD_CDNA3);
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx942:sramecc+:xnack-"), UFORM_GPU_CLASS_AMD_CDNA3);
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx950:sramecc+:xnack-"), UFORM_GPU_CLASS_AMD_CDNA4);
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx1250"), UFORM_GPU_CLASS_AMD_CDNA5);
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx90a:sramecc+:xnack-"), UFORM_GPU_CLASS_NONE); /* MI250X: CDNA2 */
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx1100"), UFORM_GPU_CLASS_NONE);
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx9420"), UFORM_GPU_CLASS_NONE); /* a prefix is not a match */
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch("gfx94"), UFORM_GPU_CLASS_NONE);
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch(""), UFORM_GPU_CLASS_NONE);
    CHECK_EQ_INT(uform__gpu_class_of_gcn_arch(NULL), UFORM_GPU_CLASS_NONE);

    use_hip_double("device arch=gfx942:sramecc+:xnack-\n"
                   "device arch=gfx950:sramecc+:xnack-\n"
                   "device arch=gfx1250\n"
                   "device arch=gfx90a:sramecc+:xnack-\n"
                   "device arch=gfx1100\n");
    uform_gpu_device_t devices[5];
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(devices, 5, &count));
    CHECK_EQ_INT(count, 5);
    static const uform_gpu_class_t classes[5] = {UFORM_GPU_CLASS_AMD_CDNA3, UFORM_GPU_CLASS_AMD_CDNA4,
                                                 UFORM_GPU_CLASS_AMD_CDNA5, UFORM_GPU_CLASS_NONE, UFORM_GPU_CLASS_NONE};
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(devices[i].vendor, UFORM_GPU_VENDOR_AMD);
        CHECK_EQ_INT(devices[i].gpu_class, classes[i]);
    }
    const uform__hip_t *hip = NULL;
    CHECK_OK(uform__hip_get(&hip));
    CHECK_EQ_STR(hip->devices[0].arch, "gfx942:sramecc+:xnack-"); /* the runtime's whole name is kept */
    TEST_DONE();
}
