/* The uform command: `info` (what the runtime sees, like lscpu, lstopo and nvidia-smi topo -m),
 * `bench` (the host executor against OpenMP, pthreadpool and oneTBB), `mesh` (join a run's
 * mesh and print its description: the smoke test a cluster admin runs), `version`. Each
 * command answers --help; every option is checked before anything is opened. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#if UFORM_CLI_HAS_BENCH
#include "bench.h"
#endif

static int usage(FILE *stream) {
    fprintf(stream, "usage: uform <command> [options]\n"
                    "       uform --version | --help\n"
                    "Commands:\n"
                    "  info      the machine as uform sees it: capabilities, CPU, caches, NUMA nodes and\n"
                    "            distances, threads, GPUs and their links (--json for one JSON object)\n"
                    "  bench     the host executor beside OpenMP, pthreadpool and oneTBB, and many executors\n"
                    "            at once (--quick: under half a minute)\n"
                    "  mesh      join a run's mesh over every GPU and print its description\n"
                    "  version   the library's version and the capabilities compiled (as --version)\n"
                    "  help      this text (as --help)\n"
                    "Every command answers --help with its options and defaults.\n"
                    "Exit status: 0 done; 1 the library failed (the reason on stderr); 2 bad usage.\n");
    return stream == stderr ? CLI_USAGE : CLI_OK;
}

static int version(int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            printf("usage: uform version (or uform --version)\n"
                   "Prints the library's version, the headers' version it was built with, and the\n"
                   "capabilities compiled in (CPU classes with kernels, GPU backends, NCCL, NUMA).\n"
                   "Exit status: 0; 2 bad usage.\n");
            return CLI_OK;
        }
        return cli_usage_error("version", "unknown option '%s'", argv[i]);
    }
    printf("uform %s (headers %s)\ncapabilities compiled: %s\n", uform_version(), UFORM_VERSION_STRING,
           uform_capabilities_compiled());
    return CLI_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    const char *command = argv[1];
    if (!strcmp(command, "info")) return command_info(argc - 2, argv + 2);
    if (!strcmp(command, "mesh")) return command_mesh(argc - 2, argv + 2);
    if (!strcmp(command, "version") || !strcmp(command, "--version")) return version(argc - 2, argv + 2);
    if (!strcmp(command, "bench")) {
#if UFORM_CLI_HAS_BENCH
        return uform_bench_main(argc - 1, argv + 1);
#else
        fprintf(stderr, "uform bench: this build has no benchmarks (configure with -DUFORM_BUILD_BENCH=ON)\n");
        return CLI_FAILED;
#endif
    }
    if (!strcmp(command, "help") || cli_is_help(command)) {
        if (argc > 2 && !cli_is_help(argv[2])) return cli_usage_error("help", "unknown option '%s'", argv[2]);
        return usage(stdout);
    }
    fprintf(stderr, "uform: unknown command '%s'\n", command);
    return usage(stderr);
}
