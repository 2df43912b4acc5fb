/* The HIP runtime test double itself, called directly through dlopen/dlsym: lazy initialisation,
 * device queries, a current device per thread, memory rules, pointer attributes, streams that run
 * their work in order on their own thread (asynchronously: nothing runs while a host function
 * holds the stream at a gate), NOT_READY while busy, events (complete when never recorded,
 * NOT_READY while pending), destroyed handles, and error names. */
#include <pthread.h>
#include <stdatomic.h>

#include "hip_double_runtime.h"

static hip_double_t hip;

static atomic_int order_seen[3];
static atomic_int order_next;
static void note_order(void *argument) { order_seen[(intptr_t)argument] = ++order_next; }

static void *other_thread(void *argument) {
    int *device = argument;
    *device = -1;
    hip.hipGetDevice(device); /* a new thread starts on device 0 */
    return NULL;
}

int main(void) {
    hip = hip_double_open(
        "device arch=gfx942:sramecc+:xnack- cus=304 memory=1M pci=0000:05:00.0 name=AMD Instinct MI300X\n"
        "device arch=gfx1100 cus=48 memory=1M pci=0000:0A:00.0 name=Radeon");
    CHECK(dlsym(hip.library, "hipGetDeviceProperties") == NULL); /* only ROCm 6's versioned entry */

    /* Initialisation is lazy (no hipInit needed), hipInit takes flags 0 only. */
    int count = -1;
    CHECK_HIP(hip.hipGetDeviceCount(&count), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(count, 2);
    CHECK_HIP(hip.hipInit(1), UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipInit(0), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipGetDeviceCount(NULL), UFORM_HIP_ERROR_INVALID_VALUE);

    uform_hipDeviceProp_R0600 properties;
    CHECK_HIP(hip.hipGetDevicePropertiesR0600(&properties, 1), UFORM_HIP_SUCCESS);
    CHECK_EQ_STR(properties.name, "Radeon");
    CHECK_EQ_STR(properties.gcnArchName, "gfx1100");
    CHECK_EQ_INT(properties.major, 11);
    CHECK_EQ_INT(properties.minor, 0);
    CHECK_EQ_INT(properties.multiProcessorCount, 48);
    CHECK_EQ_INT(properties.pciBusID, 10);
    CHECK_HIP(hip.hipGetDevicePropertiesR0600(&properties, 2), UFORM_HIP_ERROR_INVALID_DEVICE);
    CHECK_HIP(hip.hipGetDevicePropertiesR0600(NULL, 0), UFORM_HIP_ERROR_INVALID_VALUE);
    char bus_id[16];
    CHECK_HIP(hip.hipDeviceGetPCIBusId(bus_id, sizeof bus_id, 1), UFORM_HIP_SUCCESS);
    CHECK_EQ_STR(bus_id, "0000:0a:00.0");

    /* The current device is per thread. */
    CHECK_HIP(hip.hipSetDevice(2), UFORM_HIP_ERROR_INVALID_DEVICE);
    CHECK_HIP(hip.hipSetDevice(1), UFORM_HIP_SUCCESS);
    int device = -1, seen = -1;
    CHECK_HIP(hip.hipGetDevice(&device), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(device, 1);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, other_thread, &seen) == 0);
    pthread_join(thread, NULL);
    CHECK_EQ_INT(seen, 0);
    CHECK_HIP(hip.hipSetDevice(0), UFORM_HIP_SUCCESS);

    /* Memory: 0 bytes is hipSuccess and NULL; the device's size bounds it; frees. */
    void *memory = &memory;
    CHECK_HIP(hip.hipMalloc(&memory, 0), UFORM_HIP_SUCCESS);
    CHECK(memory == NULL);
    CHECK_HIP(hip.hipMalloc(&memory, 2 << 20), UFORM_HIP_ERROR_OUT_OF_MEMORY);
    CHECK_HIP(hip.hipMalloc(&memory, 4096), UFORM_HIP_SUCCESS);
    size_t free_bytes = 0, total_bytes = 0;
    CHECK_HIP(hip.hipMemGetInfo(&free_bytes, &total_bytes), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(total_bytes, 1 << 20);
    CHECK_EQ_INT(free_bytes, (1 << 20) - 4096);
    void *pinned = NULL;
    CHECK_HIP(hip.hipHostMalloc(&pinned, 4096, 0x8), UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipHostMalloc(&pinned, 4096, UFORM_HIP_HOST_MALLOC_PORTABLE), UFORM_HIP_SUCCESS);
    uform_hipPointerAttribute attributes;
    CHECK_HIP(hip.hipPointerGetAttributes(&attributes, (char *)memory + 10), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(attributes.type, UFORM_HIP_MEMORY_TYPE_DEVICE);
    CHECK_HIP(hip.hipPointerGetAttributes(&attributes, pinned), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(attributes.type, UFORM_HIP_MEMORY_TYPE_HOST);
    CHECK(attributes.hostPointer == pinned);
    attributes.type = 77;
    CHECK_HIP(hip.hipPointerGetAttributes(&attributes, &attributes), UFORM_HIP_SUCCESS); /* ordinary memory */
    CHECK_EQ_INT(attributes.type, UFORM_HIP_MEMORY_TYPE_UNREGISTERED);

    /* Streams: in order, asynchronous behind a gate. */
    uform_hipStream stream = NULL;
    CHECK_HIP(hip.hipStreamCreateWithFlags(&stream, 2), UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipStreamCreateWithFlags(&stream, UFORM_HIP_STREAM_NON_BLOCKING), UFORM_HIP_SUCCESS);
    uform_hipEvent event = NULL;
    CHECK_HIP(hip.hipEventCreateWithFlags(&event, UFORM_HIP_EVENT_INTERPROCESS), UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipEventCreateWithFlags(&event, UFORM_HIP_EVENT_DISABLE_TIMING), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipEventQuery(event), UFORM_HIP_SUCCESS);       /* never recorded: complete */
    CHECK_HIP(hip.hipEventSynchronize(event), UFORM_HIP_SUCCESS);
    static gate_t gate = GATE_INIT;
    memset(pinned, 9, 4096);
    unsigned char host[4096];
    memset(host, 0, sizeof host);
    CHECK_HIP(hip.hipLaunchHostFunc(stream, gate_wait, &gate), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipLaunchHostFunc(stream, note_order, (void *)(intptr_t)0), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipMemcpyAsync(memory, pinned, 4096, UFORM_HIP_MEMCPY_HOST_TO_DEVICE, stream), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipMemcpyAsync(host, memory, 4096, UFORM_HIP_MEMCPY_DEVICE_TO_HOST, stream), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipEventRecord(event, stream), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipLaunchHostFunc(stream, note_order, (void *)(intptr_t)1), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipStreamQuery(stream), UFORM_HIP_ERROR_NOT_READY);
    CHECK_HIP(hip.hipEventQuery(event), UFORM_HIP_ERROR_NOT_READY);
    CHECK_EQ_INT(host[0], 0); /* nothing ran behind the gate */
    CHECK_EQ_INT(order_next, 0);
    gate_open(&gate);
    CHECK_HIP(hip.hipEventSynchronize(event), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(host[4095], 9);
    CHECK_HIP(hip.hipStreamSynchronize(stream), UFORM_HIP_SUCCESS);
    CHECK_EQ_INT(order_seen[0], 1);
    CHECK_EQ_INT(order_seen[1], 2);
    CHECK_HIP(hip.hipStreamQuery(stream), UFORM_HIP_SUCCESS);

    /* Copies are checked up front: a device side outside one allocation, a bad direction. */
    CHECK_HIP(hip.hipMemcpyAsync((char *)memory + 4000, pinned, 200, UFORM_HIP_MEMCPY_HOST_TO_DEVICE, stream),
              UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipMemcpyAsync(memory, pinned, 16, 7, stream), UFORM_HIP_ERROR_INVALID_MEMCPY_DIRECTION);
    CHECK_HIP(hip.hipMemcpyAsync(memory, pinned, 0, UFORM_HIP_MEMCPY_HOST_TO_DEVICE, stream), UFORM_HIP_SUCCESS);
    /* The NULL stream works, and so does a device synchronisation. */
    CHECK_HIP(hip.hipMemcpyAsync(host, memory, 16, UFORM_HIP_MEMCPY_DEVICE_TO_HOST, NULL), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipDeviceSynchronize(), UFORM_HIP_SUCCESS);

    /* Destroyed handles and frees. */
    CHECK_HIP(hip.hipEventDestroy(event), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipEventDestroy(event), UFORM_HIP_ERROR_INVALID_HANDLE);
    CHECK_HIP(hip.hipEventQuery(event), UFORM_HIP_ERROR_INVALID_HANDLE);
    CHECK_HIP(hip.hipStreamDestroy(stream), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipStreamDestroy(stream), UFORM_HIP_ERROR_INVALID_HANDLE);
    CHECK_HIP(hip.hipStreamSynchronize(stream), UFORM_HIP_ERROR_INVALID_HANDLE);
    CHECK_HIP(hip.hipFree((char *)memory + 1), UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipFree(memory), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipFree(memory), UFORM_HIP_ERROR_INVALID_VALUE);
    CHECK_HIP(hip.hipFree(NULL), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipHostFree(pinned), UFORM_HIP_SUCCESS);
    CHECK_HIP(hip.hipHostFree(pinned), UFORM_HIP_ERROR_INVALID_VALUE);

    CHECK_EQ_STR(hip.hipGetErrorName(UFORM_HIP_ERROR_OUT_OF_MEMORY), "hipErrorOutOfMemory");
    CHECK_EQ_STR(hip.hipGetErrorName(UFORM_HIP_ERROR_ILLEGAL_ADDRESS), "hipErrorIllegalAddress");
    CHECK_EQ_STR(hip.hipGetErrorName(12345), "hipErrorUnknown");
    TEST_DONE();
}
