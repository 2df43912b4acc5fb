/* Issue 16's findings that need a real driver to be sure of, against whatever CUDA driver loads:
 * the machine's own (scripts/device-check), or, registered a second time in tests.cmake, the CUDA
 * driver test double. Without an NVIDIA GPU it is skipped (exit 77).
 *   5  host_is_pinned: cuMemHostAlloc'd and registered memory is pinned, malloc'd memory is not;
 *      what the driver answers for CU_POINTER_ATTRIBUTE_RANGE_START_ADDR on host memory is
 *      printed, since cuda.h documents it for device pointers only.
 *   6  the multicast probe over every GPU: its answer and reason are printed (asserted true where
 *      UFORM_TEST_EXPECT_MULTICAST=1, as for the double's NVSwitch configuration).
 *   7  the calling thread's current context is the same before and after a device function and
 *      after the executor is freed (NULL, then the caller's own).
 *   4  host CPU time (getrusage) of a staged copy of UFORM_TEST_COPY_MIB MiB (default 256) each
 *      way, beside its wall time and one plain memcpy's CPU time, printed for bench/RESULTS.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_loader.h"
#include "cuda_backend_test.h"
#include "gpu/gpu_multicast.h"
#include "test.h"
#include "gpu/cpu_time.h"

static const uform__cuda_execution_api_t *cu;

static uform_cuContext current(void) {
    uform_cuContext context = (uform_cuContext)(uintptr_t)1;
    CHECK_EQ_INT(cu->cuCtxGetCurrent(&context), UFORM_CUDA_SUCCESS);
    return context;
}

static uform_status_t note_context(void *context, const uform_device_slot_t *slot) {
    *(uform_cuContext *)context = current();
    return current() == (uform_cuContext)slot->native_context ? UFORM_STATUS_OK : UFORM_STATUS_MISMATCH;
}

static void finding_5(void) {
    const uform__gpu_backend_t *backend = cuda_backend();
    uform__gpu_device_t device;
    cuda_device_open(&device, backend, 0);
    enum { BYTES = 4 << 20 };
    void *pinned = NULL;
    CHECK_OK(backend->host_alloc(&device, BYTES, &pinned));
    char *ordinary = malloc(BYTES);
    CHECK(ordinary != NULL);
    memset(ordinary, 1, BYTES);
    CHECK(backend->host_is_pinned(&device, pinned, BYTES));
    CHECK(backend->host_is_pinned(&device, (char *)pinned + 4096, BYTES - 8192));
    CHECK(!backend->host_is_pinned(&device, ordinary, BYTES));
    CHECK_EQ_INT(cu->cuCtxSetCurrent((uform_cuContext)device.native_context), UFORM_CUDA_SUCCESS);
    uform_cuDevicePtr start = 0;
    uform_cuResult range = cu->cuPointerGetAttribute(&start, UFORM_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                                     (uform_cuDevicePtr)(uintptr_t)pinned + 100);
    CHECK_EQ_INT(cu->cuMemHostRegister(ordinary, BYTES, 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(cu->cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK(backend->host_is_pinned(&device, ordinary, BYTES));
    CHECK_EQ_INT(cu->cuCtxSetCurrent((uform_cuContext)device.native_context), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(cu->cuMemHostUnregister(ordinary), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(cu->cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    printf("finding 5: cuMemHostAlloc'd and registered memory read as pinned; RANGE_START_ADDR on host memory "
           "answers CUresult %u%s\n",
           range, range == UFORM_CUDA_SUCCESS && start == (uform_cuDevicePtr)(uintptr_t)pinned ? " (its start)" : "");
    free(ordinary);
    backend->host_free(&device, pinned);
    backend->close(&device);
}

static void finding_7(void) {
    CHECK_EQ_INT(cu->cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    int32_t first = 0;
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(&first, 1, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    uform_cuContext during = NULL;
    CHECK_OK(uform_executor_for_devices(executor, NULL, note_context, &during));
    CHECK(during != NULL);
    CHECK(current() == NULL);
    CHECK_OK(uform_executor_free(executor));
    CHECK(current() == NULL);
    printf("finding 7: the caller's thread has no context before, after the device function and after free\n");
}

static void finding_6(size_t count) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    char why[512] = "";
    size_t extent = uform__gpu_multimem_extent(executor);
    bool probe = uform__gpu_multicast_probe(executor, why, sizeof why);
    printf("finding 6: %zu GPUs, NVLink multimem extent %zu, multicast probe %s%s%s\n", count, extent,
           probe ? "yes" : "no", probe ? "" : ": ", why);
    const char *expect = getenv("UFORM_TEST_EXPECT_MULTICAST");
    if (expect && strcmp(expect, "1") == 0) CHECK(probe);
    CHECK_OK(uform_executor_free(executor));
}

static void finding_4(void) {
    const char *mib_text = getenv("UFORM_TEST_COPY_MIB");
    size_t mib = mib_text && atoi(mib_text) > 0 ? (size_t)atoi(mib_text) : 256;
    size_t bytes = mib << 20;
    int32_t first = 0;
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_vram(&first, 1, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0,
                                     &executor));
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, bytes + (1u << 20), &arena));
    void *target = NULL;
    CHECK_OK(uform_arena_allocate(arena, bytes, 4096, &target));
    unsigned char *host = malloc(bytes), *back = malloc(bytes);
    CHECK(host && back);
    for (size_t i = 0; i < bytes; i += 4096) host[i] = (unsigned char)(i >> 12), back[i] = 0;
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, target, host, 4096)); /* staging grown outside */
    double c0 = cpu_ms(), w0 = wall_ms();
    memcpy(back, host, bytes);
    double c1 = cpu_ms(), w1 = wall_ms();
    CHECK_OK(uform_executor_copy_to_device(executor, NULL, 0, target, host, bytes));
    double c2 = cpu_ms(), w2 = wall_ms();
    CHECK_OK(uform_executor_copy_to_host(executor, NULL, back, 0, target, bytes));
    double c3 = cpu_ms(), w3 = wall_ms();
    CHECK(memcmp(back, host, bytes) == 0);
    printf("finding 4: %zu MiB pageable: plain memcpy %.0f ms CPU (%.0f wall); staged to device %.0f ms wall, %.0f ms "
           "CPU; to host %.0f ms wall, %.0f ms CPU\n",
           mib, c1 - c0, w1 - w0, w2 - w1, c2 - c1, w3 - w2, c3 - c2);
    free(host);
    free(back);
    uform_arena_free(arena);
    CHECK_OK(uform_executor_free(executor));
}

int main(void) {
    uform_gpu_device_t devices[64];
    size_t count = 0;
    CHECK_OK(uform_gpu_devices(devices, 64, &count));
    size_t nvidia = 0;
    for (size_t i = 0; i < count && i < 64; i++) nvidia += devices[i].vendor == UFORM_GPU_VENDOR_NVIDIA;
    if (!nvidia || nvidia != count) {
        printf("SKIPPED: %zu GPUs, %zu of them NVIDIA (%s)\n", count, nvidia, uform__cuda_note());
        return 77;
    }
    CHECK_OK(uform__cuda_execution(&cu));
    finding_5();
    finding_7();
    finding_6(count);
    finding_4();
    TEST_DONE();
}
