/* The HIP backend leaves the calling thread's current device as it found it: a caller using HIP
 * on that thread (PyTorch on ROCm) keeps its device there, and the executor's verbs (drain,
 * arenas, copies, free) run the backend on the caller's thread. Every operation but make_current
 * (the device functions' own) makes its device current only for itself, whichever device the
 * caller has current: open, allocations and frees, copies, events, waits, close. */
#include <dlfcn.h>

#include "gpu/hip/hip_abi.h"
#include "hip_backend_test.h"

static uform_hipSetDevice_t set_device;
static uform_hipGetDevice_t get_device;

static int current(void) {
    int device = -1;
    CHECK_EQ_INT(get_device(&device), UFORM_HIP_SUCCESS);
    return device;
}

/* The calling thread's current device must still be `expected` after `what`. */
#define CHECK_CURRENT(expected, what)                                                              \
    do {                                                                                           \
        int current_ = current(), expected_ = (expected);                                          \
        uform_test_checks_++;                                                                      \
        if (current_ != expected_)                                                                 \
            TEST_FAIL_("after %s the calling thread's current device is %d, expected %d", what, current_, expected_); \
    } while (0)

enum { BYTES = 64 * 1024 };

/* Every operation on `device` with the caller's device `mine` current. */
static void operations_keep(const uform__gpu_backend_t *backend, uform__gpu_device_t *device, int mine) {
    void *memory = NULL, *pinned = NULL, *back = NULL;
    CHECK_OK(backend->device_alloc(device, BYTES, &memory));
    CHECK_CURRENT(mine, "device_alloc");
    CHECK_OK(backend->host_alloc(device, BYTES, &pinned));
    CHECK_CURRENT(mine, "host_alloc");
    CHECK_OK(backend->host_alloc(device, BYTES, &back));
    CHECK(backend->host_is_pinned(device, pinned, BYTES));
    CHECK_CURRENT(mine, "host_is_pinned");
    memset(pinned, 0x3C, BYTES);
    memset(back, 0, BYTES);
    CHECK_OK(backend->copy_to_device_async(device, memory, pinned, BYTES));
    CHECK_CURRENT(mine, "copy_to_device_async");
    CHECK_OK(backend->event_record(device, 0));
    CHECK_CURRENT(mine, "event_record");
    CHECK_OK(backend->event_wait(device, 0));
    CHECK_CURRENT(mine, "event_wait");
    CHECK_OK(backend->copy_to_host_async(device, back, memory, BYTES));
    CHECK_CURRENT(mine, "copy_to_host_async");
    CHECK_OK(backend->stream_wait(device));
    CHECK_CURRENT(mine, "stream_wait");
    CHECK(memcmp(back, pinned, BYTES) == 0);
    backend->device_free(device, memory);
    CHECK_CURRENT(mine, "device_free");
    backend->host_free(device, pinned);
    backend->host_free(device, back);
    CHECK_CURRENT(mine, "host_free");
    /* make_current is the one that leaves its device current (for device functions). */
    CHECK_OK(backend->make_current(device));
    CHECK_CURRENT(device->native_device, "make_current");
    CHECK_EQ_INT(set_device(mine), UFORM_HIP_SUCCESS);
}

int main(void) {
    use_hip_double("device memory=64M\ndevice memory=64M\ndevice memory=64M");
    const uform__gpu_backend_t *backend = hip_backend();
    void *library = dlopen(UFORM_TEST_HIP_DOUBLE, RTLD_NOW | RTLD_LOCAL); /* the one uform loaded */
    CHECK(library != NULL);
    set_device = (uform_hipSetDevice_t)dlsym(library, "hipSetDevice");
    get_device = (uform_hipGetDevice_t)dlsym(library, "hipGetDevice");
    CHECK(set_device && get_device);

    /* The caller's device is each of the three in turn; the backend drives the other two (and,
     * once, the caller's own). */
    for (int mine = 0; mine < 3; mine++) {
        CHECK_EQ_INT(set_device(mine), UFORM_HIP_SUCCESS);
        uform__gpu_device_t devices[3];
        for (int i = 0; i < 3; i++) {
            hip_device_open(&devices[i], backend, i);
            CHECK_CURRENT(mine, "open");
        }
        for (int i = 0; i < 3; i++) operations_keep(backend, &devices[i], mine);
        /* Close with scratch and staging still held: freed with the device. */
        for (int i = 0; i < 3; i++) {
            CHECK_OK(backend->device_alloc(&devices[i], 4096, &devices[i].scratch));
            devices[i].scratch_bytes = 4096;
            CHECK_OK(backend->host_alloc(&devices[i], 4096, &devices[i].staging));
            devices[i].staging_bytes = 4096;
            backend->close(&devices[i]);
            CHECK(!devices[i].opened);
            CHECK_CURRENT(mine, "close");
        }
    }
    TEST_DONE();
}
