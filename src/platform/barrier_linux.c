/* The asymmetric fence on Linux: membarrier(2), MEMBARRIER_CMD_PRIVATE_EXPEDITED (Linux 4.14).
 *
 * The executor's biased hold (executor_bias.c) lets the thread that makes every call enter with
 * a plain store and load, ordered by nothing but the compiler, and makes the rare other thread
 * that wants the executor pay for the fence instead: this call interrupts every CPU running one
 * of our threads, and each runs a full barrier before it returns. A process must register for
 * the command before using it, and a fork()ed child starts unregistered, so the registration is
 * remembered per fork generation (uform__fork_generation: every child has a new one, whatever
 * its process id). Registering costs 3 us in a process of one thread and 10 ms in one of three
 * (the kernel waits for an RCU grace period then; measured on the 2-vCPU KVM guest, Linux 6.18),
 * so an executor's leader thread registers in the background when it starts, and no user's call
 * waits for it (uform__process_barrier_known). */
#include <errno.h>
#include <linux/membarrier.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/platform.h"

#ifdef SYS_membarrier
static long membarrier(int command) { return syscall(SYS_membarrier, command, 0, 0); }

static bool register_now(void) {
    long commands = membarrier(MEMBARRIER_CMD_QUERY);
    /* Registered, and one barrier has worked: ready is a fact seen, not a promise. */
    return commands >= 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
           membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
}
#endif

/* The fork generation that registered, times 2, plus 1 if it is ready; 0 before the first try. */
static _Atomic uint64_t registration = 0;

bool uform__process_barrier_ready(void) {
#ifdef SYS_membarrier
    uint64_t generation = uform__fork_generation(), seen = atomic_load_explicit(&registration, memory_order_acquire);
    if (seen && (seen >> 1) == generation + 1) return seen & 1;
    bool ready = register_now();
    atomic_store_explicit(&registration, ((generation + 1) << 1) | (ready ? 1u : 0u), memory_order_release);
    return ready;
#else
    return false;
#endif
}

int uform__process_barrier_known(void) {
#ifdef SYS_membarrier
    uint64_t generation = uform__fork_generation_installed(), seen = atomic_load_explicit(&registration, memory_order_acquire);
    if (!seen || (seen >> 1) != generation + 1) return 0;
    return seen & 1 ? 1 : -1;
#else
    return -1;
#endif
}

bool uform__process_barrier(void) {
#ifdef SYS_membarrier
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return true;
    /* Not registered in this process after all: register now, whatever the cache says, and retry. */
    if (errno == EPERM && register_now()) return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
#endif
    return false;
}
