/* Every error cuda.h says leaves the process inconsistent ("any further CUDA work will return the
 * same error", or the process "must be terminated and relaunched") makes a VRAM executor
 * faulted, not only CUDA_ERROR_ILLEGAL_ADDRESS (the faults test): here
 * CUDA_ERROR_INVALID_ADDRESS_SPACE (717), CUDA_ERROR_EXTERNAL_DEVICE (911), CUDA_ERROR_CONTAINED
 * (226), CUDA_ERROR_TENSOR_MEMORY_LEAK (721) and CUDA_ERROR_MPS_CLIENT_TERMINATED (810), which
 * the double's `fault sticky=N:<error>` reports instead. The verb that meets it answers
 * DEVICE_FAULT; so does every later one, a verb on the healthy device 1 and a host-only verb
 * included (only the executor's own sticky state answers those), and drain; every message names
 * the driver's error. The double reads its configuration once per process, so each code runs
 * in a child of its own. */
#include <sys/wait.h>
#include <unistd.h>

#include "vram_double.h"

static uform_status_t nothing(void *context, size_t task, size_t thread) { return UFORM_STATUS_OK; }

/* In a child: the first stream operation of the process (a staged copy's DMA to device 0) faults
 * device 0's context with `fault`'s error, named `name`. Exits 0 when every check holds. */
static void run_scenario(const char *fault, const char *name) {
    char config[256];
    snprintf(config, sizeof config, "device cc=9.0 memory=64M\ndevice cc=9.0 memory=64M\nfault sticky=1:%s\n",
             fault);
    setenv("UFORM_STAGING_CHUNK_BYTES", "65536", 1);
    use_cuda_double(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    void *on_zero = NULL, *on_one = NULL;
    CHECK_OK(uform_arena_allocate(arena, 4096, 256, &on_zero));
    CHECK_OK(uform_arena_device_pointer(arena, 1, on_zero, &on_one));
    unsigned char host[4096];
    fill(host, sizeof host, 3);

    /* The verb whose DMA faults: the driver reports it at the stream's synchronisation. */
    CHECK_STATUS(uform_executor_copy_to_device(executor, NULL, 0, on_zero, host, sizeof host),
                 UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES(name);
    /* Sticky for the executor: device 1's context is healthy, yet its copy is refused... */
    CHECK_STATUS(uform_executor_copy_to_device(executor, NULL, 1, on_one, host, sizeof host),
                 UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES(name);
    CHECK_ERROR_NAMES("stays so until freed");
    /* ...and so is a verb that touches no device, with the fault's own words and its name, and
     * drain. */
    CHECK_STATUS(uform_executor_for_n(executor, NULL, 4, nothing, NULL), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES(name);
    CHECK_ERROR_NAMES("uform_executor_for_n");
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES(name);
    CHECK_STATUS(uform_executor_copy_to_host(executor, NULL, host, 0, on_zero, sizeof host),
                 UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES(name);
    /* Free still releases everything; the arena closes the executor last. */
    CHECK_OK(uform_executor_free(executor));
    uform_arena_free(arena);
}

static void in_child(const char *fault, const char *name) {
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        run_scenario(fault, name); /* a failed check exits 1 */
        fflush(NULL);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) TEST_FAIL_("fault sticky=1:%s: the child exited %d", fault, WEXITSTATUS(status));
}

int main(void) {
    in_child("717", "CUDA_ERROR_INVALID_ADDRESS_SPACE");  /* by number */
    in_child("CUDA_ERROR_EXTERNAL_DEVICE", "CUDA_ERROR_EXTERNAL_DEVICE"); /* by name (911) */
    in_child("226", "CUDA_ERROR_CONTAINED");
    in_child("721", "CUDA_ERROR_TENSOR_MEMORY_LEAK");
    in_child("810", "CUDA_ERROR_MPS_CLIENT_TERMINATED");
    TEST_DONE();
}
