/* Capabilities: what this build carries (fixed at compile time) and the part of it this
 * machine runs (probed once per seam generation). They name the CPU classes and the GPU and
 * mesh backends, so they live in the report layer, above gpu/ and mesh/. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "gpu/cuda/cuda_loader.h"
#include "gpu/hip/hip_loader.h"
#include "hardware/cpu_class.h"
#include "hardware/seam.h"
#include "hardware/vocabulary.h"
#include "kernels/kernels.h"
#include "mesh/mesh_internal.h"
#include "uform/hardware.h"

static bool cuda_runs(void) {
    /* Available means the driver loads and sees a device; a failing driver is not. */
    const uform__cuda_t *cuda = NULL;
    return uform__cuda_get(&cuda) == UFORM_STATUS_OK && cuda && cuda->device_count > 0;
}

static bool hip_runs(void) {
    /* Likewise: the HIP runtime loads and sees a device. */
    const uform__hip_t *hip = NULL;
    return uform__hip_get(&hip) == UFORM_STATUS_OK && hip && hip->device_count > 0;
}

static bool nccl_runs(void) {
    /* Available means libnccl loads with every entry point the mesh binds. */
    return uform__nccl_available(NULL) == UFORM_STATUS_OK;
}

static bool numa_runs(void) {
    char text[256];
    uform_status_t status = uform__seam_read("/sys/devices/system/node/online", text, sizeof text, NULL);
    /* Present but oversized still means NUMA information exists. */
    return status == UFORM_STATUS_OK || status == UFORM_STATUS_MALFORMED;
}

/* X(token, compiled, probe). The CUDA and HIP backends and NCCL need nothing at build time
 * (each library is dlopen'ed through the platform seam), so every build carries them; NUMA
 * placement is Linux's. */
#if defined(__linux__)
#define UFORM_HAS_NUMA_ 1
#else
#define UFORM_HAS_NUMA_ 0
#endif
#define BACKENDS(X) X(cuda, 1, cuda_runs) X(hip, 1, hip_runs) X(nccl, 1, nccl_runs) X(numa, UFORM_HAS_NUMA_, numa_runs)

/* Every token of the vocabulary, each with its compiled flag and its probe; CPU classes first,
 * in class order (serial always compiled), then the backends. */
typedef struct token_t {
    const char *name;
    bool compiled;
    uform_cpu_class_t cpu_class; /* NONE for a backend */
    bool (*probe)(void);
} token_t;

static const token_t tokens[] = {
#define CLASS_TOKEN_(member, number, name, isa, requires) \
    {#name, UFORM_KERNELS_##member, UFORM_CPU_CLASS_##member, NULL},
    UFORM__CPU_CLASSES(CLASS_TOKEN_)
#undef CLASS_TOKEN_
#define BACKEND_TOKEN_(name, compiled, probe) {#name, compiled, UFORM_CPU_CLASS_NONE, probe},
        BACKENDS(BACKEND_TOKEN_)
#undef BACKEND_TOKEN_
};
#define TOKEN_COUNT (sizeof tokens / sizeof tokens[0])

/* Room for every token and its comma. */
#define TOKENS_CAPACITY 512

static pthread_once_t compiled_once = PTHREAD_ONCE_INIT;
static char compiled[TOKENS_CAPACITY];

static void join_compiled(void) {
    size_t used = 0;
    for (size_t i = 0; i < TOKEN_COUNT; i++)
        if (tokens[i].compiled)
            used += (size_t)snprintf(compiled + used, sizeof compiled - used, "%s%s", used ? "," : "", tokens[i].name);
}

const char *uform_capabilities_compiled(void) {
    pthread_once(&compiled_once, join_compiled);
    return compiled;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char available[TOKENS_CAPACITY];
/* The seam generation + 1 `available` was probed at; 0: never. */
static uint64_t available_generation;

static bool machine_runs(const token_t *token) {
    return token->probe ? token->probe() : uform__cpu_class_runs(token->cpu_class);
}

const char *uform_capabilities_available(void) {
    pthread_mutex_lock(&lock);
    uint64_t now = uform__seam_generation() + 1;
    if (available_generation != now) {
        /* Probing fails on purpose for what the machine lacks; this call itself succeeds, so
         * it leaves the caller's last error as it found it. */
        char saved[512];
        snprintf(saved, sizeof saved, "%s", uform_last_error());
        size_t used = 0;
        available[0] = '\0';
        for (size_t i = 0; i < TOKEN_COUNT; i++)
            if (tokens[i].compiled && machine_runs(&tokens[i]))
                used += (size_t)snprintf(available + used, sizeof available - used, "%s%s", used ? "," : "",
                                         tokens[i].name);
        uform__fail(UFORM_STATUS_OK, "%s", saved);
        available_generation = now;
    }
    pthread_mutex_unlock(&lock);
    return available;
}
