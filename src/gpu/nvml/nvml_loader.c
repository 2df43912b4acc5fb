/* NVML, loaded once per process (core/dynamic_library.h), and the NVLink counts the report
 * asks of it (nvml_loader.h). Nothing here links against NVML: libnvidia-ml.so.1 (or
 * UFORM_NVML_LIBRARY) is dlopen'ed and nvml_abi.h's entry points bound by name. */
#include "gpu/nvml/nvml_loader.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dynamic_library.h"
#include "gpu/nvml/nvml_abi.h"

#define DEFAULT_LIBRARY "libnvidia-ml.so.1"

typedef struct nvml_api_t {
#define FIELD_(field, symbol, type, optional) type field;
    UFORM_NVML_ENTRY_POINTS(FIELD_)
#undef FIELD_
} nvml_api_t;

UFORM__LIBRARY_DEFINE(loader)
static nvml_api_t api;

#define ENTRY_(field, symbol, type, optional) UFORM__LIBRARY_ENTRY(nvml_api_t, field, symbol, 0, symbol, optional)
static const uform__library_entry_t entries[] = {UFORM_NVML_ENTRY_POINTS(ENTRY_)};

static uform_status_t load(void) {
    static const char *const candidates[] = {DEFAULT_LIBRARY, NULL};
    if (!uform__library_open_first(&loader, "NVML", "UFORM_NVML_LIBRARY", candidates))
        return uform__library_fail(&loader, UFORM_STATUS_NOT_FOUND, "%s", loader.note);
    char why[512];
    uform_status_t status = uform__library_bind(&loader, "NVML library", NULL, NULL, entries,
                                                sizeof entries / sizeof entries[0], &api, sizeof api, why, sizeof why);
    if (status != UFORM_STATUS_OK) return uform__library_fail(&loader, status, "%s", why);
    return UFORM_STATUS_OK;
}

static const char *error_string(uform_nvmlReturn result, char *buffer, size_t capacity) {
    const char *text = api.nvmlErrorString ? api.nvmlErrorString(result) : NULL;
    if (text && *text) return text;
    snprintf(buffer, capacity, "nvmlReturn_t %u", result);
    return buffer;
}

typedef struct pci_t {
    unsigned domain, bus, device, function;
} pci_t;

/* "0000:1b:00.0" and NVML's "00000000:1B:00.0" alike: hexadecimal fields. */
static bool parse_pci(const char *text, pci_t *pci) {
    return sscanf(text, "%x:%x:%x.%x", &pci->domain, &pci->bus, &pci->device, &pci->function) == 4;
}

static bool same_pci(const pci_t *a, const pci_t *b) {
    return a->domain == b->domain && a->bus == b->bus && a->device == b->device && a->function == b->function;
}

/* Where one active link ends: another GPU, or an NVSwitch (then `far` is the switch's address). */
typedef struct link_end_t {
    pci_t far;
    bool switch_end;
} link_end_t;

/* A GPU's active links, as NVML tells them. `known` false when a query NVML should answer
 * failed: a link it could not read may go anywhere. */
typedef struct gpu_links_t {
    link_end_t ends[UFORM_NVML_NVLINK_MAX_LINKS];
    size_t count;
    bool known, asked;
} gpu_links_t;

/* Where link `link` of `device` ends, when it is active: true with `*end` set. `*known` false
 * when NVML cannot say (a failing query other than the device having no such link). */
static bool active_link_end(uform_nvmlDevice device, unsigned link, link_end_t *end, bool *known) {
    uform_nvmlEnableState state = UFORM_NVML_FEATURE_DISABLED;
    uform_nvmlReturn result = api.nvmlDeviceGetNvLinkState(device, link, &state);
    /* A GPU without NVLink, or with fewer links than the index, answers NOT_SUPPORTED or
     * INVALID_ARGUMENT: no link there, which is an answer. */
    if (result == UFORM_NVML_ERROR_NOT_SUPPORTED || result == UFORM_NVML_ERROR_INVALID_ARGUMENT) return false;
    if (result != UFORM_NVML_SUCCESS) {
        *known = false;
        return false;
    }
    if (state != UFORM_NVML_FEATURE_ENABLED) return false;
    /* Without the type query (NVML before R410) or where the device cannot answer it, the far
     * end is taken for a GPU: the only kind there was before NVSwitches. */
    uform_nvmlIntNvLinkDeviceType type = UFORM_NVML_NVLINK_DEVICE_TYPE_GPU;
    if (api.nvmlDeviceGetNvLinkRemoteDeviceType) {
        result = api.nvmlDeviceGetNvLinkRemoteDeviceType(device, link, &type);
        if (result == UFORM_NVML_ERROR_NOT_SUPPORTED)
            type = UFORM_NVML_NVLINK_DEVICE_TYPE_GPU;
        else if (result != UFORM_NVML_SUCCESS) {
            *known = false;
            return false;
        }
    }
    if (type != UFORM_NVML_NVLINK_DEVICE_TYPE_GPU && type != UFORM_NVML_NVLINK_DEVICE_TYPE_SWITCH) {
        if (type == UFORM_NVML_NVLINK_DEVICE_TYPE_UNKNOWN) *known = false;
        return false; /* an IBM NPU (a POWER9 CPU): not a GPU pair */
    }
    end->switch_end = type == UFORM_NVML_NVLINK_DEVICE_TYPE_SWITCH;
    uform_nvmlPciInfo info;
    memset(&info, 0, sizeof info);
    if (api.nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, &info) != UFORM_NVML_SUCCESS) {
        *known = false;
        return false;
    }
    info.busId[sizeof info.busId - 1] = '\0';
    if (parse_pci(info.busId, &end->far)) return true;
    /* The numeric fields, where busId does not parse: NVML names no function there. */
    end->far = (pci_t){info.domain, info.bus, info.device, 0};
    return true;
}

