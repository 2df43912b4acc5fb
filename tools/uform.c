/* The uform command: `info` (what the runtime sees, like lscpu / nvidia-smi -L), `bench`
 * (the host executor against OpenMP, pthreadpool and oneTBB), `mesh` (join a run's mesh and
 * print its description: the smoke test a cluster admin runs), `version`. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uform.h"
#if UFORM_CLI_HAS_BENCH
#include "bench.h"
#endif

static int usage(FILE *stream) {
    fprintf(stream,
            "usage: uform <command> [options]\n"
            "  info [--json]        capabilities, CPU class, NUMA domains, threads, GPUs\n"
            "  bench [--quick] ...  host executor vs OpenMP, pthreadpool, oneTBB, and many executors\n"
            "                       at once; --threads: fork-join cost from 1 thread to 4x the cores\n"
            "                       (uform bench --help)\n"
            "  mesh --directory DIR --job NAME [--index I] [--count N] [--multimem N] [--timeout S] [--json]\n"
            "                       join a run's mesh over every GPU and print its description\n"
            "  version              the library's version\n");
    return stream == stderr ? 2 : 0;
}

static int fail(const char *what, uform_status_t status) {
    fprintf(stderr, "uform %s: %s (%s): %s\n", what, uform_status_message(status), uform_status_name(status),
            uform_last_error());
    return 1;
}

static int command_info(int argc, char **argv) {
    uform_info_format_t format = UFORM_INFO_TEXT;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            format = UFORM_INFO_JSON;
        else {
            fprintf(stderr, "uform info: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    size_t length = 0;
    uform_status_t status = uform_info_write(format, NULL, 0, &length);
    if (status != UFORM_STATUS_OK) return fail("info", status);
    char *text = malloc(length + 1);
    if (!text) return fail("info", UFORM_STATUS_OUT_OF_MEMORY);
    status = uform_info_write(format, text, length + 1, &length);
    if (status == UFORM_STATUS_OK) fputs(text, stdout);
    free(text);
    return status == UFORM_STATUS_OK ? 0 : fail("info", status);
}

/* A whole non-negative decimal, or -1. */
static long long parse_count(const char *text) {
    char *end = NULL;
    if (!text || !*text || *text == '-') return -1;
    unsigned long long value = strtoull(text, &end, 10);
    return end && !*end && value < (1ull << 40) ? (long long)value : -1;
}

static int command_mesh(int argc, char **argv) {
    uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
            continue;
        }
        const char *value = i + 1 < argc ? argv[++i] : NULL;
        if (!value) {
            fprintf(stderr, "uform mesh: '%s' needs a value\n", argv[i]);
            return 2;
        }
        long long number = parse_count(value);
        if (!strcmp(argv[i - 1], "--directory"))
            options.directory = value;
        else if (!strcmp(argv[i - 1], "--job"))
            options.job = value;
        else if (!strcmp(argv[i - 1], "--index") && number >= 0)
            options.host_domain_index = (size_t)number;
        else if (!strcmp(argv[i - 1], "--count") && number >= 0)
            options.host_domain_count = (size_t)number;
        else if (!strcmp(argv[i - 1], "--multimem") && number >= 0)
            options.gpus_per_multimem_domain = (size_t)number;
        else if (!strcmp(argv[i - 1], "--timeout") && strtod(value, NULL) >= 0)
            options.timeout_seconds = strtod(value, NULL);
        else {
            fprintf(stderr, "uform mesh: bad option '%s %s' (uform --help)\n", argv[i - 1], value);
            return 2;
        }
    }
    /* Every GPU this process can drive: the smoke test a cluster admin runs on each node. */
    uform_executor_t *executor = NULL;
    uform_status_t status = uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE,
                                                    NULL, 0, 0, 0, &executor);
    if (status != UFORM_STATUS_OK) return fail("mesh", status);
    uform_mesh_t *mesh = NULL;
    status = uform_mesh_bootstrap(executor, &options, &mesh);
    uform_executor_free(executor); /* the mesh holds it from here */
    if (status != UFORM_STATUS_OK) return fail("mesh", status);
    uform_mesh_description_t d;
    uform_mesh_describe(mesh, &d);
    const char *tier = d.multimem_tier == UFORM_MULTIMEM_TIER_SWITCH_REDUCED ? "switch_reduced" : "peer_read";
    const char *gpu_class = uform_gpu_class_name((uform_gpu_class_t)d.gpu_class);
    void *communicator = NULL;
    bool data_plane = uform_mesh_communicator(mesh, 0, &communicator) == UFORM_STATUS_OK;
    char why[512];
    snprintf(why, sizeof why, "%s", data_plane ? "NCCL" : uform_last_error());
    if (json) {
        printf("{\"host_domain_index\":%zu,\"gpus_per_host_domain\":%zu,\"first_gpu_index\":%zu,"
               "\"gpus_per_colocated_domain\":%zu,\"gpus_per_multimem_domain\":%zu,\"multimem_tier\":\"%s\","
               "\"gpu_class\":%s%s%s,\"data_plane\":%s}\n",
               d.host_domain_index, d.gpus_per_host_domain, d.first_gpu_index, d.gpus_per_colocated_domain,
               d.gpus_per_multimem_domain, tier, gpu_class ? "\"" : "", gpu_class ? gpu_class : "null",
               gpu_class ? "\"" : "", data_plane ? "\"nccl\"" : "null");
    } else {
        printf("host domain %zu: %zu GPUs from run-wide GPU %zu of %zu; multimem domain of %zu GPUs, tier %s, "
               "class %s\n",
               d.host_domain_index, d.gpus_per_host_domain, d.first_gpu_index, d.gpus_per_colocated_domain,
               d.gpus_per_multimem_domain, tier, gpu_class ? gpu_class : "none");
        printf("data plane: %s\n", data_plane ? "NCCL communicators, one per GPU" : why);
    }
    uform_mesh_free(mesh);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    const char *command = argv[1];
    if (!strcmp(command, "info")) return command_info(argc - 2, argv + 2);
    if (!strcmp(command, "mesh")) return command_mesh(argc - 2, argv + 2);
    if (!strcmp(command, "version")) {
        printf("uform %s (headers %s)\n", uform_version(), UFORM_VERSION_STRING);
        return 0;
    }
    if (!strcmp(command, "bench")) {
#if UFORM_CLI_HAS_BENCH
        return uform_bench_main(argc - 1, argv + 1);
#else
        fprintf(stderr, "uform bench: this build has no benchmarks (configure with -DUFORM_BUILD_BENCH=ON)\n");
        return 1;
#endif
    }
    if (!strcmp(command, "help") || !strcmp(command, "--help") || !strcmp(command, "-h")) return usage(stdout);
    fprintf(stderr, "uform: unknown command '%s'\n", command);
    return usage(stderr);
}
