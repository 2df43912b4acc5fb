/* Parsing the HIP runtime test double's configuration (README.md has the grammar). Strict on
 * purpose: a typo in a test's configuration must fail loudly, not emulate a different machine. */
#include "hip_double_config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/double_config.h"
#include "hip_double_errors.h"

static const double_config_error_t errors[] = {
#define ROW_(name, number) {#name, number},
    HIP_DOUBLE_ERRORS(ROW_)
#undef ROW_
};

long hip_double_error_parse(const char *text) {
    return double_config_error(text, errors, sizeof errors / sizeof errors[0]);
}

#define refuse(config, line, ...) double_config_refuse((config)->error, sizeof (config)->error, (line), __VA_ARGS__)

/* "192G", "512M", "1073741824": binary suffixes. */
static int parse_bytes(const char *text, uint64_t *bytes) {
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || text[0] == '-') return 0;
    int shift = double_config_size_shift(end);
    if (shift < 0) return 0;
    *bytes = (uint64_t)value << shift;
    return 1;
}

/* HIP's major.minor from the architecture: gfxXYZ is X.Y, gfxWXYZ (gfx1100, gfx1250) is WX.Y. */
static int parse_arch(const char *arch, int *major, int *minor) {
    if (strncmp(arch, "gfx", 3) != 0) return 0;
    size_t digits = strcspn(arch + 3, ":");
    if (digits != 3 && digits != 4) return 0;
    for (size_t i = 0; i < digits; i++)
        if (!isxdigit((unsigned char)arch[3 + i])) return 0; /* gfx90a: the last is a hex stepping */
    size_t major_digits = digits - 2;
    *major = 0;
    for (size_t i = 0; i < major_digits; i++) {
        if (!isdigit((unsigned char)arch[3 + i])) return 0;
        *major = *major * 10 + (arch[3 + i] - '0');
    }
    if (!isdigit((unsigned char)arch[3 + major_digits])) return 0;
    *minor = arch[3 + major_digits] - '0';
    return 1;
}

static void parse_device(char *rest, hip_double_config_t *config, size_t line) {
    if (config->device_count == HIP_DOUBLE_MAX_DEVICES)
        return refuse(config, line, "more than %d devices", HIP_DOUBLE_MAX_DEVICES);
    size_t index = config->device_count++;
    hip_double_device_t *device = &config->devices[index];
    /* Defaults: an MI300X at a bus number of its own. */
    snprintf(device->arch, sizeof device->arch, "gfx942:sramecc+:xnack-");
    device->major = 9;
    device->minor = 4;
    device->compute_units = 304;
    device->memory_bytes = 192ull << 30;
    device->pci_bus = 0x10 + (unsigned)index;
    snprintf(device->name, sizeof device->name, "Emulated HIP device %zu", index);
    double_config_words_t words = {.next = rest};
    for (char *key, *value; double_config_word(&words, &key, &value);) {
        if (!value) {
            refuse(config, line, "'%s' is not key=value", key);
        } else if (strcmp(key, "name") == 0) { /* the rest of the line: the last word */
            double_config_name(value, device->name, sizeof device->name);
            return;
        } else if (strcmp(key, "arch") == 0) {
            if (!parse_arch(value, &device->major, &device->minor))
                refuse(config, line, "arch=%s is not gfx<version>[:features]", value);
            else
                snprintf(device->arch, sizeof device->arch, "%s", value);
        } else if (strcmp(key, "cus") == 0) {
            device->compute_units = atoi(value);
            if (device->compute_units <= 0) refuse(config, line, "cus=%s is not a positive count", value);
        } else if (strcmp(key, "memory") == 0) {
            if (!parse_bytes(value, &device->memory_bytes)) refuse(config, line, "memory=%s is not a size", value);
        } else if (strcmp(key, "pci") == 0) {
            if (sscanf(value, "%x:%x:%x.%x", &device->pci_domain, &device->pci_bus, &device->pci_device,
                       &device->pci_function) != 4)
                refuse(config, line, "pci=%s is not domain:bus:device.function", value);
        } else {
            refuse(config, line, "unknown device key '%s'", key);
        }
    }
}

static void parse_fault(char *rest, hip_double_config_t *config, size_t line) {
    char *value = double_config_key_value(&rest);
    if (!value) return refuse(config, line, "fault '%s' is not key=value", rest);
    if (strcmp(rest, "init") == 0) {
        long result = hip_double_error_parse(value);
        if (result <= 0) return refuse(config, line, "fault init=%s is not a HIP error", value);
        config->init_result = (unsigned)result;
    } else if (strcmp(rest, "missing") == 0) {
        if (config->missing_count == HIP_DOUBLE_MAX_MISSING) return refuse(config, line, "too many missing entry points");
        if (!*value) return refuse(config, line, "fault missing= names no symbol");
        snprintf(config->missing[config->missing_count++], sizeof config->missing[0], "%s", value);
    } else if (strcmp(rest, "alloc") == 0 || strcmp(rest, "sticky") == 0 || strcmp(rest, "get_device") == 0) {
        unsigned long n = 0;
        if (!double_config_count(value, &n))
            return refuse(config, line, "fault %s=%s is not a positive count", rest, value);
        if (rest[0] == 'a') config->alloc_fault = n;
        else if (rest[0] == 's') config->sticky_fault = n;
        else config->get_device_fault = n;
    } else {
        refuse(config, line, "unknown fault '%s'", rest);
    }
}

static void parse_line(char *entry, size_t line, void *context) {
    hip_double_config_t *config = context;
    size_t kind_length = strcspn(entry, " \t");
    char *rest = entry + kind_length;
    if (*rest) *rest++ = '\0';
    if (strcmp(entry, "device") == 0) parse_device(rest, config, line);
    else if (strcmp(entry, "fault") == 0) parse_fault(rest, config, line);
    else refuse(config, line, "unknown line kind '%s'", entry);
}

void hip_double_config_parse(const char *text, hip_double_config_t *config) {
    memset(config, 0, sizeof *config);
    if (!text) return;
    char *copy = strdup(text);
    if (!copy) return refuse(config, 0, "no memory");
    double_config_lines(copy, parse_line, config);
    free(copy);
}
