/* The mesh's public verbs: bootstrap validates, takes a reference on its VRAM executor (a mesh
 * holds it, like a device arena), probes this host's NVLink multicast, meets the other processes
 * (mesh_rendezvous.c) and, where libnccl loads, creates this process's NCCL communicators from
 * the id index 0 published. Free destroys them, then releases the executor. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/memory.h"
#include "executor/executor_internal.h"
#include "gpu/vram_internal.h"
#include "mesh/mesh_internal.h"
#include "mesh/mesh_rendezvous.h"

#define UFORM_MESH_TIMEOUT_DEFAULT 120.0

struct uform_mesh_t {
    uform_mesh_description_t description;
    uform_executor_t *executor; /* referenced: released by uform_mesh_free */
    uint32_t fork_generation;   /* a fork()ed child never touches the executor (freed there) */
    uform__nccl_communicators_t nccl;
    char no_data_plane[384]; /* why there are no communicators ("" when there are) */
};

static uform_status_t validate(const uform_mesh_options_t *options, const char *verb) {
    if (options->struct_size < offsetof(uform_mesh_options_t, cancel))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: options->struct_size is %zu, expected %zu (use UFORM_MESH_OPTIONS_INIT)", verb,
                           options->struct_size, sizeof(uform_mesh_options_t));
    size_t count = options->host_domain_count ? options->host_domain_count : 1;
    if (options->host_domain_index >= count)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: host_domain_index %zu is outside a run of %zu", verb,
                           options->host_domain_index, count);
    if (count > 65536)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a run of %zu processes is more than 65536", verb, count);
    if (!(options->timeout_seconds >= 0) || options->timeout_seconds > 1e7)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: timeout_seconds must be 0 (120 s) or positive", verb);
    if (count > 1 && (!options->directory || !options->job))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a run with peers needs a directory and a job", verb);
    return UFORM_STATUS_OK;
}

/* The cancel flag, where the caller's options are of a size that has it. */
static const volatile int *cancel_of(const uform_mesh_options_t *options) {
    return options->struct_size >= offsetof(uform_mesh_options_t, cancel) + sizeof options->cancel ? options->cancel
                                                                                                 : NULL;
}

/* This process's NCCL communicators, or why there are none (the mesh forms either way). */
static uform_status_t hand_off(uform_mesh_t *mesh, const uform__mesh_roster_t *roster, double timeout,
                               const volatile int *cancel, const char *verb) {
    if (!roster->has_nccl_id) {
        snprintf(mesh->no_data_plane, sizeof mesh->no_data_plane,
                 "no data plane: index 0 published no NCCL id (no libnccl.so.2 there)");
        return UFORM_STATUS_OK;
    }
    uform_status_t status = uform__nccl_available(NULL);
    if (status != UFORM_STATUS_OK) {
        /* Index 0 has NCCL, this process not: the run's collectives would hang without it. */
        return uform__fail(UFORM_STATUS_MISMATCH, "%s: index 0 publishes an NCCL id, but this process has no NCCL: %s",
                           verb, uform_last_error());
    }
    const uform_mesh_description_t *d = &mesh->description;
    return uform__nccl_communicators_create_bounded(mesh->executor, roster->nccl_id, d->first_gpu_index,
                                                    d->gpus_per_colocated_domain, timeout, cancel, &mesh->nccl);
}

