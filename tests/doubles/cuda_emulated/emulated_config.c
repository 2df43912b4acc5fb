/* Parsing the CUDA driver test double's configuration (README.md has the grammar). Strict on
 * purpose: a typo in a test's configuration must fail loudly, not emulate a different machine. */
#include "emulated_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/double_config.h"
#include "emulated_errors.h"

static const double_config_error_t errors[] = {
#define ROW_(name, number) {#name, number},
    EMULATED_CUDA_ERRORS(ROW_)
#undef ROW_
};

long emulated_result_parse(const char *text) {
    return double_config_error(text, errors, sizeof errors / sizeof errors[0]);
}

#define refuse(config, line, ...) double_config_refuse((config)->error, sizeof (config)->error, (line), __VA_ARGS__)

/* "80G", "512M", "1073741824": binary suffixes. Digits first (strtoull would take a sign or
 * blanks and wrap "-1" to a huge size), and no value past 64 bits. */
static int parse_bytes(const char *text, uint64_t *bytes) {
    if (!isdigit((unsigned char)text[0])) return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno == ERANGE) return 0;
    int shift = double_config_size_shift(end);
    if (shift < 0) return 0;
    if (value > (UINT64_MAX >> shift)) return 0;
    *bytes = (uint64_t)value << shift;
    return 1;
}

static void parse_device(char *rest, emulated_config_t *config, size_t line) {
    if (config->device_count == EMULATED_MAX_DEVICES) return refuse(config, line, "more than %d devices", EMULATED_MAX_DEVICES);
    size_t index = config->device_count++;
    emulated_device_t *device = &config->devices[index];
    /* Defaults: an H100 SXM at a bus number of its own. */
    device->compute_major = 9;
    device->compute_minor = 0;
    device->multiprocessors = 132;
    device->memory_bytes = 80ull << 30;
    device->pci_bus = 0x10 + (unsigned)index;
    snprintf(device->name, sizeof device->name, "Emulated CUDA device %zu", index);
    device->multicast = 0;     /* most GPUs sit on no NVSwitch */
    device->nvlink_group = -1; /* and reach no peer */
    device->allocation_granularity = 2ull << 20; /* the large-page size current GPUs report */
    double_config_words_t words = {.next = rest};
    for (char *key, *value; double_config_word(&words, &key, &value);) {
        if (!value) {
            refuse(config, line, "'%s' is not key=value", key);
        } else if (strcmp(key, "name") == 0) { /* the rest of the line: the last word */
            double_config_name(value, device->name, sizeof device->name);
            return;
        } else if (strcmp(key, "granularity") == 0) {
            uint64_t bytes = 0;
            if (!parse_bytes(value, &bytes) || bytes < 4096 || (bytes & (bytes - 1)))
                refuse(config, line, "granularity=%s is not a power of two of at least 4K", value);
            else device->allocation_granularity = bytes;
        } else if (strcmp(key, "cc") == 0) {
            if (sscanf(value, "%d.%d", &device->compute_major, &device->compute_minor) != 2)
                refuse(config, line, "cc=%s is not major.minor", value);
        } else if (strcmp(key, "sms") == 0) {
            device->multiprocessors = atoi(value);
            if (device->multiprocessors <= 0) refuse(config, line, "sms=%s is not a positive count", value);
        } else if (strcmp(key, "memory") == 0) {
            if (!parse_bytes(value, &device->memory_bytes)) refuse(config, line, "memory=%s is not a size", value);
        } else if (strcmp(key, "pci") == 0) {
            if (sscanf(value, "%x:%x:%x.%x", &device->pci_domain, &device->pci_bus, &device->pci_device,
                       &device->pci_function) != 4)
                refuse(config, line, "pci=%s is not domain:bus:device.function", value);
        } else if (strcmp(key, "multicast") == 0) {
            if (strcmp(value, "yes") == 0) device->multicast = 1;
            else if (strcmp(value, "no") == 0) device->multicast = 0;
            else refuse(config, line, "multicast=%s is not yes or no", value);
        } else if (strcmp(key, "nvlink") == 0) {
            char *end = NULL;
            errno = 0;
            long group = strtol(value, &end, 10);
            if (!isdigit((unsigned char)value[0]) || *end || errno == ERANGE || group > 1000000)
                refuse(config, line, "nvlink=%s is not a group number", value);
            else device->nvlink_group = (int)group;
        } else {
            refuse(config, line, "unknown device key '%s'", key);
        }
    }
}

