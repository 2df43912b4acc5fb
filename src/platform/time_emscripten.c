#include <sched.h>
#include <time.h>

#include "platform/platform.h"

uint64_t uform__now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

void uform__thread_yield(void) { sched_yield(); }
