/* uform__current_cpu_inline reads the CPU from the thread's rseq area where glibc registered one
 * (platform.h), else calls sched_getcpu. Real threads, really pinned: on each CPU this process
 * may use, a thread pinned there must read that CPU both ways, on the main thread and on a
 * thread it starts (each thread has an area of its own). Which way the inline form took is
 * printed, so a log tells whether the rseq read was exercised. A read from the wrong place that
 * happens to give 0 shows only where a CPU other than 0 is allowed: with CPU 0 alone the test
 * says so. Run again with glibc's rseq turned off (tests.cmake), it checks glibc then registered no
 * area and the fallback was taken. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"
#include "test.h"

#if defined(__linux__)
static bool pin_self(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/* Pinned to each allowed CPU in turn, the calling thread reads it both ways. */
static void check_every_cpu(const cpu_set_t *allowed) {
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, allowed)) continue;
        CHECK(pin_self(cpu));
        sched_yield(); /* the kernel moves us at the next switch at the latest */
        CHECK_EQ_INT(uform__current_cpu(), cpu);
        CHECK_EQ_INT(uform__current_cpu_inline(), cpu);
    }
}

static cpu_set_t allowed;

static void *on_a_thread(void *unused) {
    (void)unused;
    check_every_cpu(&allowed);
    return NULL;
}

int main(void) {
    CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    if (CPU_COUNT(&allowed) == 1 && CPU_ISSET(0, &allowed))
        printf("only CPU 0 is allowed: a read from the wrong place giving 0 would pass here\n");
#ifdef UFORM_CURRENT_CPU_FROM_RSEQ_
    printf("inline form: rseq area (glibc registered it: %s)\n", __rseq_size ? "yes" : "no, sched_getcpu");
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (tunables && strstr(tunables, "glibc.pthread.rseq=0")) CHECK_EQ_INT(__rseq_size, 0);
#else
    printf("inline form: sched_getcpu (no rseq area in this C library)\n");
#endif
    check_every_cpu(&allowed);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, on_a_thread, NULL) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    /* Unpinned again, either way names a CPU the process may use. */
    CHECK(sched_setaffinity(0, sizeof allowed, &allowed) == 0);
    int cpu = uform__current_cpu_inline();
    CHECK(cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed));
    TEST_DONE();
}
#else
int main(void) {
    /* No CPU to ask for (wasm32): both forms say -1. */
    CHECK_EQ_INT(uform__current_cpu(), -1);
    CHECK_EQ_INT(uform__current_cpu_inline(), -1);
    TEST_DONE();
}
#endif
