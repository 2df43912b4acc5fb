/* Meshes that form, against the CUDA driver test double, in real processes over a real
 * directory: runs of 1, 2, 8 and 64 processes; runs of 1 to 8 GPUs per process (the description
 * math: first_gpu_index, the colocated count); two runs with different job names at once in one
 * directory. Every process gets the same shape, and each run's job directory is gone afterwards.
 * One run of 8 processes x 2 GPUs also loads the NCCL test double, whose log shows that every
 * rank used the id index 0 published, each rank 0..15 once with a count of 16, and that every
 * communicator was destroyed when the meshes were freed. */
#include "mesh_processes.h"

static member_t members[128];

static void check_run(size_t n, size_t gpus, const char *job) {
    for (size_t i = 0; i < n; i++) {
        if (members[i].status != UFORM_STATUS_OK)
            TEST_FAIL_("%s: index %zu of %zu answered %s: %s", job, i, n, uform_status_name(members[i].status),
                       members[i].message);
        const uform_mesh_description_t *d = &members[i].description;
        CHECK_EQ_INT(d->host_domain_index, i);
        CHECK_EQ_INT(d->gpus_per_host_domain, gpus);
        CHECK_EQ_INT(d->gpus_per_colocated_domain, gpus * n);
        CHECK_EQ_INT(d->first_gpu_index, gpus * i);
        CHECK_EQ_INT(d->gpu_class, UFORM_GPU_CLASS_NVIDIA_HOPPER);
        CHECK_EQ_INT(d->multimem_tier, UFORM_MULTIMEM_TIER_PEER_READ); /* the double has no multicast here */
        CHECK_EQ_INT(d->gpus_per_multimem_domain, 1);
    }
    CHECK(job_gone(job));
}

int main(void) {
    make_mesh_directory();

    /* One process: no directory needed, no files. */
    uform_mesh_description_t alone;
    {
        members_fill(members, 1, NULL, 3, 10);
        members_start(members, 1);
        members_finish(members, 1);
        CHECK_OK(members[0].status);
        alone = members[0].description;
        CHECK_EQ_INT(alone.gpus_per_host_domain, 3);
        CHECK_EQ_INT(alone.gpus_per_colocated_domain, 3);
        CHECK_EQ_INT(alone.first_gpu_index, 0);
    }

    static const size_t sizes[] = {2, 8, 64};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        char job[64];
        snprintf(job, sizeof job, "run-of-%zu", sizes[s]);
        members_fill(members, sizes[s], job, 1, 120);
        members_start(members, sizes[s]);
        members_finish(members, sizes[s]);
        check_run(sizes[s], 1, job);
    }

    /* The NCCL hand-off, seen through the NCCL test double's log. */
    char log[300];
    snprintf(log, sizeof log, "%s/nccl.log", mesh_directory);
    setenv("UFORM_NCCL_DOUBLE_LOG", log, 1);
    mesh_nccl_library = UFORM_TEST_NCCL_DOUBLE;
    members_fill(members, 8, "with-nccl", 2, 60);
    members_start(members, 8);
    members_finish(members, 8);
    check_run(8, 2, "with-nccl");
    mesh_nccl_library = "/nonexistent/libnccl.so.2";
    unsetenv("UFORM_NCCL_DOUBLE_LOG");
    FILE *file = fopen(log, "r");
    CHECK(file != NULL);
    char line[512], first_id[300] = "";
    int inits[16] = {0}, destroys[16] = {0};
    while (fgets(line, sizeof line, file)) {
        int pid = 0, rank = -1, nranks = 0;
        char id[300] = "";
        if (sscanf(line, "init pid=%d rank=%d nranks=%d id=%299s", &pid, &rank, &nranks, id) == 4) {
            CHECK(rank >= 0 && rank < 16);
            CHECK_EQ_INT(nranks, 16);
            if (!first_id[0]) snprintf(first_id, sizeof first_id, "%s", id);
            CHECK_EQ_STR(id, first_id); /* one id for the whole run: index 0's */
            inits[rank]++;
            /* Ranks 2i and 2i+1 belong to the process of index i. */
            CHECK_EQ_INT(pid, members[rank / 2].pid);
        } else if (sscanf(line, "destroy pid=%d rank=%d", &pid, &rank) == 2) {
            CHECK(rank >= 0 && rank < 16);
            destroys[rank]++;
        } else {
            TEST_FAIL_("unexpected line in the NCCL double's log: %s", line);
        }
    }
    fclose(file);
    for (int r = 0; r < 16; r++) {
        CHECK_EQ_INT(inits[r], 1);
        CHECK_EQ_INT(destroys[r], 1);
    }
    CHECK(strlen(first_id) == 256);
    unlink(log);

    /* NVLink multicast: two processes of 4 GPUs that all support it and reach each other; the
     * extent is derived (4) and every probe succeeds, so the tier is SWITCH_REDUCED. */
    static const char nvswitch[] = "device cc=9.0 memory=2G multicast=yes nvlink=1";
    members_fill(members, 2, "multicast", 4, 60);
    for (size_t i = 0; i < 2; i++) members[i].device_line = nvswitch;
    members_start(members, 2);
    members_finish(members, 2);
    for (size_t i = 0; i < 2; i++) {
        CHECK_OK(members[i].status);
        CHECK_EQ_INT(members[i].description.multimem_tier, UFORM_MULTIMEM_TIER_SWITCH_REDUCED);
        CHECK_EQ_INT(members[i].description.gpus_per_multimem_domain, 4);
    }
    /* The same extent asked for explicitly, but one process's GPUs have no multicast: its probe
     * fails, so every process falls back to PEER_READ. */
    members_fill(members, 2, "multicast-partial", 4, 60);
    members[0].device_line = nvswitch;
    members[1].device_line = "device cc=9.0 memory=2G nvlink=1";
    for (size_t i = 0; i < 2; i++) members[i].multimem = 4;
    members_start(members, 2);
    members_finish(members, 2);
    for (size_t i = 0; i < 2; i++) {
        CHECK_OK(members[i].status);
        CHECK_EQ_INT(members[i].description.multimem_tier, UFORM_MULTIMEM_TIER_PEER_READ);
        CHECK_EQ_INT(members[i].description.gpus_per_multimem_domain, 4);
    }

    /* 1 to 8 GPUs per process, three processes each. */
    for (size_t gpus = 1; gpus <= 8; gpus++) {
        char job[64];
        snprintf(job, sizeof job, "gpus-%zu", gpus);
        members_fill(members, 3, job, gpus, 60);
        members_start(members, 3);
        members_finish(members, 3);
        check_run(3, gpus, job);
    }

    /* Two runs at once in one directory, told apart by their job names. */
    members_fill(members, 4, "left", 2, 60);
    members_fill(members + 4, 4, "right.v2", 1, 60);
    members_start(members, 8);
    members_finish(members, 8);
    check_run(4, 2, "left");
    for (size_t i = 0; i < 4; i++) members[i] = members[i + 4];
    check_run(4, 1, "right.v2");

    CHECK(rmdir(mesh_directory) == 0); /* nothing left behind */
    remove_mesh_directory();
    TEST_DONE();
}
