/* One outcome for every process (mesh_rendezvous.h): a run of three processes in which one, the
 * victim, gets a real signal (from the test process) at one step of the exchange, reached through
 * the rendezvous's step hook. SIGKILL: the survivors must agree. SIGSTOP: the victim is continued
 * once the others have answered (past their timeout), and all three must agree. Agree: the same
 * status, the same message, and on OK the same run-wide description. What is left of the job
 * directory is checked too. Timeouts of 1 s (a grace of 1 s): each case takes a few seconds. */
#ifndef UFORM_TEST_ONE_OUTCOME_H
#define UFORM_TEST_ONE_OUTCOME_H

#include "mesh_processes.h"

typedef struct step_case_t {
    size_t victim;
    const char *step;
    uform_status_t status; /* what every process answers */
    const char *names;     /* a phrase every message holds (NULL for OK) */
} step_case_t;

static member_t one_outcome_members[3];

static bool same_description(const uform_mesh_description_t *a, const uform_mesh_description_t *b) {
    return a->gpus_per_host_domain == b->gpus_per_host_domain &&
           a->gpus_per_multimem_domain == b->gpus_per_multimem_domain &&
           a->gpus_per_colocated_domain == b->gpus_per_colocated_domain && a->multimem_tier == b->multimem_tier &&
           a->gpu_class == b->gpu_class;
}

/* Runs one case; `late` (SIGSTOP only) is a victim that had not written its facts: it comes back
 * after index 0 has left, and can only learn that the run ended (TIMEOUT, its own words). */
static void one_outcome_case(const step_case_t *c, int signal, bool late) {
    member_t *m = one_outcome_members;
    char job[64], left[1024];
    snprintf(job, sizeof job, "%s-%zu-%s", signal == SIGKILL ? "killed" : "stalled", c->victim, c->step);
    members_fill(m, 3, job, 1, 1);
    m[c->victim].signal_at = c->step;
    members_start(m, 3);
    member_signal(&m[c->victim], signal);
    if (signal == SIGKILL) member_finish(&m[c->victim]); /* reaped: gone, not a zombie, as under a launcher */
    for (size_t i = 0; i < 3; i++)
        if (i != c->victim) member_finish(&m[i]);
    if (signal == SIGSTOP) {
        CHECK(kill(m[c->victim].pid, SIGCONT) == 0);
        member_finish(&m[c->victim]);
    }
    if (signal == SIGKILL && m[c->victim].status != (uform_status_t)-1)
        TEST_FAIL_("%s: the victim answered %s instead of dying", job, uform_status_name(m[c->victim].status));
    const member_t *first = c->victim == 0 ? &m[1] : &m[0];
    for (size_t i = 0; i < 3; i++) {
        const member_t *x = &m[i];
        if (i == c->victim && signal == SIGKILL) continue;
        if (x->status != c->status)
            TEST_FAIL_("%s: index %zu answered %s (%s), expected %s", job, i, uform_status_name(x->status), x->message,
                       uform_status_name(c->status));
        if (late && i == c->victim) {
            CHECK_MESSAGE(*x, "ended the run before this process joined");
            continue;
        }
        if (x->status != UFORM_STATUS_OK && strcmp(x->message, first->message))
            TEST_FAIL_("%s: index %zu says \"%s\", index %zu \"%s\"", job, i, x->message, first->index, first->message);
        if (c->names) CHECK_MESSAGE(*x, c->names);
        if (x->status == UFORM_STATUS_OK && !same_description(&x->description, &first->description))
            TEST_FAIL_("%s: index %zu's description differs", job, i);
    }
    /* Every process that lives removes what it wrote, and the last one out the rest; only index 0
     * killed after the others left leaves its run, roster and outcome behind. */
    job_left(job, left, sizeof left);
    bool lead_killed_late = signal == SIGKILL && c->victim == 0 && c->status == UFORM_STATUS_OK;
    if (left[0] && !(lead_killed_late && !strcmp(left, "outcome roster run")))
        TEST_FAIL_("%s: left in the job directory: %s", job, left);
    char path[1024];
    snprintf(path, sizeof path, "%s/go.%s", mesh_directory, job);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", mesh_directory, job);
    if (left[0]) remove_mesh_directory_entry(path);
}

static const step_case_t one_outcome_cases[] = {
    {0, "gathered", UFORM_STATUS_TIMEOUT, "no roster from index 0"},
    {0, "published", UFORM_STATUS_TIMEOUT, "no outcome from index 0"},
    {0, "deciding", UFORM_STATUS_TIMEOUT, "no outcome from index 0"},
    {0, "decided", UFORM_STATUS_OK, NULL},
    {0, "clean-up", UFORM_STATUS_OK, NULL},
    {1, "facts", UFORM_STATUS_TIMEOUT, "index 1 never arrived"},
    {1, "checking", UFORM_STATUS_TIMEOUT, "index 1 never took the roster"},
    {1, "published", UFORM_STATUS_TIMEOUT, "index 1 never took the roster"},
    {1, "taken", UFORM_STATUS_TIMEOUT, "index 1 never took the roster"},
    {1, "acknowledged", UFORM_STATUS_OK, NULL},
    {2, "facts", UFORM_STATUS_TIMEOUT, "index 2 never arrived"},
    {2, "taken", UFORM_STATUS_TIMEOUT, "index 2 never took the roster"},
    {2, "acknowledged", UFORM_STATUS_OK, NULL},
};

static void one_outcome_all(int signal) {
    make_mesh_directory();
    for (size_t i = 0; i < sizeof one_outcome_cases / sizeof *one_outcome_cases; i++) {
        const step_case_t *c = &one_outcome_cases[i];
        one_outcome_case(c, signal, signal == SIGSTOP && c->victim != 0 && !strcmp(c->step, "facts"));
    }
    remove_mesh_directory();
}

#endif
