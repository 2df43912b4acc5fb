/* A typo in a test's configuration of the CUDA driver test double must fail loudly, not
 * emulate another machine: the double refuses it (cuInit answers CUDA_ERROR_UNKNOWN and it
 * says why on stderr), and uform reports that as a driver failure. The `link bandwidth=` line
 * takes a positive size with K/M/G/T suffixes and nothing else, `fault sticky=` a positive count
 * and optionally `:` and a CUDA error other than success; each bad line is tried in a
 * child process of its own, since the double reads its configuration once per process. */
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_double.h"
#include "gpu/cuda/cuda_abi.h"

/* In a child: the double with `config` answers `expected` from cuInit, and its stderr names
 * `reason` (NULL: says nothing). */
static void check_config(const char *config, uform_cuResult expected, const char *reason) {
    int pipe_ends[2];
    CHECK(pipe(pipe_ends) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        dup2(pipe_ends[1], STDERR_FILENO);
        close(pipe_ends[0]);
        close(pipe_ends[1]);
        setenv("UFORM_CUDA_DOUBLE_CONFIG", config, 1);
        void *library = dlopen(UFORM_TEST_CUDA_DOUBLE, RTLD_NOW | RTLD_LOCAL);
        if (!library) _exit(90);
        uform_cuInit_t init = (uform_cuInit_t)dlsym(library, "cuInit");
        _exit(init && init(0) == expected ? 0 : 91);
    }
    close(pipe_ends[1]);
    char said[1024] = "";
    size_t length = 0;
    for (ssize_t n; (n = read(pipe_ends[0], said + length, sizeof said - 1 - length)) > 0;) length += (size_t)n;
    said[length] = '\0';
    close(pipe_ends[0]);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        TEST_FAIL_("\"%s\": cuInit did not answer %u (child status %d; stderr: %s)", config, expected, status, said);
    if (reason && !strstr(said, reason)) TEST_FAIL_("\"%s\": stderr \"%s\" does not name \"%s\"", config, said, reason);
    if (!reason && length) TEST_FAIL_("\"%s\" was accepted but the double said: %s", config, said);
}

int main(void) {
    /* The link line: accepted with a positive size, every suffix. */
    check_config("device\nlink bandwidth=1G", UFORM_CUDA_SUCCESS, NULL);
    check_config("device\nlink bandwidth=25000000000", UFORM_CUDA_SUCCESS, NULL);
    check_config("device\nlink bandwidth=512K   # a slow link", UFORM_CUDA_SUCCESS, NULL);
    check_config("device\nlink bandwidth=64M;link bandwidth=2T", UFORM_CUDA_SUCCESS, NULL);
    /* Refused: no key, an unknown key, no value, zero, a sign, a bad or doubled suffix, a
     * fraction, past 64 bits. */
    check_config("device\nlink", UFORM_CUDA_ERROR_UNKNOWN, "link takes bandwidth=");
    check_config("device\nlink speed=1G", UFORM_CUDA_ERROR_UNKNOWN, "unknown link key 'speed'");
    check_config("device\nlink bandwidth", UFORM_CUDA_ERROR_UNKNOWN, "not key=value");
    check_config("device\nlink bandwidth=", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=");
    check_config("device\nlink bandwidth=0", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=0");
    check_config("device\nlink bandwidth=0G", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=0G");
    check_config("device\nlink bandwidth=-1", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=-1");
    check_config("device\nlink bandwidth=+1G", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=+1G");
    check_config("device\nlink bandwidth=1X", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=1X");
    check_config("device\nlink bandwidth=1GB", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=1GB");
    check_config("device\nlink bandwidth=1.5G", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=1.5G");
    check_config("device\nlink bandwidth=99999999999999999999", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=");
    check_config("device\nlink bandwidth=20000000T", UFORM_CUDA_ERROR_UNKNOWN, "link bandwidth=20000000T");
    check_config("device\nlink bandwidth=1G latency=2", UFORM_CUDA_ERROR_UNKNOWN, "unknown link key 'latency'");
    /* fault sticky= takes a count, then optionally the error it reports: a name the double knows
     * or a number, never success. */
    check_config("device\nfault sticky=3", UFORM_CUDA_SUCCESS, NULL);
    check_config("device\nfault sticky=1:717", UFORM_CUDA_SUCCESS, NULL);
    check_config("device\nfault sticky=2:CUDA_ERROR_EXTERNAL_DEVICE", UFORM_CUDA_SUCCESS, NULL);
    check_config("device\nfault sticky=1:CUDA_ERROR_LAUNCH_FAILED", UFORM_CUDA_SUCCESS, NULL);
    check_config("device\nfault sticky=1:0", UFORM_CUDA_ERROR_UNKNOWN, "fault sticky=1:0 is not a CUDA error");
    check_config("device\nfault sticky=1:CUDA_SUCCESS", UFORM_CUDA_ERROR_UNKNOWN, "is not a CUDA error");
    check_config("device\nfault sticky=1:", UFORM_CUDA_ERROR_UNKNOWN, "is not a CUDA error");
    check_config("device\nfault sticky=1:CUDA_ERROR_BOGUS", UFORM_CUDA_ERROR_UNKNOWN, "is not a CUDA error");
    check_config("device\nfault sticky=1:-5", UFORM_CUDA_ERROR_UNKNOWN, "is not a CUDA error");
    check_config("device\nfault sticky=0:717", UFORM_CUDA_ERROR_UNKNOWN, "fault sticky=0 is not a positive count");
    check_config("device\nfault sticky=:717", UFORM_CUDA_ERROR_UNKNOWN, "is not a positive count");
    check_config("device\nfault alloc=1:717", UFORM_CUDA_ERROR_UNKNOWN, "is not a positive count");
    /* memory= shares the size parser: a sign is refused there too, no longer wrapped. */
    check_config("device memory=-1", UFORM_CUDA_ERROR_UNKNOWN, "memory=-1 is not a size");

    /* Through uform: a refused configuration is a driver failure. (Last: uform's double is
     * loaded once per process, and the children above must not inherit it.) */
    use_cuda_double("device pci=0000:01:00.0 smz=132 name=typo in a key");
    size_t count = 0;
    CHECK_STATUS(uform_gpu_devices(NULL, 0, &count), UFORM_STATUS_DEVICE_FAULT);
    CHECK_ERROR_NAMES("CUDA_ERROR_UNKNOWN");
    TEST_DONE();
}
