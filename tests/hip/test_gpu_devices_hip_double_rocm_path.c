/* A stock ROCm install puts libamdhip64.so in $ROCM_PATH/lib (/opt/rocm/lib), which the dynamic
 * linker searches only after a manual post-install step: with UFORM_HIP_LIBRARY unset and the
 * default search finding nothing, the runtime is found there, under its unversioned name or its
 * soname (.so.6 here). UFORM_HIP_LIBRARY, when set, is the only library tried. Each case runs in a
 * fork()ed child that has not loaded HIP yet, beside a fake ROCM_PATH holding the HIP double
 * under the real names. Skipped (77) where a real libamdhip64.so is on the default search. */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/gpu_devices.h"
#include "hip_double.h"

/* A fresh directory `<base>/lib` holding the HIP double as `name`; `base` receives its path. */
static void fake_rocm(char *base, size_t capacity, const char *name) {
    snprintf(base, capacity, "%s/rocm-XXXXXX", UFORM_TEST_BINARY_DIR);
    CHECK(mkdtemp(base) != NULL);
    char lib[512], link[640];
    snprintf(lib, sizeof lib, "%s/lib", base);
    CHECK(mkdir(lib, 0700) == 0);
    snprintf(link, sizeof link, "%s/%s", lib, name);
    CHECK(symlink(UFORM_TEST_HIP_DOUBLE, link) == 0);
}

/* Removes what fake_rocm made. */
static void remove_rocm(const char *base, const char *name) {
    char path[640];
    snprintf(path, sizeof path, "%s/lib/%s", base, name);
    unlink(path);
    snprintf(path, sizeof path, "%s/lib", base);
    rmdir(path);
    rmdir(base);
}

/* In a child: lists AMD devices with ROCM_PATH=`rocm` and UFORM_HIP_LIBRARY=`chosen` (NULL:
 * unset); exits 0 when the count is `expected` and the note holds `note` (NULL: no check). */
static void expect(const char *rocm, const char *chosen, size_t expected, const char *note) {
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        setenv("ROCM_PATH", rocm, 1);
        if (chosen)
            setenv("UFORM_HIP_LIBRARY", chosen, 1);
        else
            unsetenv("UFORM_HIP_LIBRARY");
        size_t count = 99;
        if (uform_gpu_devices(NULL, 0, &count) != UFORM_STATUS_OK) _exit(2);
        if (count != expected) _exit(3);
        if (note && !strstr(uform__gpu_note(), note)) _exit(4);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        TEST_FAIL_("ROCM_PATH=%s UFORM_HIP_LIBRARY=%s: child exited %d", rocm, chosen ? chosen : "(unset)",
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(void) {
    void *installed = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (installed) {
        printf("SKIPPED: a libamdhip64.so is on this machine's default search\n");
        return 77;
    }
    setenv("UFORM_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    setenv("UFORM_HIP_DOUBLE_CONFIG", "device name=one\ndevice name=two", 1);
    char plain[512], versioned[512], empty[512];
    fake_rocm(plain, sizeof plain, "libamdhip64.so");
    fake_rocm(versioned, sizeof versioned, "libamdhip64.so.6");
    fake_rocm(empty, sizeof empty, "unrelated.so");
    expect(plain, NULL, 2, NULL);
    expect(versioned, NULL, 2, NULL);
    /* Nothing anywhere: every place tried is named in the note. */
    expect(empty, NULL, 0, "lib/libamdhip64.so.6");
    expect(empty, NULL, 0, "/opt/rocm/lib/libamdhip64.so");
    /* An explicit choice is never replaced by the fallbacks. */
    expect(plain, "/nonexistent/libamdhip64.so", 0, "/nonexistent/libamdhip64.so");
    remove_rocm(plain, "libamdhip64.so");
    remove_rocm(versioned, "libamdhip64.so.6");
    remove_rocm(empty, "unrelated.so");
    TEST_DONE();
}
