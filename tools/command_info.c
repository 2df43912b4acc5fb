/* `uform info`: what the runtime sees of this machine, like lscpu, lstopo and nvidia-smi
 * topo -m together (src/report/info.c writes it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *stream) {
    fprintf(stream, "usage: uform info [--json]\n"
                    "Prints what uform sees of this machine: the capabilities compiled and available, the CPU\n"
                    "(model, class, sockets, cores, threads per core, caches and the CPUs sharing each), the\n"
                    "NUMA nodes with their CPUs, memory and distances, the CPU quota and default thread count,\n"
                    "and the GPUs with their NUMA node, CPU list and GPU-to-GPU links.\n"
                    "Options:\n"
                    "  --json      one JSON object instead of text (schema: docs/info-json.md)\n"
                    "  -h, --help  this text\n"
                    "Exit status: 0 printed; 1 the machine could not be read (the reason on stderr);\n"
                    "2 bad usage.\n");
}

int command_info(int argc, char **argv) {
    uform_info_format_t format = UFORM_INFO_TEXT;
    for (int i = 0; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        }
        if (!strcmp(argv[i], "--json"))
            format = UFORM_INFO_JSON;
        else
            return cli_usage_error("info", "unknown option '%s'", argv[i]);
    }
    size_t length = 0;
    uform_status_t status = uform_info_write(format, NULL, 0, &length);
    if (status != UFORM_STATUS_OK) return cli_fail("info", status);
    char *text = malloc(length + 1);
    if (!text) return cli_fail("info", UFORM_STATUS_OUT_OF_MEMORY);
    status = uform_info_write(format, text, length + 1, &length);
    if (status == UFORM_STATUS_OK) fputs(text, stdout);
    free(text);
    return status == UFORM_STATUS_OK ? CLI_OK : cli_fail("info", status);
}
