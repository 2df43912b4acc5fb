/* VRAM executors: a RAM executor of host threads (placed on the NUMA nodes nearest the devices)
 * plus one non-blocking stream per device on its primary context, attached as its layer. Creation validates everything
 * before touching a driver; a device that fails to open undoes the whole executor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "gpu/gpu_devices.h"
#include "gpu/vram_internal.h"
#include "hardware/topology.h"

static const char creator[] = "uform_executor_for_vram";

/* Whether a device of class `own` runs code of class `pin`: its own class, or for NVIDIA the
 * Ampere floor whose code every newer NVIDIA GPU runs. */
static bool runs_class(uform_gpu_class_t own, uform_gpu_class_t pin) {
    if (own == UFORM_GPU_CLASS_NONE) return false;
    if (own == pin) return true;
    return pin == UFORM_GPU_CLASS_NVIDIA_AMPERE && own <= UFORM_GPU_CLASS_NVIDIA_RUBIN;
}

/* The devices' common class; NVIDIA devices of several classes share the Ampere floor. */
static uform_gpu_class_t common_class(const uform__gpu_detail_t *details, size_t count) {
    uform_gpu_class_t common = (uform_gpu_class_t)details[0].device.gpu_class;
    for (size_t i = 1; i < count; i++) {
        uform_gpu_class_t own = (uform_gpu_class_t)details[i].device.gpu_class;
        if (own == common) continue;
        if (runs_class(own, UFORM_GPU_CLASS_NVIDIA_AMPERE) && runs_class(common, UFORM_GPU_CLASS_NVIDIA_AMPERE))
            common = UFORM_GPU_CLASS_NVIDIA_AMPERE;
        else
            return UFORM_GPU_CLASS_NONE;
    }
    return common;
}

static size_t chunk_bytes(void) {
    const char *text = getenv("UFORM_STAGING_CHUNK_BYTES");
    if (text && *text) {
        char *end = NULL;
        unsigned long long value = strtoull(text, &end, 10);
        if (end && !*end && value >= 4096 && value <= (1ull << 32)) return (size_t)value & ~(size_t)4095;
    }
    return UFORM_STAGING_CHUNK_DEFAULT;
}

size_t uform__vram_host_domains(const uform__gpu_detail_t *details, size_t count, int32_t *nodes) {
    const uform__topology_t *topology = NULL;
    if (uform__topology_get(&topology) != UFORM_STATUS_OK) return 0;
    size_t found = 0;
    for (size_t i = 0; i < count; i++) {
        int32_t node = details[i].numa_node;
        if (node < 0) continue;
        bool seen = false;
        for (size_t j = 0; j < found; j++) seen |= nodes[j] == node;
        const uform__node_t *known = uform__topology_node(topology, node);
        /* A node the GPU sits on but no CPU of ours does (its HBM exposed as memory, a
         * restricted cpuset): such a node cannot host threads, so it counts as unknown. */
        if (!known || !known->cpu_count) return 0;
        if (!seen) nodes[found++] = node;
    }
    return found;
}

static const uform__gpu_backend_t *backend_of(uint32_t vendor, uform_status_t *status) {
    if (vendor == UFORM_GPU_VENDOR_NVIDIA) return uform__cuda_backend(status);
    if (vendor == UFORM_GPU_VENDOR_AMD) return uform__hip_backend(status);
    *status = uform__fail(UFORM_STATUS_UNSUPPORTED, "%s: no backend drives GPUs of vendor %u", creator,
                          (unsigned)vendor);
    return NULL;
}

/* Opens every device; on failure closes the ones opened. */
static uform_status_t open_devices(uform__vram_t *vram, const uform__gpu_detail_t *details, const int32_t *chosen) {
    for (size_t i = 0; i < vram->device_count; i++) {
        uform__gpu_device_t *device = &vram->devices[i];
        const uform__gpu_detail_t *detail = &details[chosen[i]];
        uform_status_t status = UFORM_STATUS_OK;
        device->backend = backend_of(detail->device.vendor, &status);
        device->index = i;
        device->ordinal = chosen[i];
        device->vendor = detail->device.vendor;
        device->vendor_ordinal = (int32_t)detail->device.vendor_ordinal;
        if (status == UFORM_STATUS_OK) status = device->backend->open(device);
        if (status != UFORM_STATUS_OK) {
            for (size_t j = 0; j < i; j++) vram->devices[j].backend->close(&vram->devices[j]);
            return status;
        }
    }
    return UFORM_STATUS_OK;
}

