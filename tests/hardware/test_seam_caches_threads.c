/* The seam's caches filled by racing readers: eight threads, released together right after the
 * seam moves, each read the CPU class, a class check, the topology and the available
 * capabilities for the first time at that generation. Every thread sees the same answers,
 * those of the machine the seam points at (run under TSan too). */
#include <pthread.h>

#include "fixture.h"

#define THREADS 8

typedef struct answer_t {
    uform_cpu_class_t derived;
    bool skylake_runs;
    const uform__topology_t *topology;
    char available[512];
} answer_t;

static pthread_barrier_t start;
static answer_t answers[THREADS];

static void *reader(void *argument) {
    answer_t *answer = argument;
    pthread_barrier_wait(&start);
    answer->derived = uform_cpu_class_derived();
    answer->skylake_runs = uform__cpu_class_runs(UFORM_CPU_CLASS_INTEL_SKYLAKE);
    if (uform__topology_get(&answer->topology) != UFORM_STATUS_OK) answer->topology = NULL;
    snprintf(answer->available, sizeof answer->available, "%s", uform_capabilities_available());
    return NULL;
}

static void race(const char *fixture, uform_cpu_class_t expected, size_t usable) {
    use_fixture(fixture);
    pthread_t threads[THREADS];
    CHECK_EQ_INT(pthread_barrier_init(&start, NULL, THREADS), 0);
    for (int i = 0; i < THREADS; i++) CHECK_EQ_INT(pthread_create(&threads[i], NULL, reader, &answers[i]), 0);
    for (int i = 0; i < THREADS; i++) CHECK_EQ_INT(pthread_join(threads[i], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_INT(answers[i].derived, expected);
        CHECK_EQ_INT(answers[i].skylake_runs, expected == UFORM_CPU_CLASS_INTEL_SKYLAKE);
        CHECK(answers[i].topology != NULL && answers[i].topology == answers[0].topology);
        CHECK_EQ_INT(answers[i].topology->usable_count, usable);
        CHECK_EQ_STR(answers[i].available, answers[0].available);
    }
}

int main(void) {
    race("two_socket_6248_smt", UFORM_CPU_CLASS_INTEL_SKYLAKE, 80);
    race("graviton2_m6g", UFORM_CPU_CLASS_AWS_G2, 64);
    race("two_socket_6248_smt", UFORM_CPU_CLASS_INTEL_SKYLAKE, 80);
    CHECK_OK(uform__seam_use_fixture(NULL));
    TEST_DONE();
}
