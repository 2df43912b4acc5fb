/**
 * @file uform/hardware.h
 * @brief What the runtime sees of the machine: CPU classes, capabilities, GPUs, NUMA domains.
 */
#ifndef UFORM_HARDWARE_H
#define UFORM_HARDWARE_H

#include <stddef.h>
#include <stdint.h>

#include "uform/export.h"
#include "uform/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The CPU families dispatch picks from. The numbers are the pages' values and never change.
 * `UFORM_CPU_CLASS_NONE` (0) is not a class: passed as a pin it means "derive the CPU's own".
 */
typedef enum uform_cpu_class_t {
    UFORM_CPU_CLASS_NONE = 0,
    UFORM_CPU_CLASS_SERIAL = 1,          /**< the portable floor, no SIMD assumptions */
    UFORM_CPU_CLASS_INTEL_HASWELL = 2,   /**< AVX2, FMA, F16C, BMI2 */
    UFORM_CPU_CLASS_INTEL_SIERRA = 3,    /**< Haswell + AVX-VNNI, without AVX-512 */
    UFORM_CPU_CLASS_INTEL_SKYLAKE = 4,   /**< AVX-512 F, CD, BW, DQ, VL */
    UFORM_CPU_CLASS_INTEL_ICELAKE = 5,   /**< Skylake + VNNI, VPOPCNTDQ, IFMA, VBMI, VBMI2, BITALG */
    UFORM_CPU_CLASS_AMD_GENOA = 6,       /**< Icelake + AVX-512 BF16 */
    UFORM_CPU_CLASS_INTEL_SAPPHIRE = 7,  /**< Genoa + AVX-512 FP16, AMX-TILE, AMX-BF16, AMX-INT8 */
    UFORM_CPU_CLASS_INTEL_GRANITE = 8,   /**< Sapphire + AMX-FP16 */
    UFORM_CPU_CLASS_INTEL_DIAMOND = 9,   /**< Granite + AVX10.2 */
    UFORM_CPU_CLASS_AWS_G2 = 10,         /**< NEON, the Armv8.0 floor */
    UFORM_CPU_CLASS_APPLE_M2 = 11,       /**< NEON + dot product, BF16, FP16, FHM, I8MM */
    UFORM_CPU_CLASS_APPLE_M4 = 12,       /**< Apple M2 + SME */
    UFORM_CPU_CLASS_AWS_G5 = 13,         /**< Apple M2 + SVE2 */
    UFORM_CPU_CLASS_NVIDIA_VERA = 14,    /**< AWS G5 + FP8 dot products */
    UFORM_CPU_CLASS_ALIBABA_C930 = 15,   /**< RISC-V RVV 1.0 */
    UFORM_CPU_CLASS_WASM32_V128 = 16,    /**< WebAssembly simd128 (WASM builds only) */
    UFORM_CPU_CLASS_WASM64_EXTENDED = 17, /**< WebAssembly relaxed SIMD, threads, memory64 */
    UFORM_CPU_CLASS_MONOVERSIONED = 18   /**< the one class of a single-target build */
} uform_cpu_class_t;

/** The GPU families dispatch picks from. `UFORM_GPU_CLASS_NONE` (0): no class / derive. */
typedef enum uform_gpu_class_t {
    UFORM_GPU_CLASS_NONE = 0,
    UFORM_GPU_CLASS_NVIDIA_AMPERE = 1,
    UFORM_GPU_CLASS_NVIDIA_ADA = 2,
    UFORM_GPU_CLASS_NVIDIA_HOPPER = 3,
    UFORM_GPU_CLASS_NVIDIA_BLACKWELL = 4,
    UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX = 5,
    UFORM_GPU_CLASS_NVIDIA_RUBIN = 6,
    UFORM_GPU_CLASS_AMD_CDNA3 = 7,
    UFORM_GPU_CLASS_AMD_CDNA4 = 8,
    UFORM_GPU_CLASS_AMD_CDNA5 = 9,
    UFORM_GPU_CLASS_APPLE_METAL7 = 10,
    UFORM_GPU_CLASS_APPLE_METAL9 = 11,
    UFORM_GPU_CLASS_APPLE_METAL10 = 12
} uform_gpu_class_t;

