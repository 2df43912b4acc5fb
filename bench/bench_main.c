/*
 * `uform bench`: uform's host executor beside OpenMP, pthreadpool, oneTBB and a serial loop,
 * measured in one run and printed as one table. The figures are taken as
 * /work/shared/ANCHORS.md (the project's peer measurements) defines them:
 *
 * - fork-join: each of N items (N = threads) bumps its own 128-byte slot; calls run in
 *   ~20 ms batches for `duration` seconds after a warm-up; time / calls. Every slot is
 *   checked once per call. The caller share is the fraction of items run on the calling
 *   thread.
 * - reduction: sum of `reduce_mib` MiB of float32 (first touch in parallel through the same
 *   pool with the same static split), one untimed pass then `passes` timed ones; GB/s of
 *   the median pass; every pass checked against the exact sum. One kernel for every pool.
 * - wake: the pool idles `wake_idle` (10 ms), then one fork-join call is timed from
 *   submission to return; the median of `wake_samples`.
 * - idle: process CPU time during `idle_seconds` of sleep right after the last call, in
 *   milliseconds of CPU per second.
 *
 * Every (pool, variant, threads) runs in its own fresh process: the parent re-executes
 * /proc/self/exe with its own command line and UFORM_BENCH_CHILD="peer:variant:threads".
 * The parent never creates a pool itself. Rounds are interleaved (every configuration once
 * per round) and each figure is the median over rounds.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BENCH_HAVE_AVX512_KERNEL 1
#endif

#include "peer.h"

/* ------------------------------------------------------------------------------------------ */
/* The pools, in the order rows are printed within a thread count.                            */

static const bench_peer_t *const bench_peers[] = {
    &bench_peer_uform,
    &bench_peer_serial,
#ifdef UFORM_BENCH_HAVE_OPENMP
    &bench_peer_openmp,
#endif
#ifdef UFORM_BENCH_HAVE_PTHREADPOOL
    &bench_peer_pthreadpool,
#endif
#ifdef UFORM_BENCH_HAVE_TBB
    &bench_peer_tbb,
#endif
};
#define BENCH_PEERS_COUNT (sizeof(bench_peers) / sizeof(bench_peers[0]))

#define BENCH_CHILD_ENV "UFORM_BENCH_CHILD"
#define BENCH_RESULT_MARK "UFORM_BENCH_RESULT"
#define BENCH_MAX_THREAD_COUNTS 8
#define BENCH_MAX_CONFIGS 256
#define BENCH_MAX_ROUNDS 64

typedef struct options_t {
    int quick;
    int rounds;
    double warmup;       /* seconds of fork-join before timing */
    double duration;     /* seconds of timed fork-join */
    size_t reduce_mib;   /* MiB of float32 summed */
    int passes;          /* timed reduction passes */
    int wake_samples;    /* timed wakes */
    double wake_idle;    /* seconds idle before each timed wake */
    double idle_seconds; /* seconds of sleep for the idle cost */
    double timeout;      /* seconds before a child is considered hung */
    size_t threads[BENCH_MAX_THREAD_COUNTS];
    size_t threads_count;
    const char *peers; /* comma-separated names, NULL = all */
} options_t;

/* ------------------------------------------------------------------------------------------ */
/* Time                                                                                       */

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double process_cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void sleep_seconds(double seconds) {
    struct timespec t;
    t.tv_sec = (time_t)seconds;
    t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static int compare_doubles(void const *a, void const *b) {
    double x = *(double const *)a, y = *(double const *)b;
    return (x > y) - (x < y);
}

/* Sorts in place. */
static double median_of(double *values, size_t count) {
    if (!count) return NAN;
    qsort(values, count, sizeof(double), compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

/* ------------------------------------------------------------------------------------------ */
/* The reduction kernel: one function for every pool. Lanes accumulate in float; with values */
/* in {0,1,2,3} and at most 2^22 values per lane (1 GiB / 64 lanes) every lane sum stays      */
/* below 2^24, so the result is exact and comparable with ==.                                 */

static double sum_plain(float const *data, size_t count) {
    float lanes[64] = {0};
    size_t i = 0;
    for (; i + 64 <= count; i += 64)
        for (size_t j = 0; j < 64; j++) lanes[j] += data[i + j];
    double sum = 0;
    for (size_t j = 0; j < 64; j++) sum += lanes[j];
    for (; i < count; i++) sum += data[i];
    return sum;
}

#ifdef BENCH_HAVE_AVX512_KERNEL
__attribute__((target("avx512f"))) static double sum_avx512(float const *data, size_t count) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= count; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(data + i));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(data + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(data + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(data + i + 48));
    }
    float lanes[64];
    _mm512_storeu_ps(lanes, a0);
    _mm512_storeu_ps(lanes + 16, a1);
    _mm512_storeu_ps(lanes + 32, a2);
    _mm512_storeu_ps(lanes + 48, a3);
    double sum = 0;
    for (size_t j = 0; j < 64; j++) sum += lanes[j];
    for (; i < count; i++) sum += data[i];
    return sum;
}
#endif

static double (*bench_sum)(float const *, size_t) = sum_plain;
static char const *bench_sum_name = "plain loop";

static void choose_kernel(void) {
#ifdef BENCH_HAVE_AVX512_KERNEL
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) bench_sum = sum_avx512, bench_sum_name = "AVX-512F";
#endif
}

/* The exact sum of (i & 3) over i in [0, n). */
static double exact_sum(size_t n) {
    static unsigned const tails[4] = {0, 0, 1, 3};
    return (double)(6 * (uint64_t)(n / 4) + tails[n % 4]);
}

