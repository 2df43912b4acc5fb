/* Meshes that form, against the CUDA driver test double, in real processes over a real
 * directory: runs of 1, 2, 8 and 64 processes; runs of 1 to 8 GPUs per process (the description
 * math: first_gpu_index, the colocated count); two runs with different job names at once in one
 * directory. Every process gets the same shape, and each run's job directory is gone afterwards. */
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
    TEST_DONE();
}