/** The vendor whose runtime drives a GPU. */
typedef enum uform_gpu_vendor_t {
    UFORM_GPU_VENDOR_NONE = 0,
    UFORM_GPU_VENDOR_NVIDIA = 1,
    UFORM_GPU_VENDOR_AMD = 2,
    UFORM_GPU_VENDOR_APPLE = 3
} uform_gpu_vendor_t;

/** Capacity of uform_gpu_device_t::name, terminator included. */
#define UFORM_GPU_NAME_CAPACITY 256

/**
 * One GPU this process can drive. Enum fields are stored as 32-bit integers so the layout is
 * the same for every compiler and binding (size 280, alignment 8 on LP64).
 */
typedef struct uform_gpu_device_t {
    uint32_t vendor;         /**< a uform_gpu_vendor_t */
    uint32_t vendor_ordinal; /**< index in PCI bus order among its vendor's visible devices */
    uint32_t gpu_class;      /**< a uform_gpu_class_t, 0 when the device has no class */
    uint32_t compute_units;  /**< streaming multiprocessors or compute units */
    uint64_t memory_bytes;   /**< device memory */
    char name[UFORM_GPU_NAME_CAPACITY]; /**< NUL-terminated UTF-8, cut at a character boundary */
} uform_gpu_device_t;

/**
 * Lists every GPU this process can drive, NVIDIA first, then AMD, into `devices`
 * (`capacity` entries, may be NULL when `capacity` is 0) and stores how many there are in
 * `count` (which may exceed `capacity`; only `min(count, capacity)` entries are written).
 * A vendor this build does not compile, or whose runtime is absent, lists no devices: a
 * machine without GPUs answers OK and 0.
 *
 * NVIDIA devices come from the CUDA driver, loaded at run time (`libcuda.so.1`, or the
 * library UFORM_CUDA_LIBRARY names; read once, at the first GPU query). `vendor_ordinal` is
 * the position in PCI bus order, as nvidia-smi lists them, whatever CUDA_DEVICE_ORDER says;
 * NVIDIA devices are listed in that order. The driver is read once per process: later calls
 * answer the same list, and a child forked after the first call answers its parent's list
 * without calling the driver. The CUDA toolkit's stub libcuda.so found in place of a driver
 * lists no NVIDIA device (`uform info` says "CUDA stub library, no driver").
 *
 * AMD devices come from the HIP runtime: the library UFORM_HIP_LIBRARY names, else
 * `libamdhip64.so` (then `.so.7`, `.so.6`) from the linker's search, from `$ROCM_PATH/lib`, then
 * from `/opt/rocm/lib`; in PCI bus order, as rocm-smi lists them.
 *
 * A vendor whose runtime fails lists no device and hides nothing of the other's: the call
 * answers the devices that work, and `uform info` says what failed.
 * @return OK; INVALID_ARGUMENT when `count` is NULL or `devices` is NULL with a capacity; when
 *         no vendor lists a device and one failed, that failure: UNSUPPORTED when its runtime
 *         lacks an entry point uform needs (the message names it), DEVICE_FAULT when it fails
 *         to initialise or to describe a device (the message carries the runtime's error
 *         name). A runtime that sees no device is OK and 0.
 */
UFORM_API uform_status_t uform_gpu_devices(uform_gpu_device_t *devices, size_t capacity, size_t *count);

/**
 * Comma-separated lowercase capabilities the library was compiled with: the CPU classes it
 * has kernels for (snake-case class names, e.g. "serial,intel_haswell,...") in class order,
 * then the backends ("cuda", "hip", "nccl", "numa"). A static string owned by the library.
 */