uform_status_t uform_mesh_bootstrap(uform_executor_t *executor, const uform_mesh_options_t *options,
                                    uform_mesh_t **mesh_out) {
    static const char verb[] = "uform_mesh_bootstrap";
    if (!mesh_out) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: mesh output is NULL", verb);
    *mesh_out = NULL;
    uform_mesh_options_t defaults = UFORM_MESH_OPTIONS_INIT;
    if (!options) options = &defaults;
    uform_status_t status = validate(options, verb);
    if (status != UFORM_STATUS_OK) return status;
    if (!executor)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the NULL executor drives no GPU; the mesh needs a "
                                                          "VRAM executor",
                           verb);
    status = uform__enter_call(executor, verb);
    if (status != UFORM_STATUS_OK) return status;
    if (!uform__vram_of(executor)) {
        uform__leave(executor);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: a RAM executor drives no GPU; the mesh needs a VRAM "
                                                          "executor (for_vram)",
                           verb);
    }
    status = uform__vram_fault(executor, verb);
    if (status != UFORM_STATUS_OK) {
        uform__leave(executor);
        return status;
    }
    uform_mesh_t *mesh = uform__allocate_zeroed(1, sizeof *mesh);
    if (!mesh) {
        uform__leave(executor);
        return uform__fail(UFORM_STATUS_OUT_OF_MEMORY, "%s: mesh", verb);
    }
    mesh->executor = executor;
    mesh->fork_generation = uform__fork_generation();

    /* This process's facts. */
    size_t count = options->host_domain_count ? options->host_domain_count : 1;
    double timeout = options->timeout_seconds > 0 ? options->timeout_seconds : UFORM_MESH_TIMEOUT_DEFAULT;
    uform__mesh_facts_t mine = {.index = options->host_domain_index,
                                .count = count,
                                .gpus = uform__vram_of(executor)->device_count,
                                .gpu_class = (uint64_t)uform__vram_of(executor)->gpu_class,
                                .pid = (uint64_t)getpid()};
    /* An NVLink domain spans at most the run's GPUs: a larger one no run could have. */
    size_t run_gpus = uform__vram_of(executor)->device_count * count;
    if (options->gpus_per_multimem_domain > run_gpus) {
        uform__deallocate(mesh);
        uform__leave(executor);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: gpus_per_multimem_domain %zu is more than the run's %zu GPUs (%zu per process, %zu "
                           "processes): 0 derives it, 1 to %zu are a domain's size",
                           verb, options->gpus_per_multimem_domain, run_gpus, uform__vram_of(executor)->device_count, count,
                           run_gpus);
    }
    mine.multimem = options->gpus_per_multimem_domain ? options->gpus_per_multimem_domain
                                                      : uform__mesh_multimem_extent(executor);
    char why[256] = "";
    mine.multicast = mine.multimem > 1 && uform__mesh_multicast_probe(executor, why, sizeof why);
    if (gethostname(mine.host, sizeof mine.host - 1) != 0) snprintf(mine.host, sizeof mine.host, "unknown");
    uform__mesh_identity(&mine);

    /* Index 0 (or a process alone) makes the NCCL id, where NCCL loads. */
    uint8_t id[UFORM_NCCL_UNIQUE_ID_BYTES];
    bool have_id = false;
    char nccl_note[384] = "";
    if (mine.index == 0) {
        if (uform__nccl_available(NULL) == UFORM_STATUS_OK && uform__nccl_unique_id(id) == UFORM_STATUS_OK)
            have_id = true;
        else
            snprintf(nccl_note, sizeof nccl_note, "no data plane: %s", uform_last_error());
        mine.nccl = have_id;
    } else {
        /* A fact index 0 checks: where it publishes an id, every process needs NCCL. */
        mine.nccl = uform__nccl_available(NULL) == UFORM_STATUS_OK;
    }

    uform__mesh_roster_t roster = {0};
    if (count == 1) {
        roster = (uform__mesh_roster_t){.count = 1, .gpus = mine.gpus, .gpu_class = mine.gpu_class,
                                        .multimem = mine.multimem, .all_multicast = mine.multicast,
                                        .has_nccl_id = have_id};
        if (have_id) memcpy(roster.nccl_id, id, sizeof id);
    } else {
        status = uform__mesh_rendezvous(options->directory, options->job, timeout, &mine, have_id ? id : NULL, &roster,
                                        cancel_of(options), verb);
    }
    if (status == UFORM_STATUS_OK) {
        uform_mesh_description_t *d = &mesh->description;
        d->gpus_per_host_domain = (size_t)roster.gpus;
        d->gpus_per_multimem_domain = (size_t)roster.multimem;
        d->gpus_per_colocated_domain = (size_t)(roster.gpus * roster.count);
        d->host_domain_index = options->host_domain_index;
        d->first_gpu_index = (size_t)(roster.gpus * options->host_domain_index);
        d->multimem_tier = roster.all_multicast && roster.multimem > 1 ? UFORM_MULTIMEM_TIER_SWITCH_REDUCED
                                                                       : UFORM_MULTIMEM_TIER_PEER_READ;
        d->gpu_class = (uint32_t)roster.gpu_class;
        status = hand_off(mesh, &roster, timeout, cancel_of(options), verb);
        if (status == UFORM_STATUS_OK && !roster.has_nccl_id && nccl_note[0])
            snprintf(mesh->no_data_plane, sizeof mesh->no_data_plane, "%s", nccl_note);
    }
    if (status != UFORM_STATUS_OK) {
        uform__deallocate(mesh);
        uform__leave(executor);
        return status;
    }
    /* Taken while counted in, so free has not begun: the mesh now holds the executor. */
    uform__executor_retain(executor);
    uform__leave(executor);
    *mesh_out = mesh;
    return UFORM_STATUS_OK;
}

uform_status_t uform_mesh_describe(const uform_mesh_t *mesh, uform_mesh_description_t *description) {
    if (!mesh || !description)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_mesh_describe: NULL argument");
    *description = mesh->description;
    return UFORM_STATUS_OK;
}

uform_status_t uform_mesh_communicator(const uform_mesh_t *mesh, size_t device, void **communicator) {
    static const char verb[] = "uform_mesh_communicator";
    if (!mesh || !communicator) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: NULL argument", verb);
    if (device >= mesh->description.gpus_per_host_domain)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: device %zu of %zu", verb, device,
                           mesh->description.gpus_per_host_domain);
    if (!mesh->nccl.communicators)
        return uform__fail(UFORM_STATUS_NOT_FOUND, "%s: %s", verb,
                           mesh->no_data_plane[0] ? mesh->no_data_plane : "no data plane");
    *communicator = mesh->nccl.communicators[device];
    return UFORM_STATUS_OK;
}

void uform_mesh_free(uform_mesh_t *mesh) {
    if (!mesh) return;
    /* In a fork()ed child neither NCCL nor the driver is called: the host memory goes. */
    if (!uform__forked_since(mesh->fork_generation)) {
        uform__nccl_communicators_destroy(&mesh->nccl);
        uform__executor_release(mesh->executor);
    }
    uform__deallocate(mesh);
}