uform_status_t uform_executor_for_vram(const int32_t *devices, size_t devices_count, uform_gpu_class_t gpu_class,
                                       const int32_t *memory_domains, size_t memory_domains_count,
                                       uform_cpu_class_t cpu_class, void *const *streams, size_t streams_count,
                                       size_t scratch_limit, size_t deferred_limit, uform_executor_t **executor_out) {
    static const char *const caller = creator;
    if (!executor_out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: executor output is NULL", caller);
    *executor_out = NULL;
    if (!devices && devices_count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: devices is NULL with a count of %zu", caller,
                           devices_count);
    if (!streams && streams_count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: streams is NULL with a count of %zu", caller,
                           streams_count);
    if ((unsigned)gpu_class > UFORM_GPU_CLASS_APPLE_METAL10)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: %d is not a GPU class", caller, (int)gpu_class);
    for (size_t i = 0; i < devices_count; i++) {
        if (devices[i] < 0)
            return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: device ordinal %d is negative", caller, (int)devices[i]);
        for (size_t j = 0; j < i; j++)
            if (devices[j] == devices[i])
                return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: device %d is listed twice", caller,
                                   (int)devices[i]);
    }
    const struct uform__topology_t *topology = NULL;
    uform_status_t status = uform__validate_ram_arguments(memory_domains, memory_domains_count, cpu_class,
                                                          deferred_limit, caller, &topology);
    if (status != UFORM_STATUS_OK) return status;
    if (streams_count)
        return uform__fail(UFORM_STATUS_UNSUPPORTED, "%s: borrowed streams are not supported yet; pass none", caller);
    size_t count = 0;
    status = uform__gpu_details(NULL, 0, &count);
    if (status != UFORM_STATUS_OK) return status;
    if (!count) return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: no GPU: %s", caller, uform__gpu_note());
    for (size_t i = 0; i < devices_count; i++)
        if ((size_t)devices[i] >= count)
            return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: device %d does not exist (%zu GPUs)", caller,
                               (int)devices[i], count);

    uform__gpu_detail_t *details = uform__allocate_zeroed(count, sizeof *details);
    size_t chosen_count = devices_count ? devices_count : count;
    int32_t *chosen = uform__allocate_zeroed(chosen_count, sizeof *chosen);
    uform__gpu_detail_t *picked = uform__allocate_zeroed(chosen_count, sizeof *picked);
    int32_t *nodes = uform__allocate_zeroed(chosen_count, sizeof *nodes);
    uform__vram_t *vram = uform__allocate_zeroed(1, sizeof *vram);
    uform__gpu_device_t *states = uform__allocate_zeroed(chosen_count, sizeof *states);
    uform_executor_t *executor = NULL;
    if (!details || !chosen || !picked || !nodes || !vram || !states) {
        status = uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: %zu devices", caller, chosen_count);
        goto done;
    }
    size_t listed = 0;
    status = uform__gpu_details(details, count, &listed);
    if (status != UFORM_STATUS_OK) goto done;
    for (size_t i = 0; i < chosen_count; i++) {
        chosen[i] = devices_count ? devices[i] : (int32_t)i;
        picked[i] = details[chosen[i]];
    }
    /* The class: a pin every device can run, or theirs in common. */
    if (gpu_class != UFORM_GPU_CLASS_NONE) {
        for (size_t i = 0; i < chosen_count; i++)
            if (!runs_class((uform_gpu_class_t)picked[i].device.gpu_class, gpu_class)) {
                status = uform__fail(UFORM_STATUS_UNSUPPORTED,
                                     "%s: GPU %d (%s, class %s) cannot run GPU class %s", caller, (int)chosen[i],
                                     picked[i].device.name,
                                     uform_gpu_class_name((uform_gpu_class_t)picked[i].device.gpu_class),
                                     uform_gpu_class_name(gpu_class));
                goto done;
            }
    }
    vram->gpu_class = gpu_class != UFORM_GPU_CLASS_NONE ? gpu_class : common_class(picked, chosen_count);
    vram->scratch_limit = scratch_limit;
    vram->chunk_bytes = chunk_bytes();
    vram->devices = states;
    vram->device_count = chosen_count;
    /* Host threads on the nodes nearest the devices unless told otherwise. */
    const int32_t *domains = memory_domains;
    size_t domain_count = memory_domains_count;
    if (!domain_count) {
        domain_count = uform__vram_host_domains(picked, chosen_count, nodes);
        domains = nodes;
    }
    status = uform__executor_create(domains, domain_count, cpu_class, 0, deferred_limit, caller, &executor);
    if (status != UFORM_STATUS_OK) goto done;
    status = open_devices(vram, details, chosen);
    if (status != UFORM_STATUS_OK) {
        uform_executor_free(executor);
        executor = NULL;
        goto done;
    }
    uform__executor_attach(executor, &uform__vram_ops, vram);
    vram = NULL;
    states = NULL;
    *executor_out = executor;