static const char *const multicast_step_names[MULTICAST_STEPS] = {"granularity", "create", "add", "memcreate",
                                                                  "bind", "unbind"};

const char *emulated_multicast_step_name(multicast_step_t step) {
    return step < MULTICAST_STEPS ? multicast_step_names[step] : "?";
}

/* `fault multicast=<step>[@<ordinal>][:<CUDA error>]`: every call of that step (concerning that
 * driver ordinal: add, memcreate, bind and unbind name a device) answers the error, default
 * CUDA_ERROR_NOT_PERMITTED (which cuda.h lists for each of these entry points). */
static void parse_multicast_fault(char *value, emulated_config_t *config, size_t line) {
    if (config->multicast_fault_count == EMULATED_MAX_MULTICAST_FAULTS)
        return refuse(config, line, "more than %d multicast faults", EMULATED_MAX_MULTICAST_FAULTS);
    emulated_multicast_fault_t fault = {.device = -1, .result = 800 /* CUDA_ERROR_NOT_PERMITTED */};
    char *error = strchr(value, ':');
    if (error) {
        *error++ = '\0';
        long result = emulated_result_parse(error);
        if (result <= 0) return refuse(config, line, "fault multicast=...:%s is not a CUDA error", error);
        fault.result = (unsigned)result;
    }
    char *at = strchr(value, '@');
    if (at) {
        *at++ = '\0';
        char *end = NULL;
        long ordinal = strtol(at, &end, 10);
        if (!isdigit((unsigned char)at[0]) || *end || ordinal >= EMULATED_MAX_DEVICES)
            return refuse(config, line, "fault multicast=%s@%s: not a device ordinal", value, at);
        fault.device = (int)ordinal;
    }
    int found = 0;
    for (int step = 0; step < MULTICAST_STEPS; step++)
        if (strcmp(value, multicast_step_names[step]) == 0) {
            fault.step = (multicast_step_t)step;
            found = 1;
        }
    if (!found)
        return refuse(config, line, "fault multicast=%s is not granularity, create, add, memcreate, bind or unbind", value);
    if (at && (fault.step == MULTICAST_STEP_GRANULARITY || fault.step == MULTICAST_STEP_CREATE))
        return refuse(config, line, "fault multicast=%s names no device", value);
    config->multicast_faults[config->multicast_fault_count++] = fault;
}

/* `fault sticky=N[:<CUDA error>]`: the Nth stream operation faults its context with the error
 * (a name the double knows or a number, not CUDA_SUCCESS), default CUDA_ERROR_ILLEGAL_ADDRESS. */
static void parse_sticky_fault(char *value, emulated_config_t *config, size_t line) {
    unsigned result = 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */
    char *error = strchr(value, ':');
    if (error) {
        *error++ = '\0';
        long parsed = emulated_result_parse(error);
        if (parsed <= 0) return refuse(config, line, "fault sticky=%s:%s is not a CUDA error", value, error);
        result = (unsigned)parsed;
    }
    unsigned long n = 0;
    if (!double_config_count(value, &n)) return refuse(config, line, "fault sticky=%s is not a positive count", value);
    config->sticky_fault = n;
    config->sticky_result = result;
}

/* `fault current=<ordinal>@<n>[:<error>]`: the n-th cuCtxSetCurrent making that driver ordinal's
 * context current (counted per device from 1) answers the error (a name the double knows or a
 * number, not CUDA_SUCCESS), default CUDA_ERROR_INVALID_CONTEXT, and changes nothing. */
