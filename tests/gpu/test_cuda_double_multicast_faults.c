/* The CUDA driver test double's `fault multicast=<step>[@<ordinal>][:<CUDA error>]`: every call of
 * that step (concerning that device) answers the error, after the call's own argument checks,
 * and does nothing; other steps and devices are untouched. `fault missing=` hides a multicast
 * entry point from cuGetProcAddress; a version older than its ABI is VERSION_NOT_SUFFICIENT; the
 * legacy build (no cuGetProcAddress) exports them for dlsym. Malformed multicast lines and keys
 * refuse the whole configuration (each tried in a child process: the double reads it once). */
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_double_driver.h"
#include "mesh/multicast_double.h"

/* In a fresh child: the double at `path` configured with `text` answers `expected` to cuInit. */
static void check_init_in_child(const char *path, const char *text, uform_cuResult expected) {
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        setenv("UFORM_CUDA_DOUBLE_CONFIG", text, 1);
        void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        uform_cuInit_t init = library ? (uform_cuInit_t)dlsym(library, "cuInit") : NULL;
        _exit(init && init(0) == expected ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        TEST_FAIL_("configuration \"%s\": cuInit did not answer %u", text, expected);
}

int main(void) {
    /* Refusals (children), before this process loads the double. */
    const char *const refused[] = {
        "device multicast=maybe",
        "device nvlink=x",
        "device nvlink=-1",
        "device nvlink=",
        "device\nfault multicast=frobnicate",
        "device\nfault multicast=",
        "device\nfault multicast=create@1",
        "device\nfault multicast=granularity@0",
        "device\nfault multicast=bind@x",
        "device\nfault multicast=bind@",
        "device\nfault multicast=bind:CUDA_ERROR_NOPE",
        "device\nfault multicast=bind:0",
        "device\nfault multicast=bind\nfault multicast=bind\nfault multicast=bind\nfault multicast=bind\n"
        "fault multicast=bind\nfault multicast=bind\nfault multicast=bind\nfault multicast=bind\nfault multicast=bind",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        check_init_in_child(UFORM_TEST_CUDA_DOUBLE, refused[i], UFORM_CUDA_ERROR_UNKNOWN);
    check_init_in_child(UFORM_TEST_CUDA_DOUBLE,
                        "device multicast=yes nvlink=3\nfault multicast=bind@1:CUDA_ERROR_SYSTEM_NOT_READY\n"
                        "fault multicast=unbind:801\nfault multicast=add@0",
                        UFORM_CUDA_SUCCESS);

    /* The legacy build has no cuGetProcAddress: the entry points are there for dlsym. */
    void *legacy = dlopen(UFORM_TEST_CUDA_DOUBLE_LEGACY, RTLD_NOW | RTLD_LOCAL);
    CHECK(legacy != NULL);
#define EXPORTED_(field, base, version, symbol, type) CHECK(dlsym(legacy, symbol) != NULL);
    UFORM_CUDA_MULTICAST_ENTRY_POINTS(EXPORTED_)
#undef EXPORTED_

    cuda_double_t cu = cuda_double_open("device multicast=yes nvlink=0\n"
                                        "device multicast=yes nvlink=0\n"
                                        "device multicast=yes nvlink=0\n"
                                        "fault multicast=bind@1:CUDA_ERROR_SYSTEM_NOT_READY\n"
                                        "fault multicast=memcreate@2\n"
                                        "fault multicast=unbind@0:CUDA_ERROR_ILLEGAL_STATE\n"
                                        "fault missing=cuMulticastBindMem\n");
    (void)cu;
    void *library = dlopen(UFORM_TEST_CUDA_DOUBLE, RTLD_NOW | RTLD_LOCAL);
    uform_cuGetProcAddress_t get_proc = (uform_cuGetProcAddress_t)dlsym(library, "cuGetProcAddress_v2");
    CHECK(get_proc != NULL);
    /* Hidden, too old, and found. */
    void *pointer = (void *)1;
    uform_cuProcAddressQueryResult found = 99;
    CHECK_CU(get_proc("cuMulticastBindMem", &pointer, 12080, 0, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == NULL);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK_CU(get_proc("cuMulticastCreate", &pointer, 12000, 0, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == NULL);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK_CU(get_proc("cuMemCreate", &pointer, 10010, 0, &found), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK_CU(get_proc("cuMulticastCreate", &pointer, 12010, 0, &found), UFORM_CUDA_SUCCESS);
    CHECK(pointer == dlsym(library, "cuMulticastCreate"));
    CHECK_EQ_INT(found, UFORM_CU_GET_PROC_ADDRESS_SUCCESS);
    /* Hidden from cuGetProcAddress only: the symbol is still exported, as an old driver's is not,
     * but uform never dlsyms where cuGetProcAddress exists. */
    uform_cuMulticastBindMem_t bind = (uform_cuMulticastBindMem_t)dlsym(library, "cuMulticastBindMem");
    uform_cuMulticastCreate_t create = (uform_cuMulticastCreate_t)dlsym(library, "cuMulticastCreate");
    uform_cuMulticastAddDevice_t add = (uform_cuMulticastAddDevice_t)dlsym(library, "cuMulticastAddDevice");
    uform_cuMulticastUnbind_t unbind = (uform_cuMulticastUnbind_t)dlsym(library, "cuMulticastUnbind");
    uform_cuMemCreate_t mem_create = (uform_cuMemCreate_t)dlsym(library, "cuMemCreate");
    uform_cuMemRelease_t release = (uform_cuMemRelease_t)dlsym(library, "cuMemRelease");
    CHECK(bind && create && add && unbind && mem_create && release);

    uform_cuMulticastObjectProp prop = multicast_prop(3, MIB(2));
    uform_cuMemGenericAllocationHandle object = 0, memory[3] = {0};
    CHECK_CU(create(&object, &prop), UFORM_CUDA_SUCCESS);
    for (int device = 0; device < 3; device++) CHECK_CU(add(object, device), UFORM_CUDA_SUCCESS);
    uform_cuMemAllocationProp memory_prop = device_memory_prop(0);
    CHECK_CU(mem_create(&memory[0], MIB(2), &memory_prop, 0), UFORM_CUDA_SUCCESS);
    memory_prop = device_memory_prop(1);
    CHECK_CU(mem_create(&memory[1], MIB(2), &memory_prop, 0), UFORM_CUDA_SUCCESS);
    memory_prop = device_memory_prop(2);
    CHECK_CU(mem_create(&memory[2], MIB(2), &memory_prop, 0), UFORM_CUDA_ERROR_NOT_PERMITTED); /* the default */
    CHECK_CU(mem_create(&memory[2], MIB(1), &memory_prop, 0), UFORM_CUDA_ERROR_INVALID_VALUE); /* arguments first */
    CHECK_EQ_INT(memory[2], 0);
    CHECK_CU(bind(object, 0, memory[0], 0, MIB(2), 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(bind(object, 0, memory[1], 0, MIB(2), 0), UFORM_CUDA_ERROR_SYSTEM_NOT_READY);
    CHECK_CU(bind(object, 0, memory[1], 0, MIB(2), 1), UFORM_CUDA_ERROR_INVALID_VALUE); /* arguments first */
    CHECK_CU(unbind(object, 1, 0, MIB(2)), UFORM_CUDA_ERROR_INVALID_VALUE);             /* nothing was bound */
    CHECK_CU(unbind(object, 0, 0, MIB(2)), UFORM_CUDA_ERROR_ILLEGAL_STATE);             /* and stays bound: */
    CHECK_CU(bind(object, 0, memory[0], 0, MIB(2), 0), UFORM_CUDA_ERROR_INVALID_VALUE); /* overlaps itself */
    CHECK_CU(release(memory[0]), UFORM_CUDA_SUCCESS);
    CHECK_CU(release(memory[1]), UFORM_CUDA_SUCCESS);
    CHECK_CU(release(object), UFORM_CUDA_SUCCESS);
    TEST_DONE();
}
