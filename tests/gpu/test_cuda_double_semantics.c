/* The CUDA driver test double itself, called directly: it must keep the driver's documented
 * semantics, or tests passing against it prove nothing. Errors before cuInit, bad devices and
 * NULL outputs, cuGetProcAddress by version, flags and symbol, cuGetErrorName, and the
 * configuration's own refusals. */
#include <dlfcn.h>

#include "cuda_double.h"
#include "gpu/cuda/cuda_abi.h"

static void *library;

static void *symbol(const char *name) {
    void *pointer = dlsym(library, name);
    if (!pointer) TEST_FAIL_("the double lacks %s", name);
    return pointer;
}

#define CHECK_CU(call, expected) CHECK_EQ_INT((call), (expected))

int main(void) {
    setenv("UFORM_CUDA_DOUBLE_CONFIG",
           "driver version=12040\n"
           "device pci=0000:3b:00.0 cc=9.0 sms=132 memory=96G name=NVIDIA GH200\n"
           "device pci=0000:0a:00.0 cc=8.0 sms=108 memory=40G name=NVIDIA A100\n",
           1);
    library = dlopen(UFORM_TEST_CUDA_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    CHECK(library != NULL);
    uform_cuInit_t cu_init = (uform_cuInit_t)symbol("cuInit");
    uform_cuDriverGetVersion_t get_version = (uform_cuDriverGetVersion_t)symbol("cuDriverGetVersion");
    uform_cuDeviceGetCount_t get_count = (uform_cuDeviceGetCount_t)symbol("cuDeviceGetCount");
    uform_cuDeviceGet_t get_device = (uform_cuDeviceGet_t)symbol("cuDeviceGet");
    uform_cuDeviceGetName_t get_name = (uform_cuDeviceGetName_t)symbol("cuDeviceGetName");
    uform_cuDeviceTotalMem_t total_memory = (uform_cuDeviceTotalMem_t)symbol("cuDeviceTotalMem_v2");
    uform_cuDeviceGetAttribute_t get_attribute = (uform_cuDeviceGetAttribute_t)symbol("cuDeviceGetAttribute");
    uform_cuDeviceGetPCIBusId_t get_bus_id = (uform_cuDeviceGetPCIBusId_t)symbol("cuDeviceGetPCIBusId");
    uform_cuGetErrorName_t error_name = (uform_cuGetErrorName_t)symbol("cuGetErrorName");
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)symbol("cuGetProcAddress_v2");

    /* Before cuInit: version and error names work, device queries answer NOT_INITIALIZED. */
    int version = 0, count = -1, value = 0;
    CHECK_CU(get_version(&version), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(version, 12040);
    CHECK_CU(get_version(NULL), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_count(&count), UFORM_CUDA_ERROR_NOT_INITIALIZED);
    uform_cuDevice device = -1;
    CHECK_CU(get_device(&device, 0), UFORM_CUDA_ERROR_NOT_INITIALIZED);
    const char *name = NULL;
    CHECK_CU(error_name(UFORM_CUDA_ERROR_INVALID_DEVICE, &name), UFORM_CUDA_SUCCESS);
    CHECK_EQ_STR(name, "CUDA_ERROR_INVALID_DEVICE");
    CHECK_CU(error_name(12345, &name), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK(name == NULL);
    CHECK_CU(error_name(0, NULL), UFORM_CUDA_ERROR_INVALID_VALUE);

    /* cuInit takes flags 0 only. */
    CHECK_CU(cu_init(1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(cu_init(0), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu_init(0), UFORM_CUDA_SUCCESS); /* idempotent */

    CHECK_CU(get_count(&count), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(count, 2);
    CHECK_CU(get_count(NULL), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_device(NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_device(&device, 2), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(get_device(&device, -1), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(get_device(&device, 1), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(device, 1);

    /* Without CUDA_DEVICE_ORDER the configuration's order stands ("fastest first"). */
    char text[64];
    CHECK_CU(get_name(text, sizeof text, 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_STR(text, "NVIDIA GH200");
    CHECK_CU(get_name(text, 5, 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_STR(text, "NVID");
    CHECK_CU(get_name(NULL, 5, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_name(text, 0, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_name(text, sizeof text, 7), UFORM_CUDA_ERROR_INVALID_DEVICE);
    size_t bytes = 0;
    CHECK_CU(total_memory(&bytes, 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(bytes, 96ull << 30);
    CHECK_CU(total_memory(NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(total_memory(&bytes, 2), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(get_attribute(&value, UFORM_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(value, 8);
    CHECK_CU(get_attribute(&value, UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(value, 0x3b);
    CHECK_CU(get_attribute(NULL, UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_attribute(&value, 100000, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_attribute(&value, UFORM_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 9), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(get_bus_id(text, sizeof text, 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_STR(text, "0000:3B:00.0");
    CHECK_CU(get_bus_id(NULL, 13, 0), UFORM_CUDA_ERROR_INVALID_VALUE);

    /* cuGetProcAddress: the ABI version picks the function; unknown names and versions newer
     * than the driver are refused, with the query result saying which. */
    void *pointer = NULL;
    uform_cuProcAddressQueryResult found = 99;
    CHECK_CU(get_proc("cuDeviceTotalMem", &pointer, 3020, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK(pointer == (void *)total_memory);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK_CU(get_proc("cuDeviceTotalMem", &pointer, 2000, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK(pointer == symbol("cuDeviceTotalMem")); /* the 32-bit CUDA 2.0 ABI */
    /* Not found, or too old for the version asked: SUCCESS with a NULL pointer, as cuda.h says. */
    CHECK_CU(get_proc("cuDeviceGetPCIBusId", &pointer, 4000, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(pointer == NULL);
    pointer = (void *)&found;
    CHECK_CU(get_proc("cuNoSuchThing", &pointer, 12000, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(pointer == NULL);
    CHECK_CU(get_proc("cuInit", &pointer, 12080, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_ERROR_INVALID_VALUE); /* newer than the driver (12.4) */
    CHECK_CU(get_proc("cuInit", &pointer, 12000, 4, &found), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_proc(NULL, &pointer, 12000, 0, &found), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_proc("cuInit", NULL, 12000, 0, &found), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(get_proc("cuInit", &pointer, 12000, UFORM_CU_GET_PROC_ADDRESS_LEGACY_STREAM, NULL), UFORM_CUDA_SUCCESS);
    CHECK(pointer == (void *)cu_init);
    /* The execution entry points too: the versioned ABI at its version, not before. */
    CHECK_CU(get_proc("cuMemAlloc", &pointer, 3020, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == symbol("cuMemAlloc_v2"));
    CHECK_CU(get_proc("cuMemAlloc", &pointer, 3000, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == NULL);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK_CU(get_proc("cuLaunchHostFunc", &pointer, 9020, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK_CU(get_proc("cuDevicePrimaryCtxRelease", &pointer, 11000, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK(pointer == symbol("cuDevicePrimaryCtxRelease_v2"));
    CHECK_CU(get_proc("cuStreamDestroy", &pointer, 12000, UFORM_CU_GET_PROC_ADDRESS_DEFAULT, &found),
             UFORM_CUDA_SUCCESS);
    CHECK(pointer == symbol("cuStreamDestroy_v2"));
    /* The CUDA 11.3 signature is exported under the plain name. */
    uform_cuResult (*get_proc_v1)(const char *, void **, int, uint64_t) =
        (uform_cuResult(*)(const char *, void **, int, uint64_t))symbol("cuGetProcAddress");
    CHECK_CU(get_proc_v1("cuDeviceGet", &pointer, 11030, 0), UFORM_CUDA_SUCCESS);
    CHECK(pointer == (void *)get_device);

    /* The legacy build is a pre-12.0 driver: no cuGetProcAddress_v2 at all. */
    void *legacy = dlopen(UFORM_TEST_CUDA_DOUBLE_LEGACY, RTLD_NOW | RTLD_LOCAL);
    CHECK(legacy != NULL);
    CHECK(dlsym(legacy, "cuGetProcAddress_v2") == NULL);
    CHECK(dlsym(legacy, "cuDeviceTotalMem_v2") != NULL);
    dlclose(legacy);
    dlclose(library);
    TEST_DONE();
}
