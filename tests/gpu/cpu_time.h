/* Helpers for the tests that weigh how much host CPU a wait costs: the process's CPU time
 * (getrusage, every thread's user and system time) and the monotonic wall clock, in ms. */
#ifndef UFORM_TEST_CPU_TIME_H
#define UFORM_TEST_CPU_TIME_H

#include <sys/resource.h>
#include <time.h>

#include "test.h"

static inline double cpu_ms(void) {
    struct rusage usage;
    CHECK(getrusage(RUSAGE_SELF, &usage) == 0);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
           (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

static inline double wall_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* A host function for a stream: sleeps 999 ms, so a wait on it has nothing for the CPU to do. */
static inline void sleep_a_second(void *unused) {
    (void)unused;
    struct timespec t = {.tv_sec = 0, .tv_nsec = 999000000L};
    nanosleep(&t, NULL);
}

#endif
