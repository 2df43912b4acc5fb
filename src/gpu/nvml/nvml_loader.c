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
#define FIELD_(field, symbol, type) type field;
    UFORM_NVML_ENTRY_POINTS(FIELD_)
#undef FIELD_
} nvml_api_t;

UFORM__LIBRARY_DEFINE(loader)
static nvml_api_t api;

#define ENTRY_(field, symbol, type) UFORM__LIBRARY_ENTRY(nvml_api_t, field, symbol, 0, symbol, false)
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

/* Where link `link` of `device` ends, when it is active: true with `*far` set. `*known` false
 * when NVML cannot say (a failing query other than the device having no such link). */
static bool active_link_end(uform_nvmlDevice device, unsigned link, pci_t *far, bool *known) {
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
    uform_nvmlPciInfo info;
    memset(&info, 0, sizeof info);
    if (api.nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, &info) != UFORM_NVML_SUCCESS) {
        *known = false;
        return false;
    }
    info.busId[sizeof info.busId - 1] = '\0';
    if (parse_pci(info.busId, far)) return true;
    /* The numeric fields, where busId does not parse: NVML names no function there. */
    *far = (pci_t){info.domain, info.bus, info.device, 0};
    return true;
}

/* Row `i` of the matrix: GPU i's active links, counted by the GPU at their far end. */
static void count_row(uform_nvmlDevice device, const pci_t *pcis, const bool *parsed, size_t count, size_t i,
                      int32_t *row) {
    bool known = true;
    for (size_t j = 0; j < count; j++) row[j] = 0;
    for (unsigned link = 0; link < UFORM_NVML_NVLINK_MAX_LINKS; link++) {
        pci_t far;
        if (!active_link_end(device, link, &far, &known)) continue;
        for (size_t j = 0; j < count; j++)
            if (j != i && parsed[j] && same_pci(&far, &pcis[j])) row[j]++;
    }
    if (!known)
        for (size_t j = 0; j < count; j++)
            if (j != i && !row[j]) row[j] = -1; /* a link NVML could not read may have gone there */
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
    if (!pcis || !parsed) {
        free(pcis);
        free(parsed);
        api.nvmlShutdown();
        if (capacity) snprintf(why, capacity, "no memory for %zu GPUs' PCI addresses", count);
        return UFORM_STATUS_OUT_OF_MEMORY;
    }
    for (size_t j = 0; j < count; j++) parsed[j] = parse_pci(pci_addresses[j], &pcis[j]);
    for (size_t i = 0; i < count; i++) {
        uform_nvmlDevice device = NULL;
        if (!parsed[i] || api.nvmlDeviceGetHandleByPciBusId_v2(pci_addresses[i], &device) != UFORM_NVML_SUCCESS)
            continue; /* not NVML's GPU (another vendor's): its row stays unknown */
        count_row(device, pcis, parsed, count, i, &nvlinks[i * count]);
        nvlinks[i * count + i] = 0;
    }
    free(pcis);
    free(parsed);
    api.nvmlShutdown();
    return UFORM_STATUS_OK;
}