static void parse_current_fault(char *value, emulated_config_t *config, size_t line) {
    unsigned result = 201; /* CUDA_ERROR_INVALID_CONTEXT */
    char *error = strchr(value, ':');
    if (error) {
        *error++ = '\0';
        long parsed = emulated_result_parse(error);
        if (parsed <= 0) return refuse(config, line, "fault current=%s:%s is not a CUDA error", value, error);
        result = (unsigned)parsed;
    }
    char *at = strchr(value, '@');
    unsigned long ordinal = 0, n = 0;
    if (at) *at++ = '\0';
    if (!at || !double_config_count(at, &n) || (strcmp(value, "0") != 0 && !double_config_count(value, &ordinal)) ||
        ordinal >= EMULATED_MAX_DEVICES)
        return refuse(config, line, "fault current takes <ordinal>@<positive count>[:<CUDA error>]");
    config->current_fault_ordinal = (int)ordinal;
    config->current_fault = n;
    config->current_result = result;
}

static void parse_fault(char *rest, emulated_config_t *config, size_t line) {
    char *value = double_config_key_value(&rest);
    if (!value) return refuse(config, line, "fault '%s' is not key=value", rest);
    if (strcmp(rest, "init") == 0) {
        long result = emulated_result_parse(value);
        if (result <= 0) return refuse(config, line, "fault init=%s is not a CUDA error", value);
        config->init_result = (unsigned)result;
    } else if (strcmp(rest, "missing") == 0) {
        if (config->missing_count == EMULATED_MAX_MISSING) return refuse(config, line, "too many missing entry points");
        snprintf(config->missing[config->missing_count++], sizeof config->missing[0], "%s", value);
    } else if (strcmp(rest, "multicast") == 0) {
        parse_multicast_fault(value, config, line);
    } else if (strcmp(rest, "alloc") == 0) {
        unsigned long n = 0;
        if (!double_config_count(value, &n))
            return refuse(config, line, "fault %s=%s is not a positive count", rest, value);
        config->alloc_fault = n;
    } else if (strcmp(rest, "sticky") == 0) {
        parse_sticky_fault(value, config, line);
    } else if (strcmp(rest, "current") == 0) {
        parse_current_fault(value, config, line);
    } else {
        refuse(config, line, "unknown fault '%s'", rest);
    }
}

/* `link bandwidth=1G`: the host-device link's speed in bytes per second (binary suffixes, like
 * memory=), positive. */
static void parse_link(char *rest, emulated_config_t *config, size_t line) {
    int any = 0;
    for (char *save = NULL, *key = strtok_r(rest, " \t", &save); key; key = strtok_r(NULL, " \t", &save)) {
        any = 1;
        char *value = strchr(key, '=');
        if (!value) return refuse(config, line, "link '%s' is not key=value", key);
        *value++ = '\0';
        if (strcmp(key, "bandwidth") != 0) return refuse(config, line, "unknown link key '%s'", key);
        if (!parse_bytes(value, &config->link_bandwidth) || config->link_bandwidth == 0)
            return refuse(config, line, "link bandwidth=%s is not a positive number of bytes per second", value);
    }
    if (!any) refuse(config, line, "link takes bandwidth=<bytes per second>");
}

static void parse_line(char *entry, size_t line, void *context) {
    emulated_config_t *config = context;
    size_t kind_length = strcspn(entry, " \t");
    char *rest = entry + kind_length;
    if (*rest) *rest++ = '\0';
    if (strcmp(entry, "device") == 0) parse_device(rest, config, line);
    else if (strcmp(entry, "fault") == 0) parse_fault(rest, config, line);
    else if (strcmp(entry, "link") == 0) parse_link(rest, config, line);
    else if (strcmp(entry, "driver") == 0) {
        if (sscanf(rest, " version=%d", &config->driver_version) != 1 || config->driver_version <= 0)
            refuse(config, line, "driver takes version=<1000*major+10*minor>");
    } else {
        refuse(config, line, "unknown line kind '%s'", entry);
    }
}

void emulated_config_parse(const char *text, emulated_config_t *config) {
    memset(config, 0, sizeof *config);
    config->driver_version = 12080;
    if (!text) return;
    char *copy = strdup(text);
    if (!copy) return refuse(config, 0, "no memory");
    double_config_lines(copy, parse_line, config);
    free(copy);
}
