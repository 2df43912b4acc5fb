/* Fuzzes the CPU-list parser: any bytes give OK or MALFORMED, never a crash; what parses is
 * ascending, unique and in range, and formatting it parses back to the same list. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hardware/cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int32_t *cpus = NULL;
    size_t count = 0;
    uform_status_t status = uform__cpulist_parse(text, "fuzz", &cpus, &count);
    free(text);
    if (status != UFORM_STATUS_OK) {
        if (status != UFORM_STATUS_MALFORMED && status != UFORM_STATUS_OUT_OF_MEMORY) abort();
        return 0;
    }
    for (size_t i = 0; i < count; i++)
        if (cpus[i] < 0 || cpus[i] > UFORM_CPULIST_MAX || (i && cpus[i] <= cpus[i - 1])) abort();
    size_t length = uform__cpulist_format(cpus, count, NULL, 0);
    char *formatted = malloc(length + 1);
    uform__cpulist_format(cpus, count, formatted, length + 1);
    int32_t *again = NULL;
    size_t again_count = 0;
    if (uform__cpulist_parse(formatted, "fuzz", &again, &again_count) != UFORM_STATUS_OK || again_count != count ||
        (count && memcmp(again, cpus, count * sizeof *cpus) != 0))
        abort();
    free(formatted);
    free(again);
    free(cpus);
    return 0;
}
