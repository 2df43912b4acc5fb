/* The CUDA driver test double's peers and multicast objects keep the driver's documented
 * semantics: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED from `multicast=`, peers within one
 * `nvlink=` group (never a device with itself), granularities, a team that devices join once
 * and only from one clique, binds that block until the team is complete, cuMemCreate charged
 * against device memory until the last of its handle and its bindings goes, unbinds that must
 * match their binds, and every refusal (INVALID_VALUE, INVALID_DEVICE, NOT_SUPPORTED) where
 * cuda.h puts it. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "cuda_double_driver.h"
#include "mesh/multicast_double.h"

/* Devices 0 and 1 multicast in NVLink group 0, 2 multicasts alone in group 1, 3 sits in group 0
 * without multicast, 4 has neither; device 0 has 8 MiB so memory runs out. */
static const char config[] = "device multicast=yes nvlink=0 memory=8M\n"
                             "device multicast=yes nvlink=0\n"
                             "device multicast=yes nvlink=1\n"
                             "device nvlink=0\n"
                             "device\n";

static cuda_double_t cu;
static multicast_double_t mc;

static size_t used(int device) {
    uform_cuContext previous = NULL, context = NULL;
    CHECK_CU(cu.cuCtxGetCurrent(&previous), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&context, device), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(context), UFORM_CUDA_SUCCESS);
    size_t free_bytes = 0, total = 0;
    CHECK_CU(cu.cuMemGetInfo(&free_bytes, &total), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(previous), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(device), UFORM_CUDA_SUCCESS);
    return total - free_bytes;
}

static uform_cuMemGenericAllocationHandle create_memory(int device, size_t bytes) {
    uform_cuMemAllocationProp prop = device_memory_prop(device);
    uform_cuMemGenericAllocationHandle handle = 0;
    CHECK_CU(mc.cuMemCreate(&handle, bytes, &prop, 0), UFORM_CUDA_SUCCESS);
    CHECK(handle != 0);
    return handle;
}

static uform_cuMemGenericAllocationHandle create_multicast(unsigned devices, size_t bytes) {
    uform_cuMulticastObjectProp prop = multicast_prop(devices, bytes);
    uform_cuMemGenericAllocationHandle handle = 0;
    CHECK_CU(mc.cuMulticastCreate(&handle, &prop), UFORM_CUDA_SUCCESS);
    CHECK(handle != 0);
    return handle;
}

/* A bind on another thread, to see it wait for the team. */
typedef struct pending_bind_t {
    uform_cuMemGenericAllocationHandle multicast, memory;
    size_t offset;
    atomic_int done;
    uform_cuResult result;
} pending_bind_t;

static void *bind_thread(void *argument) {
    pending_bind_t *bind = argument;
    bind->result = mc.cuMulticastBindMem(bind->multicast, bind->offset, bind->memory, 0, MIB(2), 0);
    atomic_store(&bind->done, 1);
    return NULL;
}

