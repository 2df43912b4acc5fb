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
#include "kernels/kernels.h"
#include "mesh/mesh_internal.h"
#include "uform/hardware.h"

/* One token per compiled class, in class order, then the backends: a string literal, so it
 * is static and needs no initialisation. */
#if UFORM_KERNELS_INTEL_HASWELL
#define TOKEN_INTEL_HASWELL ",intel_haswell"
#else
#define TOKEN_INTEL_HASWELL ""
#endif
#if UFORM_KERNELS_INTEL_SIERRA
#define TOKEN_INTEL_SIERRA ",intel_sierra"
#else
#define TOKEN_INTEL_SIERRA ""
#endif
#if UFORM_KERNELS_INTEL_SKYLAKE
#define TOKEN_INTEL_SKYLAKE ",intel_skylake"
#else
#define TOKEN_INTEL_SKYLAKE ""
#endif
#if UFORM_KERNELS_INTEL_ICELAKE
#define TOKEN_INTEL_ICELAKE ",intel_icelake"
#else
#define TOKEN_INTEL_ICELAKE ""
#endif
#if UFORM_KERNELS_AMD_GENOA
#define TOKEN_AMD_GENOA ",amd_genoa"
#else
#define TOKEN_AMD_GENOA ""
#endif
#if UFORM_KERNELS_INTEL_SAPPHIRE
#define TOKEN_INTEL_SAPPHIRE ",intel_sapphire"
#else
#define TOKEN_INTEL_SAPPHIRE ""
#endif
#if UFORM_KERNELS_INTEL_GRANITE
#define TOKEN_INTEL_GRANITE ",intel_granite"
#else
#define TOKEN_INTEL_GRANITE ""
#endif
#if UFORM_KERNELS_INTEL_DIAMOND
#define TOKEN_INTEL_DIAMOND ",intel_diamond"
#else
#define TOKEN_INTEL_DIAMOND ""
#endif
#if UFORM_KERNELS_AWS_G2
#define TOKEN_AWS_G2 ",aws_g2"
#else
#define TOKEN_AWS_G2 ""
#endif
#if UFORM_KERNELS_APPLE_M2
#define TOKEN_APPLE_M2 ",apple_m2"
#else
#define TOKEN_APPLE_M2 ""
#endif
#if UFORM_KERNELS_AWS_G5
#define TOKEN_AWS_G5 ",aws_g5"
#else
#define TOKEN_AWS_G5 ""
#endif
#if UFORM_KERNELS_APPLE_M4
#define TOKEN_APPLE_M4 ",apple_m4"
#else
#define TOKEN_APPLE_M4 ""
#endif
#if UFORM_KERNELS_NVIDIA_VERA
#define TOKEN_NVIDIA_VERA ",nvidia_vera"
#else
#define TOKEN_NVIDIA_VERA ""
#endif
#if UFORM_KERNELS_ALIBABA_C930
#define TOKEN_ALIBABA_C930 ",alibaba_c930"
#else
#define TOKEN_ALIBABA_C930 ""
#endif
#if UFORM_KERNELS_WASM32_V128
#define TOKEN_WASM32_V128 ",wasm32_v128"
#else
#define TOKEN_WASM32_V128 ""
#endif
/* The CUDA backend needs nothing at build time (it loads the driver through the platform's
 * dlopen seam), so every build carries it. */
#define TOKEN_CUDA ",cuda"
/* So does the HIP backend (libamdhip64.so, dlopen'ed likewise). */
#define TOKEN_HIP ",hip"
/* And the mesh's NCCL data plane (libnccl.so.2, dlopen'ed likewise). */
#define TOKEN_NCCL ",nccl"
#if defined(__linux__)
#define TOKEN_NUMA ",numa"
#else
#define TOKEN_NUMA ""
#endif

static const char compiled[] = "serial" TOKEN_INTEL_HASWELL TOKEN_INTEL_SIERRA TOKEN_INTEL_SKYLAKE TOKEN_INTEL_ICELAKE TOKEN_AMD_GENOA TOKEN_INTEL_SAPPHIRE TOKEN_INTEL_GRANITE TOKEN_INTEL_DIAMOND TOKEN_AWS_G2 TOKEN_APPLE_M2 TOKEN_APPLE_M4 TOKEN_AWS_G5 TOKEN_NVIDIA_VERA TOKEN_ALIBABA_C930 TOKEN_WASM32_V128 TOKEN_CUDA TOKEN_HIP TOKEN_NCCL TOKEN_NUMA;

const char *uform_capabilities_compiled(void) { return compiled; }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char available[sizeof compiled];
/* The seam generation + 1 `available` was probed at; 0: never. */
static uint64_t available_generation;

static bool machine_runs(const char *token) {
    uform_cpu_class_t cpu_class;
    if (uform_cpu_class_parse(token, &cpu_class) == UFORM_STATUS_OK) return uform__cpu_class_runs(cpu_class);
    if (strcmp(token, "cuda") == 0) {
        /* Available means the driver loads and sees a device; a failing driver is not. */
        const uform__cuda_t *cuda = NULL;
        return uform__cuda_get(&cuda) == UFORM_STATUS_OK && cuda && cuda->device_count > 0;
    }
    if (strcmp(token, "hip") == 0) {
        /* Likewise: the HIP runtime loads and sees a device. */
        const uform__hip_t *hip = NULL;
        return uform__hip_get(&hip) == UFORM_STATUS_OK && hip && hip->device_count > 0;
    }
    if (strcmp(token, "nccl") == 0) {
        /* Available means libnccl loads with every entry point the mesh binds. */
        return uform__nccl_available(NULL) == UFORM_STATUS_OK;
    }
    if (strcmp(token, "numa") == 0) {
        char text[256];
        uform_status_t status = uform__seam_read("/sys/devices/system/node/online", text, sizeof text, NULL);
        /* Present but oversized still means NUMA information exists. */
        return status == UFORM_STATUS_OK || status == UFORM_STATUS_MALFORMED;
    }
    return false;
}

const char *uform_capabilities_available(void) {
    pthread_mutex_lock(&lock);
    uint64_t now = uform__seam_generation() + 1;
    if (available_generation != now) {
        /* Probing fails on purpose for what the machine lacks; this call itself succeeds, so
         * it leaves the caller's last error as it found it. */
        char saved[512];
        snprintf(saved, sizeof saved, "%s", uform_last_error());
        char copy[sizeof compiled];
        memcpy(copy, compiled, sizeof compiled);
        size_t used = 0;
        available[0] = '\0';
        for (char *save = NULL, *token = strtok_r(copy, ",", &save); token; token = strtok_r(NULL, ",", &save))
            if (machine_runs(token))
                used += (size_t)snprintf(available + used, sizeof available - used, "%s%s", used ? "," : "", token);
        uform__fail(UFORM_STATUS_OK, "%s", saved);
        available_generation = now;
    }
    pthread_mutex_unlock(&lock);
    return available;
}
