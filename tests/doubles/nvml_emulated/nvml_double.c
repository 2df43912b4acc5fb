/* A host-emulated NVML (libnvidia-ml.so.1): a test double of the entry points uform binds
 * (src/gpu/nvml/nvml_abi.h), with nvml.h's documented semantics (README.md). Its GPUs are the
 * CUDA double's: it parses the same UFORM_CUDA_DOUBLE_CONFIG with the CUDA double's own parser,
 * so both agree on every PCI address and NVLink group; UFORM_NVML_DOUBLE_CONFIG holds its own
 * faults and NVSwitch wiring. Only the seven entry points are exported (-fvisibility=hidden). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/double_config.h"
#include "emulated_config.h"

#define EXPORT __attribute__((visibility("default")))

/* nvmlReturn_t values nvml.h gives (each used below). */
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_UNKNOWN = 999
};
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
#define NVML_NVLINK_MAX_LINKS 18
/* Links joining each pair of one NVLink group, at most: a group of n GPUs gets
 * min(LINKS_PER_PEER, 18 / (n - 1)) per pair, so every GPU's links fit its 18. */
#define LINKS_PER_PEER 4
/* nvmlIntNvLinkDeviceType_t. */
enum { NVML_NVLINK_DEVICE_TYPE_GPU = 0x00, NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02 };
/* `nvswitch group=<g> switches=<n>` lines, at most; a group wired through switches has them all. */
#define MAX_SWITCHED_GROUPS 8
#define MAX_SWITCHES 18
/* The NVSwitches' PCI addresses: domain SWITCH_DOMAIN (one the configurations' GPUs do not use),
 * bus 18 x (the line's order) + the switch's index, device 0, function 0 (README.md). */
#define SWITCH_DOMAIN 0xFFFFu

typedef unsigned int nvmlReturn_t;
typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
/* A handle is the address of its GPU's entry in `gpus`. */
typedef struct gpu_t {
    const emulated_device_t *device;
    size_t index;                      /* in the configuration */
    int peer[NVML_NVLINK_MAX_LINKS];   /* the configuration index each link reaches; -1 none */
    int switch_bus[NVML_NVLINK_MAX_LINKS]; /* the bus of the NVSwitch a link reaches; -1 none */
} gpu_t;
typedef gpu_t *nvmlDevice_t;

