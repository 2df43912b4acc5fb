/* Prints `uform info` (text or JSON) of a fixture machine: the seam pointed at
 * tests/fixtures/<name>, the GPUs from whatever driver the environment names (the CUDA double
 * in check_info_fixtures.py). usage: print_info FIXTURE text|json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hardware/seam.h"
#include "uform.h"

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "text") && strcmp(argv[2], "json"))) {
        fprintf(stderr, "usage: print_info FIXTURE text|json\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", UFORM_TEST_FIXTURES, argv[1]);
    if (uform__seam_use_fixture(path) != UFORM_STATUS_OK) {
        fprintf(stderr, "print_info: %s\n", uform_last_error());
        return 1;
    }
    uform_info_format_t format = strcmp(argv[2], "json") ? UFORM_INFO_TEXT : UFORM_INFO_JSON;
    size_t length = 0;
    if (uform_info_write(format, NULL, 0, &length) != UFORM_STATUS_OK) {
        fprintf(stderr, "print_info: %s\n", uform_last_error());
        return 1;
    }
    char *text = malloc(length + 1);
    size_t again = 0;
    if (!text || uform_info_write(format, text, length + 1, &again) != UFORM_STATUS_OK || again != length) {
        fprintf(stderr, "print_info: the second write differs or fails: %s\n", uform_last_error());
        return 1;
    }
    fputs(text, stdout);
    free(text);
    return 0;
}