static void read_links(uform_nvmlDevice device, gpu_links_t *links) {
    links->known = true;
    links->asked = true;
    links->count = 0;
    for (unsigned link = 0; link < UFORM_NVML_NVLINK_MAX_LINKS; link++)
        if (active_link_end(device, link, &links->ends[links->count], &links->known)) links->count++;
}

/* Whether GPU `links` has a link ending at switch `address`. */
static bool reaches_switch(const gpu_links_t *links, const pci_t *address) {
    for (size_t k = 0; k < links->count; k++)
        if (links->ends[k].switch_end && same_pci(&links->ends[k].far, address)) return true;
    return false;
}

/* Row `i` of the matrix: GPU i's active links, counted by the GPU at their far end; a link to an
 * NVSwitch counts for every other GPU with a link to that same switch (the switch carries it to
 * each of them, which is what `nvidia-smi topo -m` shows as NV18 on an HGX board). */
static void count_row(const gpu_links_t *all, const pci_t *pcis, const bool *parsed, size_t count, size_t i,
                      int32_t *row) {
    const gpu_links_t *links = &all[i];
    for (size_t j = 0; j < count; j++) row[j] = 0;
    for (size_t k = 0; k < links->count; k++) {
        const link_end_t *end = &links->ends[k];
        for (size_t j = 0; j < count; j++) {
            if (j == i) continue;
            if (end->switch_end ? all[j].asked && reaches_switch(&all[j], &end->far)
                                : parsed[j] && same_pci(&end->far, &pcis[j]))
                row[j]++;
        }
    }
    bool through_switch = false;
    for (size_t k = 0; k < links->count; k++) through_switch |= links->ends[k].switch_end;
    for (size_t j = 0; j < count; j++)
        /* A link NVML could not read may have gone there: one of GPU i's, or (when i reaches a
         * switch) one of GPU j's that may end at that switch. */
        if (j != i && !row[j] && (!links->known || (through_switch && all[j].asked && !all[j].known))) row[j] = -1;
}

uform_status_t uform__nvml_nvlinks(const char *const *pci_addresses, size_t count, int32_t *nvlinks, char *why,
                                   size_t capacity) {
    if (capacity) why[0] = '\0';
    for (size_t k = 0; k < count * count; k++) nvlinks[k] = -1;
    uform_status_t status = uform__library_load_once(&loader, load, &api, sizeof api);
    if (status != UFORM_STATUS_OK) {
        if (capacity) snprintf(why, capacity, "%s", loader.message);
        return status;
    }
    uform_nvmlReturn result = api.nvmlInit_v2();
    if (result != UFORM_NVML_SUCCESS) {
        char buffer[32];
        if (capacity) snprintf(why, capacity, "nvmlInit_v2: %s", error_string(result, buffer, sizeof buffer));
        return UFORM_STATUS_DEVICE_FAULT;
    }
    pci_t *pcis = calloc(count ? count : 1, sizeof *pcis);
    bool *parsed = calloc(count ? count : 1, sizeof *parsed);
    gpu_links_t *links = calloc(count ? count : 1, sizeof *links);
    if (!pcis || !parsed || !links) {
        free(pcis);
        free(parsed);
        free(links);
        api.nvmlShutdown();
        if (capacity) snprintf(why, capacity, "no memory for %zu GPUs' PCI addresses", count);
        return UFORM_STATUS_OUT_OF_MEMORY;
    }
    for (size_t j = 0; j < count; j++) parsed[j] = parse_pci(pci_addresses[j], &pcis[j]);
    /* Every GPU's links first: a link to a switch counts for the GPUs on that switch. */
    for (size_t i = 0; i < count; i++) {
        uform_nvmlDevice device = NULL;
        if (!parsed[i] || api.nvmlDeviceGetHandleByPciBusId_v2(pci_addresses[i], &device) != UFORM_NVML_SUCCESS)
            continue; /* not NVML's GPU (another vendor's): its row stays unknown */
        read_links(device, &links[i]);
    }
    for (size_t i = 0; i < count; i++) {
        if (!links[i].asked) continue;
        count_row(links, pcis, parsed, count, i, &nvlinks[i * count]);
        nvlinks[i * count + i] = 0;
    }
    free(pcis);
    free(parsed);
    free(links);
    api.nvmlShutdown();
    return UFORM_STATUS_OK;
}
