/* The rendezvous's entry point (mesh_rendezvous.h) and what both sides share (mesh_session.h):
 * the clocks, the grace, the files' names, the test hook. Index 0's side is mesh_lead.c, every
 * other index's mesh_follow.c, the files' formats mesh_records.c. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "mesh/mesh_session.h"
#include "platform/platform.h"

void (*_Atomic uform__test_mesh_step)(const char *directory, const char *job, uint64_t index, const char *step);

void uform__mesh_step(const uform__mesh_session_t *s, uint64_t index, const char *step) {
    void (*hook)(const char *, const char *, uint64_t, const char *) =
        atomic_load_explicit(&uform__test_mesh_step, memory_order_relaxed);
    if (hook) hook(s->directory, s->job, index, step); /* static storage: NULL in production */
}

double uform__mesh_grace_seconds(double timeout) {
    return timeout / 10 < 1 ? 1 : timeout / 10 > 10 ? 10 : timeout / 10;
}

uform_status_t uform__mesh_wait(const uform__mesh_session_t *s, uint64_t deadline_ns, uint64_t *step_ns) {
    if (s->cancel && *s->cancel)
        return uform__fail(UFORM_STATUS_INTERRUPTED, "%s: %s: cancelled while the run met", s->verb, s->job);
    return uform__mesh_backoff(deadline_ns, step_ns) ? UFORM_STATUS_OK : UFORM_STATUS_TIMEOUT;
}

void uform__mesh_facts_name(uint64_t index, char *name, size_t capacity) {
    snprintf(name, capacity, "facts.%llu", (unsigned long long)index);
}

void uform__mesh_took_name(uint64_t index, char *name, size_t capacity) {
    snprintf(name, capacity, "took.%llu", (unsigned long long)index);
}

uform_status_t uform__mesh_refuse_existing(const uform__mesh_session_t *s, const char *run_text) {
    char holder[300] = "nobody's run file", where[UFORM_MESH_PATH_MAX];
    if (run_text && run_text[0]) uform__mesh_describe_holder(run_text, NULL, holder, sizeof holder);
    uform__mesh_path(s, NULL, where, sizeof where);
    return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                       "%s: job directory exists already: %s (run file: %s): another process claims index 0, or an "
                       "earlier run left it behind; a run needs a job name of its own",
                       s->verb, where, holder);
}

uform_status_t uform__mesh_rendezvous(const char *directory, const char *job, double timeout_seconds,
                                      const uform__mesh_facts_t *mine, const uint8_t *nccl_id,
                                      uform__mesh_roster_t *roster, const volatile int *cancel, const char *verb) {
    if (!uform__mesh_job_name_ok(job)) {
        char shown[UFORM_MESH_PATH_MAX];
        uform__mesh_short(job ? job : "", shown, sizeof shown);
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT,
                           "%s: job is not a plain name ([A-Za-z0-9._-], 1 to 128 bytes, not . or ..): \"%s\"", verb,
                           shown);
    }
    uform__mesh_session_t s = {.directory = directory,
                               .job = job,
                               .verb = verb,
                               .host = mine->host,
                               .timeout_seconds = timeout_seconds,
                               .cancel = cancel,
                               .job_fd = -1};
    s.deadline_ns = uform__now_ns() + (uint64_t)(timeout_seconds * 1e9);
    memset(roster, 0, sizeof *roster);
    uform_status_t status =
        mine->index == 0 ? uform__mesh_lead(&s, mine, nccl_id, roster) : uform__mesh_follow(&s, mine, roster);
    if (s.job_fd >= 0) close(s.job_fd);
    return status;
}