/* ------------------------------------------------------------------------------------------ */
/* Work items                                                                                 */

/* 1 on the thread that submits calls, 0 elsewhere: how the caller share is counted. */
static _Thread_local unsigned char bench_on_caller;

typedef struct slot_t {
    _Alignas(128) size_t count;
    size_t caller;
    int cpu; /* set by wake_item only */
} slot_t;

static void bump_item(void *context, size_t item) {
    slot_t *slots = (slot_t *)context;
    slots[item].count++;
    slots[item].caller += bench_on_caller;
}

/* bump_item plus the CPU it ran on: for the wake samples, where a few ns do not matter. */
static void wake_item(void *context, size_t item) {
    slot_t *slots = (slot_t *)context;
    slots[item].cpu = sched_getcpu();
    slots[item].count++;
    slots[item].caller += bench_on_caller;
}

static size_t distinct_cpus_of_slots(slot_t const *slots, size_t items) {
    size_t distinct = 0;
    for (size_t t = 0; t < items; t++) {
        size_t u = 0;
        while (u < t && slots[u].cpu != slots[t].cpu) u++;
        distinct += u == t;
    }
    return distinct;
}

typedef struct partial_t {
    _Alignas(128) double sum;
    size_t done;
    int cpu; /* where the item last ran */
} partial_t;

typedef struct reduce_t {
    float *data;
    size_t count;
    size_t parts;
    partial_t *partials;
} reduce_t;

static void fill_item(void *context, size_t item) {
    reduce_t *r = (reduce_t *)context;
    size_t first = item * r->count / r->parts, last = (item + 1) * r->count / r->parts;
    for (size_t i = first; i < last; i++) r->data[i] = (float)(i & 3);
    r->partials[item].done++;
}

static void sum_item(void *context, size_t item) {
    reduce_t *r = (reduce_t *)context;
    size_t first = item * r->count / r->parts, last = (item + 1) * r->count / r->parts;
    r->partials[item].cpu = sched_getcpu();
    r->partials[item].sum = bench_sum(r->data + first, last - first);
    r->partials[item].done++;
}

/* ------------------------------------------------------------------------------------------ */
/* One configuration, in a child process                                                      */

typedef struct measured_t {
    double fork_join_ns;
    double caller_share;
    double wake_ns;
    double wake_p90_ns;
    double wake_cpus; /* distinct CPUs a timed wake call's items ran on, mean over samples */
    double reduce_gbs;
    double reduce_cpus; /* distinct CPUs a reduction pass ran on, mean over timed passes */
    double idle_ms;
    double calls;
} measured_t;

static int check_slots(slot_t const *slots, size_t items, size_t expected, char const *what) {
    for (size_t i = 0; i < items; i++)
        if (slots[i].count != expected) {
            fprintf(stderr, "uform bench: %s: item %zu ran %zu times, expected %zu\n", what, i, slots[i].count,
                    expected);
            return 1;
        }
    return 0;
}

