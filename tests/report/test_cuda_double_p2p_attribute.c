/* The CUDA double's cuDeviceGetP2PAttribute, by cuda.h's documented semantics: within one
 * `nvlink=` group access, native atomics and CUDA array access are supported and links rank
 * alike (0); elsewhere all four are 0; the same device twice or a bad one is INVALID_DEVICE,
 * an unknown attribute or a NULL value INVALID_VALUE; and it resolves through cuGetProcAddress
 * at CUDA 8.0, its version, beside cuDeviceCanAccessPeer, whose answers it matches. */
#include "gpu/cuda_double_driver.h"

static void *resolve(void *library, const char *name, int version) {
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)dlsym(library, "cuGetProcAddress_v2");
    void *pointer = NULL;
    uform_cuProcAddressQueryResult found = 99;
    CHECK_CU(get_proc(name, &pointer, version, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK(pointer == dlsym(library, name));
    return pointer;
}

int main(void) {
    (void)cuda_double_open("device cc=9.0 nvlink=0\ndevice cc=9.0 nvlink=0\ndevice cc=9.0\ndevice cc=9.0 nvlink=1");
    void *library = dlopen(UFORM_TEST_CUDA_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    CHECK(library != NULL);
    uform_cuDeviceGetP2PAttribute_t attribute =
        (uform_cuDeviceGetP2PAttribute_t)resolve(library, "cuDeviceGetP2PAttribute", 8000);
    uform_cuDeviceCanAccessPeer_t can_access =
        (uform_cuDeviceCanAccessPeer_t)resolve(library, "cuDeviceCanAccessPeer", 4000);

    static const uform_cuDeviceP2PAttribute attributes[] = {UFORM_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK,
                                                            UFORM_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED,
                                                            UFORM_CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                                                            UFORM_CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int value = 77;
            if (a == b) {
                for (int k = 0; k < 4; k++)
                    CHECK_CU(attribute(&value, attributes[k], a, b), UFORM_CUDA_ERROR_INVALID_DEVICE);
                CHECK_EQ_INT(value, 77); /* nothing written on refusal */
                continue;
            }
            int linked = (a < 2 && b < 2);
            int peer = -1;
            CHECK_CU(can_access(&peer, a, b), UFORM_CUDA_SUCCESS);
            CHECK_EQ_INT(peer, linked);
            CHECK_CU(attribute(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, a, b), UFORM_CUDA_SUCCESS);
            CHECK_EQ_INT(value, peer); /* the two calls agree */
            CHECK_CU(attribute(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, a, b),
                     UFORM_CUDA_SUCCESS);
            CHECK_EQ_INT(value, linked);
            CHECK_CU(attribute(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, a, b),
                     UFORM_CUDA_SUCCESS);
            CHECK_EQ_INT(value, linked);
            value = 77;
            CHECK_CU(attribute(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, a, b), UFORM_CUDA_SUCCESS);
            CHECK_EQ_INT(value, 0);
        }
    /* Devices 3 (group 1) and 0 (group 0): different groups reach each other not at all. */
    int value = 77;
    CHECK_CU(attribute(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 3, 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(value, 0);
    /* Refusals. */
    CHECK_CU(attribute(NULL, UFORM_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(attribute(&value, (uform_cuDeviceP2PAttribute)0, 0, 1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(attribute(&value, (uform_cuDeviceP2PAttribute)5, 0, 1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(attribute(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 4), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(attribute(&value, UFORM_CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, -1, 0), UFORM_CUDA_ERROR_INVALID_DEVICE);
    /* Older than CUDA 8.0 there is no such call. */
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)dlsym(library, "cuGetProcAddress_v2");
    void *pointer = &value;
    uform_cuProcAddressQueryResult found = 99;
    CHECK_CU(get_proc("cuDeviceGetP2PAttribute", &pointer, 7050, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK(pointer == NULL);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    TEST_DONE();
}
