/* Prints what the C compiler makes of include/uform.h, for src/ffi.rs's layout test to compare
 * with the Rust mirrors: every mirrored struct's size, alignment and field offsets, the size
 * of the enums crossing as u32, and the number of every enum constant the crate names. */
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>

#include "uform.h"

#define STRUCT(type) printf("struct %s %zu %zu\n", #type, sizeof(type), alignof(type))
#define FIELD(type, field) printf("field %s.%s %zu %zu\n", #type, #field, offsetof(type, field), sizeof(((type *)0)->field))
#define ENUM(type) printf("enum %s %zu %zu\n", #type, sizeof(type), alignof(type))
#define CONSTANT(name) printf("constant %s %lld\n", #name, (long long)(name))

int main(void) {
    STRUCT(uform_gpu_device_t);
    FIELD(uform_gpu_device_t, vendor);
    FIELD(uform_gpu_device_t, vendor_ordinal);
    FIELD(uform_gpu_device_t, gpu_class);
    FIELD(uform_gpu_device_t, compute_units);
    FIELD(uform_gpu_device_t, memory_bytes);
    FIELD(uform_gpu_device_t, name);

    STRUCT(uform_mesh_options_t);
    FIELD(uform_mesh_options_t, struct_size);
    FIELD(uform_mesh_options_t, host_domain_index);
    FIELD(uform_mesh_options_t, host_domain_count);
    FIELD(uform_mesh_options_t, gpus_per_multimem_domain);
    FIELD(uform_mesh_options_t, directory);
    FIELD(uform_mesh_options_t, job);
    FIELD(uform_mesh_options_t, timeout_seconds);
    FIELD(uform_mesh_options_t, cancel);

    STRUCT(uform_mesh_description_t);
    FIELD(uform_mesh_description_t, gpus_per_host_domain);
    FIELD(uform_mesh_description_t, gpus_per_multimem_domain);
    FIELD(uform_mesh_description_t, gpus_per_colocated_domain);
    FIELD(uform_mesh_description_t, host_domain_index);
    FIELD(uform_mesh_description_t, first_gpu_index);
    FIELD(uform_mesh_description_t, multimem_tier);
    FIELD(uform_mesh_description_t, gpu_class);

    STRUCT(uform_call_t);
    FIELD(uform_call_t, struct_size);
    FIELD(uform_call_t, deferred);
    FIELD(uform_call_t, progress);
    FIELD(uform_call_t, progress_context);
    FIELD(uform_call_t, cancel);

    STRUCT(uform_device_slot_t);
    FIELD(uform_device_slot_t, device);
    FIELD(uform_device_slot_t, ordinal);
    FIELD(uform_device_slot_t, vendor);
    FIELD(uform_device_slot_t, native_device);
    FIELD(uform_device_slot_t, native_context);
    FIELD(uform_device_slot_t, stream);
    FIELD(uform_device_slot_t, thread);

    ENUM(uform_status_t);
    ENUM(uform_cpu_class_t);
    ENUM(uform_gpu_class_t);
    ENUM(uform_gpu_vendor_t);
    ENUM(uform_mood_t);
    ENUM(uform_multimem_tier_t);

#define STATUS_CONSTANT_(name, number, message) CONSTANT(UFORM_STATUS_##name);
    UFORM_STATUS_MAP(STATUS_CONSTANT_)
#undef STATUS_CONSTANT_
    CONSTANT(UFORM_STATUS_COUNT_);

    CONSTANT(UFORM_CPU_CLASS_SERIAL);
    CONSTANT(UFORM_CPU_CLASS_INTEL_HASWELL);
    CONSTANT(UFORM_CPU_CLASS_INTEL_SIERRA);
    CONSTANT(UFORM_CPU_CLASS_INTEL_SKYLAKE);
    CONSTANT(UFORM_CPU_CLASS_INTEL_ICELAKE);
    CONSTANT(UFORM_CPU_CLASS_AMD_GENOA);
    CONSTANT(UFORM_CPU_CLASS_INTEL_SAPPHIRE);
    CONSTANT(UFORM_CPU_CLASS_INTEL_GRANITE);
    CONSTANT(UFORM_CPU_CLASS_INTEL_DIAMOND);
    CONSTANT(UFORM_CPU_CLASS_AWS_G2);
    CONSTANT(UFORM_CPU_CLASS_APPLE_M2);
    CONSTANT(UFORM_CPU_CLASS_APPLE_M4);
    CONSTANT(UFORM_CPU_CLASS_AWS_G5);
    CONSTANT(UFORM_CPU_CLASS_NVIDIA_VERA);
    CONSTANT(UFORM_CPU_CLASS_ALIBABA_C930);
    CONSTANT(UFORM_CPU_CLASS_WASM32_V128);
    CONSTANT(UFORM_CPU_CLASS_WASM64_EXTENDED);
    CONSTANT(UFORM_CPU_CLASS_MONOVERSIONED);

    CONSTANT(UFORM_GPU_CLASS_NVIDIA_AMPERE);
    CONSTANT(UFORM_GPU_CLASS_NVIDIA_ADA);
    CONSTANT(UFORM_GPU_CLASS_NVIDIA_HOPPER);
    CONSTANT(UFORM_GPU_CLASS_NVIDIA_BLACKWELL);
    CONSTANT(UFORM_GPU_CLASS_NVIDIA_BLACKWELLRTX);
    CONSTANT(UFORM_GPU_CLASS_NVIDIA_RUBIN);
    CONSTANT(UFORM_GPU_CLASS_AMD_CDNA3);
    CONSTANT(UFORM_GPU_CLASS_AMD_CDNA4);
    CONSTANT(UFORM_GPU_CLASS_AMD_CDNA5);
    CONSTANT(UFORM_GPU_CLASS_APPLE_METAL7);
    CONSTANT(UFORM_GPU_CLASS_APPLE_METAL9);
    CONSTANT(UFORM_GPU_CLASS_APPLE_METAL10);

    CONSTANT(UFORM_GPU_VENDOR_NVIDIA);
    CONSTANT(UFORM_GPU_VENDOR_AMD);
    CONSTANT(UFORM_GPU_VENDOR_APPLE);

    CONSTANT(UFORM_MOOD_SPINNING);
    CONSTANT(UFORM_MOOD_PARKED);

    CONSTANT(UFORM_MULTIMEM_TIER_SWITCH_REDUCED);
    CONSTANT(UFORM_MULTIMEM_TIER_PEER_READ);

    CONSTANT(UFORM_GPU_NAME_CAPACITY);
    CONSTANT(UFORM_DEFERRED_LIMIT_DEFAULT);
    CONSTANT(UFORM_THREADS_MAX);

    CONSTANT(UFORM_VERSION_NUMBER);
    printf("string UFORM_VERSION_STRING %s\n", UFORM_VERSION_STRING);
    return 0;
}
