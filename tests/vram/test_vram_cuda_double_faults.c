/* Driver failures against the CUDA driver test double: out of device memory is OUT_OF_MEMORY
 * naming the driver's error, and nothing else changes; a sticky fault (an illegal address the
 * double reports asynchronously, as the driver does) is DEVICE_FAULT from then on for every
 * call of the executor, drain and arenas included, until it is freed; free still works. A
 * fork()ed child answers FORKED. */
#include <sys/wait.h>
#include <unistd.h>

#include "vram_double.h"

/* The 2nd cuMemAlloc of the process fails; the 1st stream operation queued faults its context. */
static const char config[] = "device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\nfault alloc=2\nfault sticky=1\n";
static cuda_double_t cu;

static uform_status_t enqueue_memset(void *context, const uform_device_slot_t *slot) {
    void **targets = context;
    if (slot->device != 0) return UFORM_STATUS_OK;
    CHECK_CU(cu.cuMemsetD8Async((uform_cuDevicePtr)(uintptr_t)targets[0], 1, 256, (uform_cuStream)slot->stream),
             UFORM_CUDA_SUCCESS); /* the enqueue succeeds: the fault is reported when it runs */
    return UFORM_STATUS_OK;
}

static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

static uform_status_t fork_in_child(uform_executor_t *executor, uform_arena_t *arena) {
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        /* No driver call in the child: every call answers FORKED. */
        void *target = NULL;
        char host[64] = {0};
        if (uform_arena_allocate(arena, 64, 0, &target) != UFORM_STATUS_OK) _exit(10);
        if (uform_executor_copy_to_device(executor, NULL, 0, target, host, 64) != UFORM_STATUS_FORKED) _exit(11);
        if (uform_executor_for_devices(executor, NULL, enqueue_memset, &target) != UFORM_STATUS_FORKED) _exit(12);
        if (uform_executor_drain(executor, UFORM_MOOD_PARKED) != UFORM_STATUS_FORKED) _exit(13);
        uform_arena_t *other = NULL;
        if (uform_arena_new_in(executor, 4096, &other) != UFORM_STATUS_FORKED) _exit(14);
        uform_arena_free(arena); /* host bookkeeping only */
        if (uform_executor_free(executor) != UFORM_STATUS_FORKED) _exit(15);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK_EQ_INT(WEXITSTATUS(status), 0);
    return UFORM_STATUS_OK;
}

int main(void) {
    cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);

    /* Out of memory: the arena's second device fails; the first device's share is given back. */
    uform_arena_t *arena = NULL;
    CHECK_STATUS(uform_arena_new_in(executor, 1u << 20, &arena), UFORM_STATUS_OUT_OF_MEMORY);
    CHECK(arena == NULL);
    CHECK_ERROR_NAMES("CUDA_ERROR_OUT_OF_MEMORY");
    CHECK_ERROR_NAMES("cuMemAlloc_v2");
    CHECK_EQ_INT(vram_device_used(&cu, 0), 0);
    /* More than the device has: the same answer, from the driver itself. */
    CHECK_STATUS(uform_arena_new_in(executor, 65u << 20, &arena), UFORM_STATUS_OUT_OF_MEMORY);
    CHECK_ERROR_NAMES("CUDA_ERROR_OUT_OF_MEMORY");
    /* Nothing else broke: the next arena works. */
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    CHECK_EQ_INT(uform_arena_devices(arena), 2);

    CHECK_OK(fork_in_child(executor, arena));

    /* The sticky fault: the memset the device function queued faults device 0's context. */
    void *target = NULL;
    CHECK_OK(uform_arena_allocate(arena, 256, 0, &target));
    CHECK_STATUS(uform_executor_for_devices(executor, NULL, enqueue_memset, &target), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("CUDA_ERROR_ILLEGAL_ADDRESS");
    /* From now on: every call, the host verbs too, drain and new arenas. */
    char host[256] = {0};
    CHECK_STATUS(uform_executor_copy_to_device(executor, NULL, 1, target, host, sizeof host),
                 UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK_STATUS(uform_executor_for_n(executor, NULL, 4, nothing, NULL), UFORM_STATUS_DEVICE_FAULT);
    uform_deferred_t *deferred = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &deferred;
    CHECK_OK(uform_executor_for_n(executor, &call, 4, nothing, NULL)); /* queued... */
    CHECK_STATUS(uform_deferred_wait(deferred, -1), UFORM_STATUS_DEVICE_FAULT); /* ...and refused */
    CHECK_ERROR_NAMES("CUDA_ERROR_ILLEGAL_ADDRESS"); /* the detail reaches the waiting thread */
    uform_deferred_free(deferred);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_DEVICE_FAULT);
    uform_arena_t *another = NULL;
    CHECK_STATUS(uform_arena_new_in(executor, 4096, &another), UFORM_STATUS_DEVICE_FAULT);
    /* Free releases everything, the faulted device included; the arena closes it last. */
    CHECK_OK(uform_executor_free(executor));
    uform_arena_free(arena);
    TEST_DONE();
}
