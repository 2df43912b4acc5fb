/* The uform command: `info` (what the runtime sees, like lscpu / nvidia-smi -L), `bench`
 * (the host executor against OpenMP, pthreadpool and oneTBB), `mesh` (join a run's mesh and
 * print its description: the smoke test a cluster admin runs), `version`. */
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
            "  mesh --directory DIR --job NAME [--index I] [--count N] [--timeout S]\n"
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

static int command_mesh(int argc, char **argv) {
    uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
    for (int i = 0; i < argc; i += 2) { /* --option value pairs */
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) {
            fprintf(stderr, "uform mesh: '%s' needs a value\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "--directory"))
            options.directory = value;
        else if (!strcmp(argv[i], "--job"))
            options.job = value;
        else if (!strcmp(argv[i], "--index"))
            options.host_domain_index = strtoull(value, NULL, 10);
        else if (!strcmp(argv[i], "--count"))
            options.host_domain_count = strtoull(value, NULL, 10);
        else if (!strcmp(argv[i], "--timeout"))
            options.timeout_seconds = strtod(value, NULL);
        else {
            fprintf(stderr, "uform mesh: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    uform_executor_t *executor = NULL;
    uform_status_t status = uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE,
                                                    NULL, 0, 0, 0, &executor);
    if (status != UFORM_STATUS_OK) return fail("mesh", status);
    uform_mesh_t *mesh = NULL;
    status = uform_mesh_bootstrap(executor, &options, &mesh);
    if (status != UFORM_STATUS_OK) {
        uform_executor_free(executor);
        return fail("mesh", status);
    }
    uform_mesh_description_t description;
    uform_mesh_describe(mesh, &description);
    printf("host domain %zu: %zu GPUs from run-wide GPU %zu of %zu; multimem domain of %zu GPUs, tier %s, class %s\n",
           description.host_domain_index, description.gpus_per_host_domain, description.first_gpu_index,
           description.gpus_per_colocated_domain, description.gpus_per_multimem_domain,
           description.multimem_tier == UFORM_MULTIMEM_TIER_SWITCH_REDUCED ? "switch_reduced" : "peer_read",
           uform_gpu_class_name((uform_gpu_class_t)description.gpu_class)
               ? uform_gpu_class_name((uform_gpu_class_t)description.gpu_class)
               : "none");
    uform_mesh_free(mesh);
    uform_executor_free(executor);
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