static int child_measure(options_t const *o, bench_peer_t const *peer, char const *variant, size_t threads,
                         measured_t *m) {
    char error[512] = "";
    void *pool = peer->create(threads, variant, error, sizeof(error));
    if (!pool) {
        fprintf(stderr, "uform bench: %s: %s\n", peer->label, error[0] ? error : "create failed");
        return 1;
    }
    bench_on_caller = 1;
    size_t const items = threads;
    int failed = 0;

    /* Reduction first (its 1 GiB is unmapped before the latency and idle figures). */
    {
        size_t const bytes = o->reduce_mib << 20, align = (size_t)2 << 20;
        size_t const count = bytes / sizeof(float);
        void *mapping = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapping == MAP_FAILED) {
            fprintf(stderr, "uform bench: cannot map %zu MiB\n", o->reduce_mib);
            peer->destroy(pool);
            return 1;
        }
        float *data = (float *)(((uintptr_t)mapping + align - 1) & ~(uintptr_t)(align - 1));
#ifdef MADV_HUGEPAGE
        madvise(data, bytes, MADV_HUGEPAGE);
#endif
        partial_t *partials = aligned_alloc(128, sizeof(partial_t) * items);
        memset(partials, 0, sizeof(partial_t) * items);
        reduce_t r = {data, count, items, partials};
        double const exact = exact_sum(count);
        failed |= peer->fork_join(pool, items, fill_item, &r);
        double *times = calloc((size_t)o->passes + 1, sizeof(double));
        double cpus_total = 0;
        for (int pass = 0; pass <= o->passes && !failed; pass++) {
            double start = now_seconds();
            failed |= peer->fork_join(pool, items, sum_item, &r);
            double elapsed = now_seconds() - start;
            double sum = 0;
            for (size_t t = 0; t < items; t++) {
                if (partials[t].done != (size_t)pass + 2) {
                    fprintf(stderr, "uform bench: reduction pass %d: part %zu ran %zu times, expected %d\n", pass, t,
                            partials[t].done, pass + 2);
                    failed = 1;
                }
                sum += partials[t].sum;
            }
            if (sum != exact) {
                fprintf(stderr, "uform bench: reduction pass %d: sum %.1f, exact %.1f\n", pass, sum, exact);
                failed = 1;
            }
            if (pass) { /* pass 0 is the untimed warm-up */
                times[pass - 1] = elapsed;
                size_t distinct = 0;
                for (size_t t = 0; t < items; t++) {
                    size_t u = 0;
                    while (u < t && partials[u].cpu != partials[t].cpu) u++;
                    distinct += u == t;
                }
                cpus_total += (double)distinct;
            }
        }
        m->reduce_gbs = (double)bytes / median_of(times, (size_t)o->passes) * 1e-9;
        m->reduce_cpus = cpus_total / o->passes;
        free(times);
        free(partials);
        munmap(mapping, bytes + align);
    }

    slot_t *slots = aligned_alloc(128, sizeof(slot_t) * items);
    memset(slots, 0, sizeof(slot_t) * items);
    size_t expected = 0;

    /* Fork-join: warm up, estimate a call, then ~20 ms batches until `duration` elapsed. */
    if (!failed) {
        size_t warm_calls = 0;
        double start = now_seconds(), elapsed = 0;
        while (!failed && (elapsed = now_seconds() - start) < o->warmup) {
            failed |= peer->fork_join(pool, items, bump_item, slots);
            failed |= check_slots(slots, items, ++expected, "fork-join warm-up");
            warm_calls++;
        }
        double const batch_seconds = 0.02;
        double per_call = warm_calls ? elapsed / (double)warm_calls : batch_seconds;
        size_t batch = per_call > 0 ? (size_t)(batch_seconds / per_call) : 1;
        if (batch < 1) batch = 1;
        size_t caller_before = 0;
        for (size_t i = 0; i < items; i++) caller_before += slots[i].caller;
        size_t calls = 0;
        start = now_seconds();
        elapsed = 0;
        while (!failed && elapsed < o->duration) {
            for (size_t k = 0; k < batch && !failed; k++) {
                failed |= peer->fork_join(pool, items, bump_item, slots);
                failed |= check_slots(slots, items, ++expected, "fork-join");
            }
            calls += batch;
            elapsed = now_seconds() - start;
            batch = (size_t)(batch_seconds * (double)calls / elapsed);
            if (batch < 1) batch = 1;
        }
        size_t caller_after = 0;
        for (size_t i = 0; i < items; i++) caller_after += slots[i].caller;
        m->calls = (double)calls;
        m->fork_join_ns = calls ? elapsed / (double)calls * 1e9 : NAN;
        m->caller_share = calls ? (double)(caller_after - caller_before) / ((double)calls * (double)items) : NAN;
    }

    /* Wake: idle, then time one call from submission to return. */
    if (!failed) {
        double *wakes = calloc((size_t)o->wake_samples, sizeof(double));
        double cpus_total = 0;
        for (int s = 0; s < o->wake_samples && !failed; s++) {
            sleep_seconds(o->wake_idle);
            double start = now_seconds();
            failed |= peer->fork_join(pool, items, wake_item, slots);
            wakes[s] = (now_seconds() - start) * 1e9;
            cpus_total += (double)distinct_cpus_of_slots(slots, items);
            failed |= check_slots(slots, items, ++expected, "wake");
        }
        m->wake_ns = median_of(wakes, (size_t)o->wake_samples); /* sorts */
        m->wake_p90_ns = wakes[(size_t)(0.9 * (o->wake_samples - 1))];
        m->wake_cpus = cpus_total / o->wake_samples;
        free(wakes);
    }

    /* Idle: CPU time of the whole process while the caller sleeps right after the last call. */
    if (!failed) {
        double cpu = process_cpu_seconds(), wall = now_seconds();
        sleep_seconds(o->idle_seconds);
        cpu = process_cpu_seconds() - cpu;
        wall = now_seconds() - wall;
        m->idle_ms = cpu / wall * 1e3;
    }

    free(slots);
    peer->destroy(pool);
    return failed;
}

static bench_peer_t const *find_peer(char const *name) {
    for (size_t i = 0; i < BENCH_PEERS_COUNT; i++)
        if (strcmp(bench_peers[i]->name, name) == 0) return bench_peers[i];
    return NULL;
}