static void sleep_ms(long ms) {
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

static void attributes_and_peers(void) {
    const int expected_multicast[] = {1, 1, 1, 0, 0};
    for (int device = 0; device < 5; device++) {
        int value = -1;
        CHECK_CU(mc.cuDeviceGetAttribute(&value, UFORM_CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, device),
                 UFORM_CUDA_SUCCESS);
        CHECK_EQ_INT(value, expected_multicast[device]);
    }
    /* Peers: one group, both ways; never itself; multicast does not matter. */
    const int expected_peer[5][5] = {{0, 1, 0, 1, 0}, {1, 0, 0, 1, 0}, {0, 0, 0, 0, 0}, {1, 1, 0, 0, 0}, {0}};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++) {
            int can = -1;
            CHECK_CU(mc.cuDeviceCanAccessPeer(&can, a, b), UFORM_CUDA_SUCCESS);
            CHECK_EQ_INT(can, expected_peer[a][b]);
        }
    int can = 7;
    CHECK_CU(mc.cuDeviceCanAccessPeer(NULL, 0, 1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuDeviceCanAccessPeer(&can, 5, 0), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(mc.cuDeviceCanAccessPeer(&can, 0, -1), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ_INT(can, 7);
}

static void granularity_and_creation(void) {
    uform_cuMulticastObjectProp prop = multicast_prop(2, MIB(2));
    size_t granularity = 0;
    /* Without a current context, some device supports multicast: available. */
    CHECK_CU(mc.cuMulticastGetGranularity(&granularity, &prop, UFORM_CU_MULTICAST_GRANULARITY_MINIMUM),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(granularity, MIB(2));
    CHECK_CU(mc.cuMulticastGetGranularity(&granularity, &prop, UFORM_CU_MULTICAST_GRANULARITY_RECOMMENDED),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(granularity, MIB(512));
    CHECK_CU(mc.cuMulticastGetGranularity(NULL, &prop, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastGetGranularity(&granularity, NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastGetGranularity(&granularity, &prop, 2), UFORM_CUDA_ERROR_INVALID_VALUE);
    uform_cuMulticastObjectProp flagged = prop;
    flagged.flags = 1;
    CHECK_CU(mc.cuMulticastGetGranularity(&granularity, &flagged, 0), UFORM_CUDA_ERROR_INVALID_VALUE);

    uform_cuMemGenericAllocationHandle handle = 0;
    CHECK_CU(mc.cuMulticastCreate(NULL, &prop), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastCreate(&handle, NULL), UFORM_CUDA_ERROR_INVALID_VALUE);
    uform_cuMulticastObjectProp bad = multicast_prop(0, MIB(2));
    CHECK_CU(mc.cuMulticastCreate(&handle, &bad), UFORM_CUDA_ERROR_INVALID_VALUE);
    bad = multicast_prop(2, 0);
    CHECK_CU(mc.cuMulticastCreate(&handle, &bad), UFORM_CUDA_ERROR_INVALID_VALUE);
    bad = multicast_prop(2, MIB(3)); /* not a multiple of the granularity */
    CHECK_CU(mc.cuMulticastCreate(&handle, &bad), UFORM_CUDA_ERROR_INVALID_VALUE);
    bad = multicast_prop(2, MIB(2));
    bad.handleTypes = 2; /* CU_MEM_HANDLE_TYPE_WIN32 on Linux */
    CHECK_CU(mc.cuMulticastCreate(&handle, &bad), UFORM_CUDA_ERROR_INVALID_VALUE);
    bad = multicast_prop(2, MIB(2));
    bad.flags = 1;
    CHECK_CU(mc.cuMulticastCreate(&handle, &bad), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(handle, 0);
    bad = multicast_prop(2, MIB(2));
    bad.handleTypes = UFORM_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | UFORM_CU_MEM_HANDLE_TYPE_FABRIC;
    CHECK_CU(mc.cuMulticastCreate(&handle, &bad), UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMemRelease(handle), UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMemRelease(handle), UFORM_CUDA_ERROR_INVALID_VALUE); /* released once */

    /* From a device without multicast: NOT_SUPPORTED; from one with it: fine. */
    uform_cuContext plain = NULL, capable = NULL;
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&plain, 4), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRetain(&capable, 2), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(plain), UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMulticastGetGranularity(&granularity, &prop, 0), UFORM_CUDA_ERROR_NOT_SUPPORTED);
    handle = 0;
    CHECK_CU(mc.cuMulticastCreate(&handle, &prop), UFORM_CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ_INT(handle, 0);
    CHECK_CU(cu.cuCtxSetCurrent(capable), UFORM_CUDA_SUCCESS);
    handle = create_multicast(2, MIB(2));
    CHECK_CU(mc.cuMemRelease(handle), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuCtxSetCurrent(NULL), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(4), UFORM_CUDA_SUCCESS);
    CHECK_CU(cu.cuDevicePrimaryCtxRelease(2), UFORM_CUDA_SUCCESS);
}

static void physical_memory(void) {
    uform_cuMemAllocationProp prop = device_memory_prop(0);
    uform_cuMemGenericAllocationHandle handle = 0;
    /* The allocation granularity cuMemCreate's size must be a multiple of, asked for the prop. */
    size_t granularity = 0;
    CHECK_CU(mc.cuMemGetAllocationGranularity(&granularity, &prop, UFORM_CU_MEM_ALLOC_GRANULARITY_MINIMUM),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(granularity, MIB(2));
    CHECK_CU(mc.cuMemGetAllocationGranularity(&granularity, &prop, UFORM_CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
             UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(granularity, MIB(2));
    CHECK_CU(mc.cuMemGetAllocationGranularity(NULL, &prop, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemGetAllocationGranularity(&granularity, NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemGetAllocationGranularity(&granularity, &prop, 2), UFORM_CUDA_ERROR_INVALID_VALUE);
    uform_cuMemAllocationProp nowhere = device_memory_prop(99);
    CHECK_CU(mc.cuMemGetAllocationGranularity(&granularity, &nowhere, 0), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(mc.cuMemCreate(NULL, MIB(2), &prop, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemCreate(&handle, MIB(2), NULL, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemCreate(&handle, 0, &prop, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemCreate(&handle, MIB(1), &prop, 0), UFORM_CUDA_ERROR_INVALID_VALUE); /* granularity */
    CHECK_CU(mc.cuMemCreate(&handle, MIB(2), &prop, 1), UFORM_CUDA_ERROR_INVALID_VALUE); /* flags */
    uform_cuMemAllocationProp bad = prop;
    bad.type = 0;
    CHECK_CU(mc.cuMemCreate(&handle, MIB(2), &bad, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    bad = prop;
    bad.location.type = 2; /* CU_MEM_LOCATION_TYPE_HOST: not emulated */
    CHECK_CU(mc.cuMemCreate(&handle, MIB(2), &bad, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    bad = device_memory_prop(5);
    CHECK_CU(mc.cuMemCreate(&handle, MIB(2), &bad, 0), UFORM_CUDA_ERROR_INVALID_DEVICE);
    bad = device_memory_prop(-1);
    CHECK_CU(mc.cuMemCreate(&handle, MIB(2), &bad, 0), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ_INT(handle, 0);

    /* Charged against the device, with no context needed, until released. */
    CHECK_EQ_INT(used(0), 0);
    uform_cuMemGenericAllocationHandle a = create_memory(0, MIB(6));
    CHECK_EQ_INT(used(0), MIB(6));
    CHECK_EQ_INT(used(1), 0);
    CHECK_CU(mc.cuMemCreate(&handle, MIB(4), &prop, 0), UFORM_CUDA_ERROR_OUT_OF_MEMORY); /* 8 MiB device */
    uform_cuMemGenericAllocationHandle b = create_memory(0, MIB(2));
    CHECK(b != a);
    CHECK_EQ_INT(used(0), MIB(8));
    CHECK_CU(mc.cuMemRelease(a), UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMemRelease(b), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(0), 0);
    CHECK_CU(mc.cuMemRelease(a), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemRelease(0), UFORM_CUDA_ERROR_INVALID_VALUE);
}

static void team(void) {
    uform_cuMemGenericAllocationHandle object = create_multicast(2, MIB(4));
    CHECK_CU(mc.cuMulticastAddDevice(object + 1000, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastAddDevice(object, 5), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(mc.cuMulticastAddDevice(object, 3), UFORM_CUDA_ERROR_NOT_SUPPORTED); /* no multicast */
    CHECK_CU(mc.cuMulticastAddDevice(object, 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMulticastAddDevice(object, 0), UFORM_CUDA_ERROR_INVALID_VALUE); /* twice */
    CHECK_CU(mc.cuMulticastAddDevice(object, 2), UFORM_CUDA_ERROR_INVALID_DEVICE); /* another clique */

    /* A bind waits until the whole team has joined. */
    uform_cuMemGenericAllocationHandle memory0 = create_memory(0, MIB(2));
    uform_cuMemGenericAllocationHandle memory1 = create_memory(1, MIB(4));
    pending_bind_t pending = {.multicast = object, .memory = memory0};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, bind_thread, &pending) == 0);
    sleep_ms(100);
    CHECK_EQ_INT(atomic_load(&pending.done), 0);
    CHECK_CU(mc.cuMulticastAddDevice(object, 1), UFORM_CUDA_SUCCESS);
    pthread_join(thread, NULL);
    CHECK_CU(pending.result, UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMulticastAddDevice(object, 4), UFORM_CUDA_ERROR_INVALID_VALUE); /* the team is full */

    /* Bind's refusals. */
    uform_cuMemGenericAllocationHandle memory2 = create_memory(2, MIB(2));
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory2, 0, MIB(2), 0), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(mc.cuMulticastBindMem(object, MIB(1), memory1, 0, MIB(2), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory1, MIB(1), MIB(2), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory1, 0, MIB(1), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory1, 0, 0, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, MIB(4), memory1, 0, MIB(2), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory1, MIB(2), MIB(4), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory1, 0, MIB(2), 1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, 0, object, 0, MIB(2), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(memory1, 0, memory1, 0, MIB(2), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    /* Device 0 has [0, 2 MiB) bound: an overlapping bind of device 0 is refused, another device's
     * or another range's is not. */
    uform_cuMemGenericAllocationHandle memory0b = create_memory(0, MIB(4));
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory0b, 0, MIB(4), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastBindMem(object, MIB(2), memory0b, MIB(2), MIB(2), 0), UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory1, 0, MIB(4), 0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(0), MIB(6));
    CHECK_EQ_INT(used(1), MIB(4));

    /* Unbinds must match their binds, of a device in the team. */
    CHECK_CU(mc.cuMulticastUnbind(object, 0, 0, MIB(4)), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastUnbind(object, 0, MIB(1), MIB(2)), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastUnbind(object, 0, 0, 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastUnbind(object, 0, MIB(2), MIB(4)), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastUnbind(object, 2, 0, MIB(2)), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(mc.cuMulticastUnbind(object, 9, 0, MIB(2)), UFORM_CUDA_ERROR_INVALID_DEVICE);
    CHECK_CU(mc.cuMulticastUnbind(memory0, 0, 0, MIB(2)), UFORM_CUDA_ERROR_INVALID_VALUE);

    /* Released while bound, memory stays until unbound; then it goes. */
    CHECK_CU(mc.cuMemRelease(memory0), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(0), MIB(6));
    CHECK_CU(mc.cuMulticastBindMem(object, 0, memory0, 0, MIB(2), 0), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastUnbind(object, 0, 0, MIB(2)), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(0), MIB(4));
    CHECK_CU(mc.cuMulticastUnbind(object, 0, 0, MIB(2)), UFORM_CUDA_ERROR_INVALID_VALUE); /* once */
    /* Releasing the object drops its bindings: released memory goes with it, held memory stays. */
    CHECK_CU(mc.cuMemRelease(memory0b), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(0), MIB(4));
    CHECK_CU(mc.cuMemRelease(object), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(0), 0);
    CHECK_EQ_INT(used(1), MIB(4));
    CHECK_CU(mc.cuMulticastAddDevice(object, 1), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMulticastUnbind(object, 1, 0, MIB(4)), UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemRelease(memory1), UFORM_CUDA_SUCCESS);
    CHECK_CU(mc.cuMemRelease(memory2), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(1), 0);
    CHECK_EQ_INT(used(2), 0);

    /* A bind waiting for a team whose object is released answers INVALID_VALUE. */
    object = create_multicast(2, MIB(2));
    CHECK_CU(mc.cuMulticastAddDevice(object, 0), UFORM_CUDA_SUCCESS);
    pending_bind_t orphan = {.multicast = object, .memory = create_memory(0, MIB(2))};
    CHECK(pthread_create(&thread, NULL, bind_thread, &orphan) == 0);
    sleep_ms(50);
    CHECK_EQ_INT(atomic_load(&orphan.done), 0);
    CHECK_CU(mc.cuMemRelease(object), UFORM_CUDA_SUCCESS);
    pthread_join(thread, NULL);
    CHECK_CU(orphan.result, UFORM_CUDA_ERROR_INVALID_VALUE);
    CHECK_CU(mc.cuMemRelease(orphan.memory), UFORM_CUDA_SUCCESS);
    CHECK_EQ_INT(used(0), 0);
}

int main(void) {
    cu = cuda_double_open(config);
    mc = multicast_double_bind();
    attributes_and_peers();
    granularity_and_creation();
    physical_memory();
    team();
    TEST_DONE();
}
