/* The floor under any fork-join on this machine: two threads pinned to two CPUs, measured
 * side by side with uform in one run.
 *   round trip: A bumps a line, B sees it and answers on another line, A sees the answer;
 *   fork-join floor: the same, plus each side bumping its own 128-byte slot and A checking
 *     both slots, which is what the fork-join benchmark's call does on top of the pool;
 *   uform: uform_executor_for_n with 2 items doing exactly that, SPINNING.
 * Usage: uform-bench-floor [cpu_a cpu_b] (default: the first two CPUs this process may use). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "uform.h"

typedef struct {
    _Alignas(128) unsigned long value;
} slot_t;

static slot_t slots[2];
static _Alignas(128) _Atomic unsigned ping;
static _Alignas(128) _Atomic unsigned pong;
static _Atomic int with_slots, stop;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(pthread_t thread, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(thread, sizeof set, &set);
}

static void *answer(void *unused) {
    unsigned seen = 0;
    for (;;) {
        unsigned value;
        while ((value = atomic_load_explicit(&ping, memory_order_acquire)) == seen) {
            if (atomic_load_explicit(&stop, memory_order_relaxed)) return unused;
            __builtin_ia32_pause();
        }
        seen = value;
        if (atomic_load_explicit(&with_slots, memory_order_relaxed)) slots[1].value++;
        atomic_fetch_add_explicit(&pong, 1, memory_order_release);
    }
    return unused;
}

static double measure_pingpong(int slotted) {
    atomic_store(&with_slots, slotted);
    unsigned first = atomic_load(&pong), calls = first;
    double start = now();
    while (now() - start < 1.0)
        for (int i = 0; i < 1000; i++) {
            calls++;
            atomic_fetch_add_explicit(&ping, 1, memory_order_release);
            if (slotted) slots[0].value++;
            while (atomic_load_explicit(&pong, memory_order_acquire) != calls) __builtin_ia32_pause();
            if (slotted && slots[0].value != slots[1].value) {
                fprintf(stderr, "slot mismatch\n");
                exit(1);
            }
        }
    return (now() - start) / (double)(calls - first) * 1e9;
}

static slot_t uform_slots[2];
static uform_status_t bump(void *context, size_t item, size_t thread) {
    uform_slots[item].value++;
    return UFORM_STATUS_OK;
}

int main(int argc, char **argv) {
    cpu_set_t mine;
    sched_getaffinity(0, sizeof mine, &mine);
    int cpus[2] = {-1, -1}, found = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
        if (CPU_ISSET(cpu, &mine)) cpus[found++] = cpu;
    if (argc == 3) cpus[0] = atoi(argv[1]), cpus[1] = atoi(argv[2]), found = 2;
    if (found < 2) {
        fprintf(stderr, "uform-bench-floor: needs two CPUs\n");
        return 1;
    }
    pthread_t thread;
    pthread_create(&thread, NULL, answer, NULL);
    pin(thread, cpus[1]);
    pin(pthread_self(), cpus[0]);
    measure_pingpong(0); /* warm-up */
    double round_trip = measure_pingpong(0);
    double floor = measure_pingpong(1);
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    cpu_set_t all;
    CPU_ZERO(&all);
    CPU_SET(cpus[0], &all);
    CPU_SET(cpus[1], &all);
    pthread_setaffinity_np(pthread_self(), sizeof all, &all); /* uform's caller is never pinned */

    /* uform's 2-thread fork-join doing the same work, the answering thread parked meanwhile. */
    uform_executor_t *executor = NULL;
    if (uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor) != UFORM_STATUS_OK) return 1;
    uform_executor_drain(executor, UFORM_MOOD_SPINNING);
    unsigned long calls = 0;
    double uform_start = now();
    while (now() - uform_start < 1.0)
        for (int i = 0; i < 1000; i++, calls++) {
            uform_executor_for_n(executor, NULL, 2, bump, NULL);
            if (uform_slots[0].value != uform_slots[1].value) return 1;
        }
    double uform_ns = (now() - uform_start) / (double)calls * 1e9;
    uform_executor_free(executor);
    printf("CPUs %d,%d: round trip %.0f ns, fork-join floor %.0f ns, uform fork-join %.0f ns (%.2fx the floor)\n",
           cpus[0], cpus[1], round_trip, floor, uform_ns, uform_ns / floor);
    return 0;
}