static int child_main(options_t const *o, char const *spec) {
    char name[64], variant[64];
    size_t threads = 0;
    if (sscanf(spec, "%63[^:]:%63[^:]:%zu", name, variant, &threads) != 3 || !threads) {
        fprintf(stderr, "uform bench: bad %s=%s\n", BENCH_CHILD_ENV, spec);
        return 1;
    }
    bench_peer_t const *peer = find_peer(name);
    if (!peer) {
        fprintf(stderr, "uform bench: no pool named %s in this build\n", name);
        return 1;
    }
    measured_t m;
    memset(&m, 0, sizeof(m));
    int failed = child_measure(o, peer, strcmp(variant, "-") == 0 ? NULL : variant, threads, &m);
    if (failed) return 1;
    printf("%s fj=%.6g share=%.6g wake=%.6g wake90=%.6g wcpus=%.6g gbs=%.6g cpus=%.6g idle=%.6g calls=%.0f\n",
           BENCH_RESULT_MARK, m.fork_join_ns, m.caller_share, m.wake_ns, m.wake_p90_ns, m.wake_cpus, m.reduce_gbs,
           m.reduce_cpus, m.idle_ms, m.calls);
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The parent: configurations, children, the table                                            */

typedef struct config_t {
    bench_peer_t const *peer;
    char const *variant; /* NULL: unnamed */
    size_t threads;
} config_t;

typedef enum outcome_t { OUTCOME_OK = 0, OUTCOME_FAILED, OUTCOME_CRASHED, OUTCOME_HUNG, OUTCOME_SPAWN } outcome_t;

typedef struct round_t {
    outcome_t outcome;
    measured_t m;
} round_t;


/* Machine-wide CPU accounting from /proc/stat, in seconds: busy (not idle, not iowait) and
 * steal (time the hypervisor ran something else on our vCPUs). */
typedef struct machine_cpu_t {
    double busy, steal, total;
    int ok;
} machine_cpu_t;

static machine_cpu_t machine_cpu(void) {
    machine_cpu_t m = {0, 0, 0, 0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return m;
    unsigned long long v[10] = {0};
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", v, v + 1, v + 2, v + 3, v + 4,
                     v + 5, v + 6, v + 7, v + 8, v + 9);
    fclose(f);
    if (got < 8) return m;
    double const tick = (double)sysconf(_SC_CLK_TCK);
    /* user nice system idle iowait irq softirq steal (guest and guest_nice are inside user). */
    double total = 0;
    for (int i = 0; i < 8; i++) total += (double)v[i];
    m.total = total / tick;
    m.steal = (double)v[7] / tick;
    m.busy = (total - (double)v[3] - (double)v[4] - (double)v[7]) / tick;
    m.ok = 1;
    return m;
}

static double own_cpu_seconds(void) {
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return (double)self.ru_utime.tv_sec + (double)self.ru_utime.tv_usec * 1e-6 + (double)self.ru_stime.tv_sec +
           (double)self.ru_stime.tv_usec * 1e-6 + (double)children.ru_utime.tv_sec +
           (double)children.ru_utime.tv_usec * 1e-6 + (double)children.ru_stime.tv_sec +
           (double)children.ru_stime.tv_usec * 1e-6;
}

static char **self_command_line(void) {
    static char buffer[65536];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t size = 0;
    ssize_t got;
    while (size < sizeof(buffer) - 1 && (got = read(fd, buffer + size, sizeof(buffer) - 1 - size)) > 0)
        size += (size_t)got;
    close(fd);
    if (!size) return NULL;
    buffer[size] = 0;
    size_t count = 0;
    for (size_t i = 0; i < size; i++) count += buffer[i] == 0;
    if (buffer[size - 1] != 0) count++;
    char **argv = calloc(count + 1, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < size && k < count; i += strlen(buffer + i) + 1) argv[k++] = buffer + i;
    argv[k] = NULL;
    return argv;
}

static int parse_measured(char *line, measured_t *m) {
    return sscanf(line, BENCH_RESULT_MARK " fj=%lf share=%lf wake=%lf wake90=%lf wcpus=%lf gbs=%lf cpus=%lf idle=%lf calls=%lf",
                  &m->fork_join_ns, &m->caller_share, &m->wake_ns, &m->wake_p90_ns, &m->wake_cpus, &m->reduce_gbs,
                  &m->reduce_cpus, &m->idle_ms, &m->calls) == 9;
}

static outcome_t run_child(options_t const *o, char **argv, config_t const *c, measured_t *m) {
    char spec[192];
    snprintf(spec, sizeof(spec), "%s:%s:%zu", c->peer->name, c->variant ? c->variant : "-", c->threads);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return OUTCOME_SPAWN;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return OUTCOME_SPAWN;
    }
    if (pid == 0) {
        /* The parent is single-threaded (it never creates a pool), so setenv is safe here. */
        dup2(fds[1], STDOUT_FILENO);
        setenv(BENCH_CHILD_ENV, spec, 1);
        if (c->peer->prepare_environment) c->peer->prepare_environment(c->variant);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fds[1]);
    char output[8192];
    size_t size = 0;
    int hung = 0;
    double const deadline = now_seconds() + o->timeout;
    for (;;) {
        double left = deadline - now_seconds();
        if (left <= 0) {
            hung = 1;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int ready = poll(&p, 1, (int)(left * 1000) + 1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        ssize_t got = read(fds[0], output + size, sizeof(output) - 1 - size);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        size += (size_t)got;
        if (size == sizeof(output) - 1) size = 0; /* a chatty child: keep the tail */
    }
    close(fds[0]);
    if (hung) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    output[size] = 0;
    int parsed = 0;
    for (char *line = strtok(output, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, BENCH_RESULT_MARK, strlen(BENCH_RESULT_MARK)) == 0) parsed = parse_measured(line, m);
        else fprintf(stderr, "%s\n", line);
    }
    if (hung) return OUTCOME_HUNG;
    if (WIFSIGNALED(status)) return OUTCOME_CRASHED;
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127) return OUTCOME_SPAWN;
    if (WEXITSTATUS(status) != 0 || !parsed) return OUTCOME_FAILED;
    return OUTCOME_OK;
}

static int peer_selected(options_t const *o, char const *name) {
    if (!o->peers) return 1;
    size_t length = strlen(name);
    for (char const *p = o->peers; *p;) {
        char const *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == length && strncmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

static size_t usable_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return (size_t)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

static void cpu_model(char *out, size_t size) {
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t') colon++;
                colon[strcspn(colon, "\n")] = 0;
                snprintf(out, size, "%s", colon);
            }
            break;
        }
    fclose(f);
}

/* "352 ns", "52.9 us", "8.26 ms" */
static void format_time(char *out, size_t size, double ns) {
    if (isnan(ns)) snprintf(out, size, "-");
    else if (ns < 1e3) snprintf(out, size, "%.0f ns", ns);
    else if (ns < 1e4) snprintf(out, size, "%.2f us", ns / 1e3);
    else if (ns < 1e6) snprintf(out, size, "%.1f us", ns / 1e3);
    else if (ns < 1e7) snprintf(out, size, "%.2f ms", ns / 1e6);
    else snprintf(out, size, "%.1f ms", ns / 1e6);
}

static void format_ratio(char *out, size_t size, double value, double reference) {
    if (isnan(value) || isnan(reference) || reference <= 0) snprintf(out, size, "-");
    else if (value / reference < 10) snprintf(out, size, "%.2f", value / reference);
    else if (value / reference < 1000) snprintf(out, size, "%.0f", value / reference);
    else snprintf(out, size, "%.2g", value / reference);
}