static const double_config_error_t nvml_errors[] = {
    {"NVML_ERROR_UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
    {"NVML_ERROR_INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
    {"NVML_ERROR_NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
    {"NVML_ERROR_NOT_FOUND", NVML_ERROR_NOT_FOUND},
    {"NVML_ERROR_DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
    {"NVML_ERROR_LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND},
    {"NVML_ERROR_UNKNOWN", NVML_ERROR_UNKNOWN},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static emulated_config_t devices; /* the CUDA double's configuration: the GPUs */
static gpu_t gpus[EMULATED_MAX_DEVICES];
static size_t gpu_count;
static nvmlReturn_t init_result; /* `fault init=`; NVML_ERROR_UNKNOWN for a refused configuration */
static char refusal[256];
static unsigned init_count; /* nvmlInit_v2 and nvmlShutdown count: NVML is initialised while > 0 */
static nvmlReturn_t remote_type_result; /* `fault remote_type=`: what nvmlDeviceGetNvLinkRemoteDeviceType answers */
static struct {
    int group;
    unsigned switches;
} switched[MAX_SWITCHED_GROUPS];
static size_t switched_count;

/* `nvswitch group=<g> switches=<n>`: group g's GPUs reach each other through n NVSwitches. */
static void switch_line(char *rest, size_t number) {
    long group = -1, switches = 0;
    char *save = NULL;
    for (char *word = strtok_r(rest, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
        char key[16];
        long parsed;
        char tail;
        if (sscanf(word, "%15[^=]=%ld%c", key, &parsed, &tail) != 2) parsed = -1, snprintf(key, sizeof key, "%s", word);
        if (!strcmp(key, "group")) group = parsed;
        else if (!strcmp(key, "switches")) switches = parsed;
        else {
            double_config_refuse(refusal, sizeof refusal, number, "unknown nvswitch key '%s'", key);
            return;
        }
    }
    if (group < 0 || switches < 1 || switches > MAX_SWITCHES || switched_count == MAX_SWITCHED_GROUPS) {
        double_config_refuse(refusal, sizeof refusal, number,
                             "nvswitch needs group=<0 or more> switches=<1 to %d> (at most %d such lines)",
                             MAX_SWITCHES, MAX_SWITCHED_GROUPS);
        return;
    }
    switched[switched_count].group = (int)group;
    switched[switched_count++].switches = (unsigned)switches;
}

static void own_line(char *line, size_t number, void *context) {
    (void)context;
    char *key = line;
    if (!strncmp(key, "nvswitch", 8) && (key[8] == ' ' || key[8] == '\t')) {
        switch_line(key + 8, number);
        return;
    }
    if (strncmp(key, "fault", 5) || (key[5] != ' ' && key[5] != '\t')) {
        double_config_refuse(refusal, sizeof refusal, number, "unknown line '%s'", line);
        return;
    }
    key += 5;
    char *value = double_config_key_value(&key);
    if (!value || (strcmp(key, "init") && strcmp(key, "remote_type"))) {
        double_config_refuse(refusal, sizeof refusal, number, "unknown fault '%s'", key);
        return;
    }
    long result = double_config_error(value, nvml_errors, sizeof nvml_errors / sizeof nvml_errors[0]);
    if (result <= 0)
        double_config_refuse(refusal, sizeof refusal, number, "%s=%s is not an NVML error", key, value);
    else if (!strcmp(key, "init"))
        init_result = (nvmlReturn_t)result;
    else
        remote_type_result = (nvmlReturn_t)result;
}

/* Deals each GPU's links out to the other GPUs of its group, LINKS_PER_PEER (or fewer) each,
 * in configuration order; the rest stay disabled. A group wired through NVSwitches instead has
 * all 18 links of each GPU active, link l to switch l mod n (an HGX H100 board: 18 links over 4
 * switches). */
static void wire(void) {
    for (size_t i = 0; i < gpu_count; i++) {
        gpu_t *gpu = &gpus[i];
        for (size_t l = 0; l < NVML_NVLINK_MAX_LINKS; l++) gpu->peer[l] = gpu->switch_bus[l] = -1;
        int group = gpu->device->nvlink_group;
        if (group < 0) continue;
        size_t line = 0;
        while (line < switched_count && switched[line].group != group) line++;
        if (line < switched_count) {
            for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
                gpu->switch_bus[l] = (int)(MAX_SWITCHES * line + l % switched[line].switches);
            continue;
        }
        size_t members = 0;
        for (size_t j = 0; j < gpu_count; j++) members += gpus[j].device->nvlink_group == group;
        if (members < 2) continue;
        size_t per = NVML_NVLINK_MAX_LINKS / (members - 1);
        if (per > LINKS_PER_PEER) per = LINKS_PER_PEER;
        size_t link = 0;
        for (size_t j = 0; j < gpu_count; j++) {
            if (j == i || gpus[j].device->nvlink_group != group) continue;
            for (size_t k = 0; k < per; k++) gpu->peer[link++] = (int)j;
        }
    }
}

static void load(void) {
    char *owned = NULL;
    const char *unreadable = NULL;
    const char *text = double_config_text("UFORM_CUDA_DOUBLE_CONFIG", 1 << 20, &owned, &unreadable);
    if (text || unreadable) emulated_config_parse(text, &devices);
    if (unreadable) snprintf(devices.error, sizeof devices.error, "cannot read %s", unreadable);
    free(owned);
    owned = NULL;
    unreadable = NULL;
    text = double_config_text("UFORM_NVML_DOUBLE_CONFIG", 1 << 16, &owned, &unreadable);
    if (text) {
        char *copy = strdup(text);
        if (copy) double_config_lines(copy, own_line, NULL);
        free(copy);
    }
    if (unreadable) snprintf(refusal, sizeof refusal, "cannot read %s", unreadable);
    free(owned);
    if (devices.error[0] || refusal[0]) {
        fprintf(stderr, "NVML test double: configuration refused: %s\n", devices.error[0] ? devices.error : refusal);
        init_result = NVML_ERROR_UNKNOWN;
        return;
    }
    gpu_count = devices.device_count;
    for (size_t i = 0; i < gpu_count; i++) gpus[i] = (gpu_t){.device = &devices.devices[i], .index = i};
    /* A switch and a GPU never share a PCI address on a real machine. */
    for (size_t line = 0; line < switched_count; line++)
        for (unsigned k = 0; k < switched[line].switches; k++)
            for (size_t i = 0; i < gpu_count; i++) {
                const emulated_device_t *d = gpus[i].device;
                if (d->pci_domain == SWITCH_DOMAIN && d->pci_bus == MAX_SWITCHES * line + k && !d->pci_device &&
                    !d->pci_function) {
                    fprintf(stderr, "NVML test double: configuration refused: GPU %zu is at switch %u's address\n",
                            i, k);
                    init_result = NVML_ERROR_UNKNOWN;
                    return;
                }
            }
    wire();
}

/* The GPU behind a handle, or NULL for anything that is not one of ours. */
static gpu_t *gpu_of(nvmlDevice_t device) {
    for (size_t i = 0; i < gpu_count; i++)
        if (device == &gpus[i]) return device;
    return NULL;
}

static bool initialised(void) {
    pthread_mutex_lock(&lock);
    bool yes = init_count > 0;
    pthread_mutex_unlock(&lock);
    return yes;
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
    pthread_once(&once, load);
    if (init_result != NVML_SUCCESS) return init_result;
    pthread_mutex_lock(&lock);
    init_count++;
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    nvmlReturn_t result = init_count ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
    if (init_count) init_count--;
    pthread_mutex_unlock(&lock);
    return result;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    default: return "Unknown Error";
    }
}

/* nvml.h's three spellings, hexadecimal: domain:bus:device.function, domain:bus:device,
 * bus:device.function (domain 0). */
static bool parse_bus_id(const char *text, unsigned *domain, unsigned *bus, unsigned *device, unsigned *function) {
    char tail;
    *function = 0;
    if (sscanf(text, "%x:%x:%x.%x%c", domain, bus, device, function, &tail) == 4) return true;
    if (sscanf(text, "%x:%x:%x%c", domain, bus, device, &tail) == 3) return true;
    *domain = 0;
    return sscanf(text, "%x:%x.%x%c", bus, device, function, &tail) == 3;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pci_bus_id, nvmlDevice_t *device) {
    if (!initialised()) return NVML_ERROR_UNINITIALIZED;
    if (!pci_bus_id || !device) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned domain, bus, slot, function;
    if (!parse_bus_id(pci_bus_id, &domain, &bus, &slot, &function)) return NVML_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < gpu_count; i++) {
        const emulated_device_t *d = gpus[i].device;
        if (d->pci_domain == domain && d->pci_bus == bus && d->pci_device == slot && d->pci_function == function) {
            *device = &gpus[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* The checks every link query starts with: initialised, a handle of ours, a link index in
 * range, an output. A GPU on no NVLink group has no NVLink at all: NOT_SUPPORTED. */
static nvmlReturn_t link_checks(nvmlDevice_t device, unsigned link, const void *output, gpu_t **gpu) {
    if (!initialised()) return NVML_ERROR_UNINITIALIZED;
    *gpu = gpu_of(device);
    if (!*gpu || link >= NVML_NVLINK_MAX_LINKS || !output) return NVML_ERROR_INVALID_ARGUMENT;
    if ((*gpu)->device->nvlink_group < 0) return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, unsigned int *is_active) {
    gpu_t *gpu = NULL;
    nvmlReturn_t result = link_checks(device, link, is_active, &gpu);
    if (result != NVML_SUCCESS) return result;
    *is_active = gpu->peer[link] >= 0 || gpu->switch_bus[link] >= 0 ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci) {
    gpu_t *gpu = NULL;
    nvmlReturn_t result = link_checks(device, link, pci, &gpu);
    if (result != NVML_SUCCESS) return result;
    /* A disabled link has no far end to describe. */
    if (gpu->peer[link] < 0 && gpu->switch_bus[link] < 0) return NVML_ERROR_NOT_SUPPORTED;
    memset(pci, 0, sizeof *pci);
    if (gpu->switch_bus[link] >= 0) {
        unsigned bus = (unsigned)gpu->switch_bus[link];
        snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:00.0", SWITCH_DOMAIN, bus & 0xFFu);
        snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:00.0", SWITCH_DOMAIN, bus & 0xFFu);
        pci->domain = SWITCH_DOMAIN;
        pci->bus = bus;
        pci->pciDeviceId = 0x22A310DEu; /* a third-generation NVSwitch: device 0x22A3, vendor 0x10DE */
        return NVML_SUCCESS;
    }
    const emulated_device_t *far = gpus[gpu->peer[link]].device;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", far->pci_domain & 0xFFFF, far->pci_bus,
             far->pci_device, far->pci_function);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.%X", far->pci_domain, far->pci_bus, far->pci_device,
             far->pci_function);
    pci->domain = far->pci_domain;
    pci->bus = far->pci_bus;
    pci->device = far->pci_device;
    pci->pciDeviceId = 0x233010DEu; /* an H100 SXM5: device 0x2330, vendor 0x10DE */
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                       unsigned int *type) {
    gpu_t *gpu = NULL;
    nvmlReturn_t result = link_checks(device, link, type, &gpu);
    if (result != NVML_SUCCESS) return result;
    if (remote_type_result != NVML_SUCCESS) return remote_type_result;
    if (gpu->peer[link] < 0 && gpu->switch_bus[link] < 0) return NVML_ERROR_NOT_SUPPORTED;
    *type = gpu->switch_bus[link] >= 0 ? NVML_NVLINK_DEVICE_TYPE_SWITCH : NVML_NVLINK_DEVICE_TYPE_GPU;
    return NVML_SUCCESS;
}
