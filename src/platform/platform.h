/* Internal: the platform seam for threads, futexes, time, fork detection and dlopen. Core code
 * calls only these, so a port replaces this folder and nothing else. */
#ifndef UFORM_PLATFORM_H
#define UFORM_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Architecture macros, always defined 0 or 1. */
#if defined(__x86_64__) || defined(_M_X64)
#define UFORM_ARCH_X86_64 1
#else
#define UFORM_ARCH_X86_64 0
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
#define UFORM_ARCH_ARM64 1
#else
#define UFORM_ARCH_ARM64 0
#endif
#if defined(__riscv) && __riscv_xlen == 64
#define UFORM_ARCH_RISCV64 1
#else
#define UFORM_ARCH_RISCV64 0
#endif
#if defined(__wasm32__)
#define UFORM_ARCH_WASM32 1
#else
#define UFORM_ARCH_WASM32 0
#endif

/* ---- time ---- */
/** Monotonic nanoseconds. */
uint64_t uform__now_ns(void);
/** One pause/yield instruction for spin loops. */
static inline void uform__cpu_relax(void) {
#if UFORM_ARCH_X86_64
    __builtin_ia32_pause();
#elif UFORM_ARCH_ARM64
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}
/** Gives the CPU to another runnable thread. */
void uform__thread_yield(void);

/* ---- futex: 32-bit words, process-private ---- */
/** Sleeps while `*word == expected`, at most `timeout_ns` (negative: forever). Spurious wakes allowed. */
void uform__futex_wait(const uint32_t *word, uint32_t expected, int64_t timeout_ns);
/** Wakes up to `count` waiters on `word`. */
void uform__futex_wake(const uint32_t *word, int count);

/* ---- threads ---- */
typedef struct uform__thread_t {
    uintptr_t handle;
} uform__thread_t;

/**
 * Starts `entry(argument)` on a new thread named `name` (truncated to 15 bytes), restricted to
 * the `cpu_count` CPUs in `cpus` (none: unrestricted). 0, or the errno value of the failure
 * (ENOMEM: no memory for the CPU set; else pthread_create's): the platform records no message
 * (it sits below core, which keeps the last error), so the caller says what failed.
 */
int uform__thread_start(uform__thread_t *thread, void *(*entry)(void *), void *argument, const char *name,
                        const int32_t *cpus, size_t cpu_count);
void uform__thread_join(uform__thread_t thread);
/** Re-pins a running thread to one CPU; false if the kernel refused. */
bool uform__thread_pin(uform__thread_t thread, int32_t cpu);
/** The CPU the calling thread runs on now, or -1. */
int uform__current_cpu(void);

/* Where glibc registered each thread's restartable-sequences area with the kernel (2.35 and
 * later), the kernel keeps the thread's CPU in it: reading it is one load, where sched_getcpu()
 * is a call into libc (1.2 ns through a static link, 2.0 ns through a shared one, on the AMD
 * guest) that reads the same word. Every fork-join with workers asks (the caller's migration
 * check), so it is inline here. */
#if defined(__linux__) && defined(__GLIBC__) && defined(__has_include) && defined(__has_builtin)
#if __has_include(<sys/rseq.h>) && __has_builtin(__builtin_thread_pointer)
#include <sys/rseq.h>
#define UFORM_CURRENT_CPU_FROM_RSEQ_ 1
#endif
#endif

/** uform__current_cpu, from the thread's rseq area where glibc registered one, else through the
 *  call. `__rseq_size` is 0 where glibc registered none (the kernel or an emulator refused, a
 *  tunable turned it off, or this glibc has no rseq for the architecture: riscv64's 2.36, whose
 *  `__rseq_offset` is then 0, not the area's); a registered area's cpu_id is negative only
 *  before the kernel first fills it in. */
static inline int uform__current_cpu_inline(void) {
#ifdef UFORM_CURRENT_CPU_FROM_RSEQ_
    if (__rseq_size) {
        const struct rseq *area = (const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
        int cpu = (int)__atomic_load_n(&area->cpu_id, __ATOMIC_RELAXED);
        if (cpu >= 0) return cpu;
    }
#endif
    return uform__current_cpu();
}

/* ---- fork ---- */
/** Incremented in every child after fork(); objects record it to notice they were inherited. */
uint32_t uform__fork_generation(void);
/** The same value without installing the fork handler first: for hot paths of objects whose
 *  creation called uform__fork_generation() (which installed it). One relaxed load. */
extern _Atomic uint32_t uform__fork_generation_value;
static inline uint32_t uform__fork_generation_installed(void) {
    return __atomic_load_n((const uint32_t *)&uform__fork_generation_value, __ATOMIC_RELAXED);
}
/** True in a fork()ed child of the process that recorded `generation` (from
 *  uform__fork_generation(), which installed the handler): the one fork check every object
 *  uses. One relaxed load. */
static inline bool uform__forked_since(uint32_t generation) {
    return uform__fork_generation_installed() != generation;
}

/* ---- the asymmetric fence: a full barrier on every thread of this process, on demand ---- */
/** Whether uform__process_barrier works in this process: registers for it on first use (again
 *  in a fork()ed child) and runs one barrier; false where the kernel or an emulator lacks it. */
bool uform__process_barrier_ready(void);
/** What uform__process_barrier_ready found in this process, without registering: 1 ready, -1
 *  unavailable, 0 not asked yet (or being asked: the registration may take milliseconds). */
int uform__process_barrier_known(void);
/** Makes every thread of this process that is running now execute a full memory barrier before
 *  this returns (Linux membarrier, PRIVATE_EXPEDITED): a thread that ordered its own store and
 *  load with a compiler barrier only is then ordered as if it had fenced. False if the kernel
 *  refused (not ready). Costs an interprocessor interrupt per CPU running one of our threads. */
bool uform__process_barrier(void);

/* ---- dynamic libraries ---- */
void *uform__library_open(const char *path);
void *uform__library_symbol(void *library, const char *name);
void uform__library_close(void *library);
/** The loader's last error text, never NULL. */
const char *uform__library_error(void);

/* ---- memory ---- */
/** Anonymous pages, NULL on failure. Released with uform__pages_free. */
void *uform__pages_map(size_t bytes);
void uform__pages_free(void *pointer, size_t bytes);
/** Binds pages to NUMA nodes (interleaved if several); a no-op without NUMA; never fatal. */
void uform__pages_bind(void *pointer, size_t bytes, const int32_t *nodes, size_t node_count);
/** Asks for transparent huge pages; best effort. */
void uform__pages_advise_huge(void *pointer, size_t bytes);

#endif