static char const *outcome_text(outcome_t outcome) {
    switch (outcome) {
    case OUTCOME_FAILED: return "FAILED (check)";
    case OUTCOME_CRASHED: return "CRASHED";
    case OUTCOME_HUNG: return "HUNG (killed)";
    case OUTCOME_SPAWN: return "n/a (could not start)";
    default: return "ok";
    }
}

typedef struct row_t {
    config_t config;
    outcome_t outcome; /* the worst over rounds */
    int ok_rounds;
    measured_t m; /* medians over ok rounds */
} row_t;

static row_t const *find_row(row_t const *rows, size_t count, char const *peer, char const *variant, size_t threads) {
    for (size_t i = 0; i < count; i++)
        if (strcmp(rows[i].config.peer->name, peer) == 0 && rows[i].config.threads == threads &&
            ((!variant && !rows[i].config.variant) ||
             (variant && rows[i].config.variant && strcmp(variant, rows[i].config.variant) == 0)) &&
            rows[i].ok_rounds)
            return rows + i;
    return NULL;
}

static double field(row_t const *row, size_t offset) {
    return row ? *(double const *)((char const *)&row->m + offset) : NAN;
}
#define FIELD(row, name) field(row, offsetof(measured_t, name))

static void print_usage(FILE *out, char const *program) {
    fprintf(out,
            "usage: %s [--quick | --full] [options]\n"
            "Measures uform's host executor beside OpenMP, pthreadpool, oneTBB and a serial loop;\n"
            "prints one Markdown table on stdout, progress on stderr.\n"
            "  --quick            under a minute: 1 round, 0.25 s fork-join, 256 MiB, 0.25 s idle\n"
            "  --full             the default: 5 rounds, 1 s fork-join, 1 GiB x 5 passes, 1 s idle\n"
            "  --rounds N         fresh processes per configuration (median taken)\n"
            "  --duration S       timed fork-join seconds (after --warmup S, default 0.1)\n"
            "  --reduce-mib N     float32 MiB summed; --passes N timed passes\n"
            "  --wake-samples N   timed wakes, each after --wake-idle-ms N (default 10) idle\n"
            "  --idle S           seconds of sleep for the idle-cost figure\n"
            "  --threads A,B,..   thread counts (default 1, usable cores, 2x usable cores)\n"
            "  --peers A,B,..     pools to run, of:",
            program);
    for (size_t i = 0; i < BENCH_PEERS_COUNT; i++) fprintf(out, " %s", bench_peers[i]->name);
    fprintf(out, "\n  --timeout S        seconds before a configuration counts as hung (default 120)\n");
}

static int parse_options(int argc, char **argv, options_t *o) {
    memset(o, 0, sizeof(*o));
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--full") == 0) quick = 0;
    }
    o->quick = quick;
    o->rounds = quick ? 1 : 5;
    o->warmup = 0.1;
    o->duration = quick ? 0.25 : 1.0;
    o->reduce_mib = quick ? 256 : 1024;
    o->passes = quick ? 3 : 5;
    o->wake_samples = quick ? 20 : 50;
    o->wake_idle = 0.010;
    o->idle_seconds = quick ? 0.25 : 1.0;
    o->timeout = 120;
    size_t const cores = usable_cores();
    size_t const defaults[3] = {1, cores, 2 * cores};
    for (size_t i = 0; i < 3; i++) {
        size_t j = 0;
        while (j < o->threads_count && o->threads[j] != defaults[i]) j++;
        if (j == o->threads_count) o->threads[o->threads_count++] = defaults[i];
    }
    for (int i = 1; i < argc; i++) {
        char const *a = argv[i];
        char const *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0 || strcmp(a, "--full") == 0) continue;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 3;
        static char const *const valued[] = {"--rounds", "--warmup", "--duration", "--reduce-mib", "--passes",
                                             "--wake-samples", "--wake-idle-ms", "--idle", "--timeout", "--peers",
                                             "--threads", NULL};
        for (size_t k = 0; valued[k]; k++)
            if (strcmp(a, valued[k]) == 0) {
                if (!v) {
                    fprintf(stderr, "uform bench: %s needs a value\n", a);
                    return 2;
                }
                i++;
                break;
            }
        if (strcmp(a, "--rounds") == 0) o->rounds = atoi(v);
        else if (strcmp(a, "--warmup") == 0) o->warmup = atof(v);
        else if (strcmp(a, "--duration") == 0) o->duration = atof(v);
        else if (strcmp(a, "--reduce-mib") == 0) o->reduce_mib = (size_t)atol(v);
        else if (strcmp(a, "--passes") == 0) o->passes = atoi(v);
        else if (strcmp(a, "--wake-samples") == 0) o->wake_samples = atoi(v);
        else if (strcmp(a, "--wake-idle-ms") == 0) o->wake_idle = atof(v) * 1e-3;
        else if (strcmp(a, "--idle") == 0) o->idle_seconds = atof(v);
        else if (strcmp(a, "--timeout") == 0) o->timeout = atof(v);
        else if (strcmp(a, "--peers") == 0) o->peers = v;
        else if (strcmp(a, "--threads") == 0) {
            o->threads_count = 0;
            for (char const *p = v; *p;) {
                char *end;
                unsigned long n = strtoul(p, &end, 10);
                if (end == p || !n || n > 4096 || o->threads_count == BENCH_MAX_THREAD_COUNTS) {
                    fprintf(stderr, "uform bench: bad --threads %s\n", v);
                    return 2;
                }
                o->threads[o->threads_count++] = n;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') {
                    fprintf(stderr, "uform bench: bad --threads %s\n", v);
                    return 2;
                }
            }
        } else {
            fprintf(stderr, "uform bench: unknown option %s\n", a);
            return 2;
        }
    }
    if (o->rounds < 1 || o->rounds > BENCH_MAX_ROUNDS || o->duration <= 0 || o->warmup < 0 || !o->reduce_mib ||
        o->reduce_mib > ((size_t)1 << 20) || o->passes < 1 || o->wake_samples < 1 || o->wake_idle < 0 ||
        o->idle_seconds <= 0 || o->timeout <= 0 || !o->threads_count) {
        fprintf(stderr, "uform bench: an option is out of range\n");
        return 2;
    }
    /* Per-lane float sums stay exact up to 2^22 values of at most 3 per lane: 1 GiB per call. */
    if (o->reduce_mib > 1024) {
        fprintf(stderr, "uform bench: --reduce-mib is at most 1024 (the exact check's limit)\n");
        return 2;
    }
    return 0;
}

