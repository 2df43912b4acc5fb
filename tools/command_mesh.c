/* `uform mesh`: joins a run's mesh over every GPU this process can drive and prints its
 * description, the smoke test a cluster admin runs on each node. Every option is checked
 * before a GPU is opened, so a typo costs no driver start. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* The ranges uform_mesh_bootstrap accepts (include/uform/mesh.h). */
#define MAX_PROCESSES 65536
#define MAX_MULTIMEM_GPUS 1048576
#define MAX_TIMEOUT_SECONDS 1e7

static void usage(FILE *stream) {
    fprintf(stream,
            "usage: uform mesh --directory DIR --job NAME [--index I] [--count N] [--multimem N]\n"
            "                  [--timeout S] [--json]\n"
            "Joins this process to a run's mesh over every GPU it can drive, through a directory every\n"
            "host sees, and prints the mesh's description: this process's GPUs, their place in the\n"
            "run, the NVLink multicast tier and the data plane (NCCL or why there is none).\n"
            "Options:\n"
            "  --directory DIR  an existing directory every process of the run sees (required)\n"
            "  --job NAME       the run's unique plain name: [A-Za-z0-9._-], 1 to 128 bytes (required)\n"
            "  --index I        this process's index in the run, 0 to N-1 (default 0)\n"
            "  --count N        processes in the run, 1 to %d (default 1)\n"
            "  --multimem N     GPUs one NVLink multicast domain spans (default 0: derived)\n"
            "  --timeout S      seconds to wait for each peer, up to %g (default 0: 120 s)\n"
            "  --json           one JSON object instead of text\n"
            "  -h, --help       this text\n"
            "Exit status: 0 the mesh formed and was described; 1 it did not (the reason on stderr:\n"
            "no GPU, a peer missing or disagreeing, a timeout); 2 bad usage.\n",
            MAX_PROCESSES, MAX_TIMEOUT_SECONDS);
}

/* The rule uform_mesh_bootstrap applies to a job name, checked here before any GPU opens. */
static bool plain_name(const char *job) {
    size_t n = strlen(job);
    if (n < 1 || n > 128 || !strcmp(job, ".") || !strcmp(job, "..")) return false;
    for (const char *p = job; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
              *p == '_' || *p == '-'))
            return false;
    return true;
}

static int parse(int argc, char **argv, uform_mesh_options_t *options, bool *json, bool *help) {
    bool have_index = false;
    for (int i = 0; i < argc; i++) {
        const char *option = argv[i];
        if (cli_is_help(option)) {
            *help = true;
            return CLI_OK;
        }
        if (!strcmp(option, "--json")) {
            *json = true;
            continue;
        }
        bool known = !strcmp(option, "--directory") || !strcmp(option, "--job") || !strcmp(option, "--index") ||
                     !strcmp(option, "--count") || !strcmp(option, "--multimem") || !strcmp(option, "--timeout");
        if (!known) return cli_usage_error("mesh", "unknown option '%s'", option);
        if (i + 1 >= argc) return cli_usage_error("mesh", "'%s' needs a value", option);
        const char *value = argv[++i];
        bool ok = true;
        if (!strcmp(option, "--directory"))
            options->directory = value;
        else if (!strcmp(option, "--job"))
            options->job = value;
        else if (!strcmp(option, "--index"))
            ok = have_index = cli_parse_size("mesh", option, value, 0, MAX_PROCESSES - 1, &options->host_domain_index);
        else if (!strcmp(option, "--count"))
            ok = cli_parse_size("mesh", option, value, 1, MAX_PROCESSES, &options->host_domain_count);
        else if (!strcmp(option, "--multimem"))
            ok = cli_parse_size("mesh", option, value, 0, MAX_MULTIMEM_GPUS, &options->gpus_per_multimem_domain);
        else
            ok = cli_parse_seconds("mesh", option, value, 0, MAX_TIMEOUT_SECONDS, &options->timeout_seconds);
        if (!ok) return CLI_USAGE;
    }
    if (!options->directory) return cli_usage_error("mesh", "--directory DIR is required");
    if (!options->job) return cli_usage_error("mesh", "--job NAME is required");
    if (!plain_name(options->job))
        return cli_usage_error("mesh", "--job '%s' is not a plain name ([A-Za-z0-9._-], 1 to 128 bytes, not . or ..)",
                               options->job);
    struct stat info;
    if (stat(options->directory, &info) != 0 || !S_ISDIR(info.st_mode))
        return cli_usage_error("mesh", "--directory '%s' is not an existing directory", options->directory);
    size_t count = options->host_domain_count ? options->host_domain_count : 1;
    if (have_index && options->host_domain_index >= count)
        return cli_usage_error("mesh", "--index %zu is outside a run of %zu (--count)", options->host_domain_index,
                               count);
    return CLI_OK;
}

static void print(uform_mesh_t *mesh, bool json) {
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
}

int command_mesh(int argc, char **argv) {
    uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
    bool json = false, help = false;
    int parsed = parse(argc, argv, &options, &json, &help);
    if (help) {
        usage(stdout);
        return CLI_OK;
    }
    if (parsed != CLI_OK) return parsed;
    uform_executor_t *executor = NULL;
    uform_status_t status =
        uform_executor_for_vram(NULL, 0, UFORM_GPU_CLASS_NONE, NULL, 0, UFORM_CPU_CLASS_NONE, NULL, 0, 0, 0, &executor);
    if (status != UFORM_STATUS_OK) return cli_fail("mesh", status);
    uform_mesh_t *mesh = NULL;
    status = uform_mesh_bootstrap(executor, &options, &mesh);
    uform_executor_free(executor); /* the mesh holds it from here */
    if (status != UFORM_STATUS_OK) return cli_fail("mesh", status);
    print(mesh, json);
    uform_mesh_free(mesh);
    return CLI_OK;
}