done:
    uform__deallocate(details);
    uform__deallocate(chosen);
    uform__deallocate(picked);
    uform__deallocate(nodes);
    uform__deallocate(states);
    uform__deallocate(vram);
    return status;
}

void uform__vram_note_fault(uform_executor_t *executor, const uform__gpu_device_t *device) {
    if (!atomic_load(&device->faulted)) return;
    uform__vram_t *vram = uform__vram_of(executor);
    uint32_t expected = 0;
    /* 1 while the message is written, 2 once it can be read. */
    if (atomic_compare_exchange_strong(&vram->faulted, &expected, 1)) {
        snprintf(vram->fault_message, sizeof vram->fault_message, "%s", uform_last_error());
        atomic_store(&vram->faulted, 2);
    }
}

uform_status_t uform__vram_fault(const uform_executor_t *executor, const char *caller) {
    const uform__vram_t *vram = uform__vram_of(executor);
    uint32_t faulted = atomic_load_explicit(&vram->faulted, memory_order_acquire);
    if (!faulted) return UFORM_STATUS_OK;
    return uform__fail(UFORM_STATUS_DEVICE_FAULT, "%s: the executor's GPU faulted, and stays so until freed: %s", caller,
                       faulted == 2 ? vram->fault_message : "(being recorded)");
}

static uform_status_t vram_drain(uform_executor_t *executor) {
    static const char caller[] = "uform_executor_drain";
    uform__vram_t *vram = uform__vram_of(executor);
    uform_status_t first = uform__vram_fault(executor, caller);
    if (first != UFORM_STATUS_OK) return first;
    char cause[256] = "";
    for (size_t i = 0; i < vram->device_count; i++) {
        uform__gpu_device_t *device = &vram->devices[i];
        /* stream_wait makes the context current only while it waits: the caller's stays. */
        uform_status_t status = device->backend->stream_wait(device);
        uform__vram_note_fault(executor, device);
        if (status != UFORM_STATUS_OK && first == UFORM_STATUS_OK) {
            first = UFORM_STATUS_DEVICE_FAULT;
            snprintf(cause, sizeof cause, "device %zu (GPU %d): %s", i, (int)device->ordinal, uform_last_error());
        }
    }
    if (first == UFORM_STATUS_OK) return UFORM_STATUS_OK;
    /* A sticky fault says so; any other failure is still the drain's, never an OK. */
    uform_status_t sticky = uform__vram_fault(executor, caller);
    return sticky != UFORM_STATUS_OK ? sticky : uform__fail(UFORM_STATUS_DEVICE_FAULT, "%s: %s", caller, cause);
}

static void vram_close(uform_executor_t *executor) {
    uform__vram_t *vram = uform__vram_of(executor);
    for (size_t i = 0; i < vram->device_count; i++) {
        uform__gpu_device_t *device = &vram->devices[i];
        if (!device->opened) continue;
        device->backend->device_free(device, device->scratch);
        device->backend->host_free(device, device->staging);
        device->scratch = device->staging = NULL;
        device->scratch_bytes = device->staging_bytes = 0;
        device->backend->close(device);
    }
}

static void vram_release_memory(uform_executor_t *executor) {
    uform__vram_t *vram = uform__vram_of(executor);
    uform__deallocate(vram->devices);
    uform__deallocate(vram);
    uform__executor_attach(executor, NULL, NULL);
}

const uform__executor_ops_t uform__vram_ops = {
    .fault = uform__vram_fault,
    .drain = vram_drain,
    .close = vram_close,
    .release_memory = vram_release_memory,
    .arena_new = uform__vram_arena_new,
};

/* ---- accessors ---- */

size_t uform_executor_devices(const uform_executor_t *executor) {
    if (!executor) return 0;
    /* Counted in, so a free racing this read waits for it; in a fork()ed child nothing frees
     * it, and leaving might take a mutex a vanished thread holds. */
    bool count_in = !uform__forked_since(executor->fork_generation);
    if (count_in) uform__enter(executor);
    const uform__vram_t *vram = uform__vram_of(executor);
    size_t count = vram ? vram->device_count : 0;
    if (count_in) uform__leave(executor);
    return count;
}

uform_gpu_class_t uform_executor_gpu_class(const uform_executor_t *executor) {
    if (!executor) return UFORM_GPU_CLASS_NONE;
    /* Counted in, as uform_executor_devices: free waits for this read. */
    bool count_in = !uform__forked_since(executor->fork_generation);
    if (count_in) uform__enter(executor);
    const uform__vram_t *vram = uform__vram_of(executor);
    uform_gpu_class_t gpu_class = vram ? vram->gpu_class : UFORM_GPU_CLASS_NONE;
    if (count_in) uform__leave(executor);
    return gpu_class;
}