static void print_table_row(char cells[][48], size_t columns, size_t const *widths, int right_from) {
    printf("|");
    for (size_t c = 0; c < columns; c++) {
        if ((int)c >= right_from) printf(" %*s |", (int)widths[c], cells[c]);
        else printf(" %-*s |", (int)widths[c], cells[c]);
    }
    printf("\n");
}

int uform_bench_main(int argc, char **argv) {
    char const *program = argc > 0 && argv[0] ? argv[0] : "uform-bench";
    options_t o;
    int parsed = parse_options(argc, argv, &o);
    if (parsed == 3) {
        print_usage(stdout, program);
        return 0;
    }
    if (parsed) {
        print_usage(stderr, program);
        return 2;
    }
    choose_kernel();

    char const *child = getenv(BENCH_CHILD_ENV);
    if (child) return child_main(&o, child);

    if (o.peers)
        for (char const *p = o.peers; *p;) {
            char const *end = strchr(p, ',');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), p);
            if (!find_peer(name)) {
                fprintf(stderr, "uform bench: no pool named '%s' in this build\n", name);
                print_usage(stderr, program);
                return 2;
            }
            if (!end) break;
            p = end + 1;
        }

    char **self_argv = self_command_line();
    if (!self_argv) {
        fprintf(stderr, "uform bench: cannot read /proc/self/cmdline to start children\n");
        return 1;
    }

    /* Configurations: by thread count, then pool, then variant. */
    static config_t configs[BENCH_MAX_CONFIGS];
    size_t config_count = 0;
    for (size_t t = 0; t < o.threads_count; t++)
        for (size_t p = 0; p < BENCH_PEERS_COUNT; p++) {
            bench_peer_t const *peer = bench_peers[p];
            if (!peer_selected(&o, peer->name) || (peer->single_thread_only && o.threads[t] != 1)) continue;
            char const *const *variants = peer->variants;
            size_t variant_count = 1;
            if (variants) {
                variant_count = 0;
                while (variants[variant_count]) variant_count++;
            }
            for (size_t v = 0; v < variant_count && config_count < BENCH_MAX_CONFIGS; v++)
                configs[config_count++] = (config_t){peer, variants ? variants[v] : NULL, o.threads[t]};
        }

    char model[256];
    cpu_model(model, sizeof(model));
    struct utsname un;
    uname(&un);
    size_t const cores = usable_cores();
    double const child_seconds = 0.05 + (double)o.reduce_mib / 1024.0 * 0.5 + o.warmup + o.duration +
                                 o.wake_samples * (o.wake_idle + 0.0005) + o.idle_seconds;
    fprintf(stderr, "uform bench: %zu configurations x %d round%s, about %.0f s\n", config_count, o.rounds,
            o.rounds == 1 ? "" : "s", child_seconds * (double)config_count * o.rounds);

    static round_t results[BENCH_MAX_CONFIGS][BENCH_MAX_ROUNDS];
    int const tty = isatty(STDERR_FILENO);
    double const started = now_seconds();
    machine_cpu_t const machine_before = machine_cpu();
    double const own_before = own_cpu_seconds();
    for (int r = 0; r < o.rounds; r++)
        for (size_t c = 0; c < config_count; c++) {
            config_t const *cfg = configs + c;
            fprintf(stderr, "%suform bench: round %d/%d, %zu/%zu: %s%s%s, %zu thread%s, %.0f s%s", tty ? "\r\033[K" : "",
                    r + 1, o.rounds, c + 1, config_count, cfg->peer->label, cfg->variant ? " " : "",
                    cfg->variant ? cfg->variant : "", cfg->threads, cfg->threads == 1 ? "" : "s",
                    now_seconds() - started, tty ? "" : "\n");
            memset(&results[c][r], 0, sizeof(round_t));
            results[c][r].outcome = run_child(&o, self_argv, cfg, &results[c][r].m);
            if (results[c][r].outcome != OUTCOME_OK)
                fprintf(stderr, "%suform bench: %s%s%s at %zu threads: %s\n", tty ? "\r\033[K" : "", cfg->peer->label,
                        cfg->variant ? " " : "", cfg->variant ? cfg->variant : "", cfg->threads,
                        outcome_text(results[c][r].outcome));
        }
    double const wall = now_seconds() - started;
    machine_cpu_t const machine_after = machine_cpu();
    double const own = own_cpu_seconds() - own_before;
    fprintf(stderr, "%suform bench: done in %.0f s\n", tty ? "\r\033[K" : "", wall);

    /* Medians over rounds. */
    static row_t rows[BENCH_MAX_CONFIGS];
    int any_failed = 0;
    for (size_t c = 0; c < config_count; c++) {
        row_t *row = rows + c;
        row->config = configs[c];
        row->outcome = OUTCOME_OK;
        double values[9][BENCH_MAX_ROUNDS];
        int n = 0;
        for (int r = 0; r < o.rounds; r++) {
            round_t const *x = &results[c][r];
            if (x->outcome != OUTCOME_OK) {
                if (row->outcome == OUTCOME_OK || x->outcome < row->outcome) row->outcome = x->outcome;
                if (x->outcome != OUTCOME_SPAWN) any_failed = 1;
                continue;
            }
            values[0][n] = x->m.fork_join_ns, values[1][n] = x->m.caller_share, values[2][n] = x->m.wake_ns;
            values[3][n] = x->m.wake_p90_ns, values[4][n] = x->m.reduce_gbs, values[5][n] = x->m.idle_ms;
            values[6][n] = x->m.calls, values[7][n] = x->m.reduce_cpus, values[8][n] = x->m.wake_cpus;
            n++;
        }
        row->ok_rounds = n;
        row->m.fork_join_ns = median_of(values[0], (size_t)n);
        row->m.caller_share = median_of(values[1], (size_t)n);
        row->m.wake_ns = median_of(values[2], (size_t)n);
        row->m.wake_p90_ns = median_of(values[3], (size_t)n);
        row->m.reduce_gbs = median_of(values[4], (size_t)n);
        row->m.idle_ms = median_of(values[5], (size_t)n);
        row->m.calls = median_of(values[6], (size_t)n);
        row->m.reduce_cpus = median_of(values[7], (size_t)n);
        row->m.wake_cpus = median_of(values[8], (size_t)n);
    }

    /* The header. */
    printf("## uform bench (%s)\n\n", o.quick ? "quick" : "full");
    printf("- machine: %s, %zu usable cores, Linux %s, %s\n", model, cores, un.release, un.machine);
    printf("- built with: "
#if defined(__clang__)
           "clang "
#elif defined(__GNUC__)
           "gcc "
#endif
           __VERSION__ "; reduction kernel: %s\n", bench_sum_name);
    printf("- settings: %d round%s (median of fresh processes), fork-join %.2g s after %.2g s warm-up, "
           "reduction %zu MiB x %d passes, wake after %.0f ms idle x %d, idle %.2g s\n",
           o.rounds, o.rounds == 1 ? "" : "s", o.duration, o.warmup, o.reduce_mib, o.passes, o.wake_idle * 1e3,
           o.wake_samples, o.idle_seconds);
    if (machine_before.ok && machine_after.ok && wall > 0) {
        double other = (machine_after.busy - machine_before.busy - own) / wall;
        double steal = (machine_after.steal - machine_before.steal) / wall;
        printf("- during the run (%.0f s): other processes kept %.2f cores busy, the hypervisor stole %.2f cores "
               "(of %zu); figures taken while either is high are noisy\n",
               wall, other > 0 ? other : 0.0, steal, cores);
    }
    printf("\n");

    /* The table. */
    enum { COLUMNS = 12 };
    static char const *const headers[COLUMNS] = {"pool",         "threads",     "fork-join", "/ uform spin",
                                                 "caller share", "wake",        "on CPUs",   "/ uform park",
                                                 "reduce GB/s",  "/ uform",     "on CPUs",   "idle CPU ms/s"};
    size_t widths[COLUMNS];
    static char cells[BENCH_MAX_CONFIGS][COLUMNS][48];
    for (size_t c = 0; c < COLUMNS; c++) widths[c] = strlen(headers[c]);
    for (size_t i = 0; i < config_count; i++) {
        row_t const *row = rows + i;
        config_t const *cfg = &row->config;
        char (*cell)[48] = cells[i];
        snprintf(cell[0], 48, "%s%s%s", cfg->peer->label, cfg->variant ? " " : "", cfg->variant ? cfg->variant : "");
        snprintf(cell[1], 48, "%zu", cfg->threads);
        if (!row->ok_rounds) {
            snprintf(cell[2], 48, "%s", outcome_text(row->outcome));
            for (size_t c = 3; c < COLUMNS; c++) snprintf(cell[c], 48, "-");
        } else {
            row_t const *spin = find_row(rows, config_count, "uform", "spinning", cfg->threads);
            row_t const *park = find_row(rows, config_count, "uform", "parked", cfg->threads);
            double uform_gbs = fmax(FIELD(spin, reduce_gbs), FIELD(park, reduce_gbs));
            format_time(cell[2], 48, row->m.fork_join_ns);
            if (row->outcome != OUTCOME_OK) {
                size_t l = strlen(cell[2]);
                snprintf(cell[2] + l, 48 - l, " (%d/%d ok)", row->ok_rounds, o.rounds);
            }
            format_ratio(cell[3], 48, row->m.fork_join_ns, FIELD(spin, fork_join_ns));
            snprintf(cell[4], 48, "%.2f", row->m.caller_share);
            format_time(cell[5], 48, row->m.wake_ns);
            snprintf(cell[6], 48, "%.1f", row->m.wake_cpus);
            format_ratio(cell[7], 48, row->m.wake_ns, FIELD(park, wake_ns));
            snprintf(cell[8], 48, "%.1f", row->m.reduce_gbs);
            format_ratio(cell[9], 48, row->m.reduce_gbs, uform_gbs);
            snprintf(cell[10], 48, "%.1f", row->m.reduce_cpus);
            snprintf(cell[11], 48, row->m.idle_ms < 10 ? "%.2f" : "%.0f", row->m.idle_ms);
        }
        for (size_t c = 0; c < COLUMNS; c++)
            if (strlen(cell[c]) > widths[c]) widths[c] = strlen(cell[c]);
    }
    char header_cells[COLUMNS][48], rule[COLUMNS][48];
    for (size_t c = 0; c < COLUMNS; c++) {
        snprintf(header_cells[c], 48, "%s", headers[c]);
        size_t w = widths[c] < 47 ? widths[c] : 47;
        memset(rule[c], '-', w);
        rule[c][w] = 0;
        if (c >= 1) rule[c][w - 1] = ':';
    }
    print_table_row(header_cells, COLUMNS, widths, 1);
    print_table_row(rule, COLUMNS, widths, 1);
    for (size_t i = 0; i < config_count; i++) print_table_row(cells[i], COLUMNS, widths, 1);

    printf("\nfork-join: time per call of N = threads items; \"/ uform spin\" is this pool's time over uform "
           "SPINNING's at the same threads (above 1: uform is faster). caller share: items run on the calling "
           "thread. wake: median time of one call after %.0f ms idle; \"/ uform park\" over uform PARKED's. "
           "reduce: GB/s of the median pass; \"/ uform\" is this pool's GB/s over uform's better mood "
           "(above 1: the peer is faster). on CPUs (after wake, after reduce): distinct CPUs one call's items ran "
           "on, mean over calls (1.0 at 2 threads: both items ran on one core, one after the other). idle: process CPU ms per second of sleep after the "
           "last call.\n",
           o.wake_idle * 1e3);

    /* The targets, as figures and a verdict each; informational, never the exit status. */
    printf("\n### Targets\n\n");
    size_t const all = cores, over = 2 * cores;
    row_t const *spin_all = find_row(rows, config_count, "uform", "spinning", all);
    row_t const *omp_active = find_row(rows, config_count, "openmp", "active", all);
    row_t const *ptp = find_row(rows, config_count, "pthreadpool", NULL, all);
    char a[48], b[48], d[48];
    if (spin_all && omp_active) {
        format_time(a, 48, spin_all->m.fork_join_ns), format_time(b, 48, omp_active->m.fork_join_ns);
        printf("- fork-join SPINNING at %zu threads <= half of OpenMP active: %s vs %s -> %s\n", all, a, b,
               spin_all->m.fork_join_ns <= 0.5 * omp_active->m.fork_join_ns ? "met" : "MISSED");
    }
    if (spin_all && ptp) {
        format_time(a, 48, spin_all->m.fork_join_ns), format_time(b, 48, ptp->m.fork_join_ns);
        printf("- fork-join SPINNING at %zu threads below pthreadpool: %s vs %s (pthreadpool caller share %.2f) -> %s\n",
               all, a, b, ptp->m.caller_share, spin_all->m.fork_join_ns < ptp->m.fork_join_ns ? "met" : "MISSED");
    }
    for (size_t t = 0; t < o.threads_count; t++) {
        size_t const threads = o.threads[t];
        row_t const *s = find_row(rows, config_count, "uform", "spinning", threads);
        row_t const *p = find_row(rows, config_count, "uform", "parked", threads);
        double mine = fmax(FIELD(s, reduce_gbs), FIELD(p, reduce_gbs)), best = NAN;
        size_t best_row = 0;
        for (size_t i = 0; i < config_count; i++)
            if (rows[i].ok_rounds && rows[i].config.threads == threads && strcmp(rows[i].config.peer->name, "uform") &&
                (isnan(best) || rows[i].m.reduce_gbs > best))
                best = rows[i].m.reduce_gbs, best_row = i;
        if (!isnan(mine) && !isnan(best))
            printf("- reduction at %zu thread%s within 5%% of the best peer: %.1f vs %.1f GB/s (%s, %+.1f%%) -> %s\n",
                   threads, threads == 1 ? "" : "s", mine, best, cells[best_row][0], (mine / best - 1) * 100,
                   mine >= 0.95 * best ? "met" : "MISSED");
    }
    for (size_t t = 0; t < o.threads_count; t++) {
        row_t const *p = find_row(rows, config_count, "uform", "parked", o.threads[t]);
        if (p)
            printf("- idle PARKED at %zu thread%s under 10 ms/s: %.2f ms/s -> %s\n", o.threads[t],
                   o.threads[t] == 1 ? "" : "s", p->m.idle_ms, p->m.idle_ms < 10 ? "met" : "MISSED");
    }
    if (over != all)
        for (int mood = 0; mood < 2; mood++) {
            char const *variant = mood ? "parked" : "spinning";
            row_t const *at_all = find_row(rows, config_count, "uform", variant, all);
            row_t const *at_over = find_row(rows, config_count, "uform", variant, over);
            if (!at_all || !at_over) continue;
            format_time(a, 48, at_all->m.fork_join_ns), format_time(b, 48, at_over->m.fork_join_ns);
            format_time(d, 48, at_over->m.wake_ns);
            int collapsed = at_over->m.fork_join_ns > 100e3 || at_over->m.reduce_gbs < 0.8 * at_all->m.reduce_gbs;
            printf("- no collapse at %zu threads (2x), %s: fork-join %s (vs %s at %zu), wake %s, reduction %.1f GB/s "
                   "(vs %.1f) -> %s\n",
                   over, variant, b, a, all, d, at_over->m.reduce_gbs, at_all->m.reduce_gbs,
                   collapsed ? "COLLAPSED (fork-join over 100 us or reduction under 80%)" : "met");
        }
    if (any_failed) printf("\nSome configurations FAILED a correctness check, crashed or hung; see stderr.\n");
    fflush(stdout);
    free(self_argv);
    return any_failed ? 1 : 0;
}