UFORM_API const char *uform_capabilities_compiled(void);

/**
 * The subset of uform_capabilities_compiled() this machine can run, same order and
 * vocabulary. Computed once per process; a static string owned by the library.
 */
UFORM_API const char *uform_capabilities_available(void);

/** The highest CPU class whose bundle this CPU (and OS) offers; never NONE. */
UFORM_API uform_cpu_class_t uform_cpu_class_derived(void);

/**
 * The snake-case name of a class ("amd_genoa"), or NULL for a number that is no class
 * (NONE included). Static, owned by the library.
 */
UFORM_API const char *uform_cpu_class_name(uform_cpu_class_t cpu_class);

/**
 * Parses a class name: snake-case ("amd_genoa") or the upper-case member name
 * ("AMD_GENOA"), case-insensitive.
 * @return OK; INVALID_ARGUMENT for NULL arguments; NOT_FOUND for an unknown name.
 */
UFORM_API uform_status_t uform_cpu_class_parse(const char *name, uform_cpu_class_t *cpu_class);

/** Snake-case GPU class name ("nvidia_hopper"), or NULL for a number that is no class. */
UFORM_API const char *uform_gpu_class_name(uform_gpu_class_t gpu_class);

/** Parses a GPU class name as uform_cpu_class_parse does; same statuses. */
UFORM_API uform_status_t uform_gpu_class_parse(const char *name, uform_gpu_class_t *gpu_class);

/**
 * One NUMA node as this process sees it. A node with memory but no usable CPU (GPU memory on
 * Grace-class machines, or a node outside the cpuset) has `usable_cpus` 0.
 */
typedef struct uform_numa_domain_t {
    int32_t node;            /**< the kernel's node id */
    uint32_t usable_cpus;    /**< CPUs of the node this process may run on */
    uint32_t physical_cores; /**< distinct physical cores among them (SMT siblings count once) */
    uint32_t reserved_;      /**< zero */
    uint64_t memory_bytes;   /**< the node's total memory, 0 when unknown */
} uform_numa_domain_t;

/**
 * The NUMA nodes of this machine, in node-id order, as uform_gpu_devices does: fills up to
 * `capacity`, stores the total in `count`. A machine without NUMA information answers one
 * node 0 holding every usable CPU.
 * @return OK; INVALID_ARGUMENT for a NULL `count` or NULL `domains` with a capacity;
 *         IO_ERROR or MALFORMED when the system's files cannot be read or parsed.
 */
UFORM_API uform_status_t uform_numa_domains(uform_numa_domain_t *domains, size_t capacity, size_t *count);

/**
 * The threads a RAM executor takes by default: `n - n/8` of the CPUs this process may use,
 * after affinity, the cgroup v2 cpuset and the `cpu.max` quota (rounded up). At least 1.
 */
UFORM_API size_t uform_default_threads(void);

/** How uform_info_write formats its report. */
typedef enum uform_info_format_t {
    UFORM_INFO_TEXT = 0, /**< for people, like lscpu */
    UFORM_INFO_JSON = 1  /**< one JSON object */
} uform_info_format_t;

/**
 * Writes what `uform info` prints: version, capabilities, derived CPU class, NUMA domains,
 * default threads, GPUs (each with its PCI address and nearest NUMA node; a failing GPU
 * driver is reported in the text, not answered as a status). Writes at most `capacity` bytes including a NUL terminator and
 * stores the full length (without terminator) in `length`, so a caller may retry with a
 * larger buffer, snprintf-style.
 * @return OK; INVALID_ARGUMENT for a bad format or NULL `length`; errors of the queries.
 */
UFORM_API uform_status_t uform_info_write(uform_info_format_t format, char *buffer, size_t capacity,
                                          size_t *length);

#ifdef __cplusplus
}
#endif

#endif /* UFORM_HARDWARE_H */
