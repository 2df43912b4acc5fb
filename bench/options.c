/* `uform bench`'s command line (see options.h). */
#include "options.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "peers.h"
#include "work.h"

void bench_print_usage(FILE *out, char const *program) {
    fprintf(out,
            "usage: %s [--quick | --full] [--table] [--executors] [--threads] [--pairs] [--turns] [--nbody]\n"
            "       [options]\n"
            "Measures uform's host executor beside OpenMP, pthreadpool, oneTBB, ForkUnion and a serial loop;\n"
            "prints Markdown tables on stdout, progress on stderr. Timings never fail the run.\n"
            "Parts (default: --table, --executors and --staging):\n"
            "  --table            fork-join, wake after idle, reduction and idle cost, side by side\n"
            "  --executors        1, 2 and 4 uform executors driven at once from their own threads,\n"
            "                     beside the same total work on one executor\n"
            "  --staging          GPU copies of pageable memory through uform's pinned staging beside the\n"
            "                     driver's raw copies from pinned and from pageable memory (says so when\n"
            "                     there is no GPU); --staging-mib N (default 1024), --staging-reps N\n"
            "  --mesh             2, 8, 64 and 256 processes meeting through a directory: uform's roster\n"
            "                     beside every process reading every other's facts\n"
            "  --threads          fork-join cost from 1 thread to 4x the cores (1, 2, 4, ...),\n"
            "                     empty and with a little work, uform beside the peers\n"
            "  --pairs            fork-join in paired rounds (default 11): uform SPINNING and every peer\n"
            "                     back to back in each round, order alternating, beside the floor (two\n"
            "                     pinned threads); per-round ratios and their median, at --counts N\n"
            "                     threads (default 2); --item bump (default: each item bumps its slot's\n"
            "                     count) or bump-two (its count and the slot's next word, which gcc makes\n"
            "                     one 16-byte load and store, as a task writing a small result does)\n"
            "  --turns            fork-join with uform, ForkUnion and the floors each alive in its own\n"
            "                     process for the whole run, taking turns by 2 ms batch (the others'\n"
            "                     threads asleep meanwhile), --cycles N turns each (default 400): ratios\n"
            "                     of batches 10-30 ms apart, inside one of the machine's latency modes;\n"
            "                     --item as for --pairs\n"
            "  --nbody            ForkUnion's N-body shape (one fork-join of n bodies per step), static\n"
            "                     and dynamic split; --bodies A,B,.. (default 16,128,1024) at --counts\n"
            "                     threads (default: the cores)\n"
            "Options:\n"
            "  --quick            under half a minute: 1 round, 0.25 s fork-join, 256 MiB, 0.25 s idle\n"
            "  --full             the default: 5 rounds, 1 s fork-join, 1 GiB x 5 passes, 1 s idle\n"
            "  --wide             every column of the table (caller share, CPUs used, wake against a call\n"
            "                     after a short idle, ratios to uform); the default fits 100 columns\n"
            "  --targets          after the table, the project's own targets and whether each was met\n"
            "                     (what bench/RESULTS.md records)\n"
            "  --rounds N         fresh processes per configuration (median taken)\n"
            "  --cycles N         --turns' cycles, 1 to 4000 (default 400, --quick 40)\n"
            "  --processes K      --turns: every pool (and floor) in K processes, 1 to 8 (default 1); a pool's\n"
            "                     batch in a cycle is the mean of its processes': each process is one draw\n"
            "                     of where its lines fall, which moves its time by up to a fifth\n"
            "  --duration S       timed fork-join seconds (after --warmup S, default 0.1)\n"
            "  --reduce-mib N     float32 MiB summed; --passes N timed passes\n"
            "  --wake-samples N   timed wakes, each after --wake-idle-ms N (default 10) idle, and as\n"
            "                     many calls each after --short-idle-us N (default 100) idle\n"
            "  --idle S           seconds of sleep for the idle-cost figure\n"
            "  --counts A,B,..    thread counts (table default: 1, cores, 2x cores; --threads\n"
            "                     default: 1, 2, 4, ... up to 4x cores); also --threads A,B,..\n"
            "  --peers A,B,..     pools to run, of:",
            program);
    for (size_t i = 0; i < bench_peers_count; i++) fprintf(out, " %s", bench_peers[i]->name);
    fprintf(out, "\n  --timeout S        seconds before a configuration counts as hung (default 120)\n"
                 "Exit status: 0 every part measured (a timing never fails the run), 1 a configuration failed,\n"
                 "hung or reported no result, 2 bad usage.\n");
}

static int parse_list(char const *v, char const *what, unsigned long most, size_t *values, size_t *count) {
    *count = 0;
    for (char const *p = v; *p;) {
        char *end;
        unsigned long n = strtoul(p, &end, 10);
        if (end == p || !n || n > most || *count == BENCH_MAX_THREAD_COUNTS || (*end && *end != ',')) {
            fprintf(stderr, "uform bench: bad %s %s\n", what, v);
            return 2;
        }
        values[(*count)++] = n;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* Strict numbers: the whole text, finite, in range; the refusal names the option and the text. */
static int parse_number(char const *option, char const *text, double minimum, double maximum, int integer,
                        double *out) {
    /* A digit first (no sign, space, "inf" or "nan"), and no hexadecimal, which strtod takes. */
    int plain = text[0] >= '0' && text[0] <= '9' && !strpbrk(text, "xX");
    char *end = NULL;
    double value = !plain ? NAN : integer ? (double)strtol(text, &end, 10) : strtod(text, &end);
    if (!plain || end == text || *end || !isfinite(value) || value < minimum || value > maximum) {
        fprintf(stderr, "uform bench: %s takes %s from %g to %g, not %s\n", option,
                integer ? "a whole number" : "a number", minimum, maximum, text);
        return 2;
    }
    *out = value;
    return 0;
}

static int parse_int(char const *option, char const *text, int minimum, int maximum, int *out) {
    double value;
    if (parse_number(option, text, minimum, maximum, 1, &value)) return 2;
    *out = (int)value;
    return 0;
}

static int parse_size(char const *option, char const *text, size_t minimum, size_t maximum, size_t *out) {
    double value;
    if (parse_number(option, text, (double)minimum, (double)maximum, 1, &value)) return 2;
    *out = (size_t)value;
    return 0;
}

/* Seconds above 0 (`positive`) or at least 0, up to a day, scaled by `unit` (1e-3 for ms). */
static int parse_seconds(char const *option, char const *text, int positive, double unit, double *out) {
    double value;
    if (parse_number(option, text, 0, 86400 / unit, 0, &value)) return 2;
    if (positive && value <= 0) {
        fprintf(stderr, "uform bench: %s must be above 0, not %s\n", option, text);
        return 2;
    }
    *out = value * unit;
    return 0;
}

static int parse_counts(char const *v, options_t *o) {
    return parse_list(v, "--counts", 4096, o->threads, &o->threads_count);
}

int bench_parse_options(int argc, char **argv, options_t *o) {
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
    o->short_idle = 100e-6;
    o->idle_seconds = quick ? 0.25 : 1.0;
    o->timeout = 120;
    o->staging_mib = quick ? 256 : 1024;
    o->staging_reps = quick ? 3 : 5;
    for (int i = 1; i < argc; i++) {
        char const *a = argv[i];
        char const *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0 || strcmp(a, "--full") == 0) continue;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 3;
        if (strcmp(a, "--wide") == 0) {
            o->wide = 1;
            continue;
        }
        if (strcmp(a, "--targets") == 0) {
            o->targets = 1;
            continue;
        }
        if (strcmp(a, "--table") == 0) {
            o->parts |= BENCH_PART_TABLE;
            continue;
        }
        if (strcmp(a, "--mesh") == 0) {
            o->parts |= BENCH_PART_MESH;
            continue;
        }
        if (strcmp(a, "--staging") == 0) {
            o->parts |= BENCH_PART_STAGING;
            continue;
        }
        if (strcmp(a, "--pairs") == 0) {
            o->parts |= BENCH_PART_PAIRS;
            continue;
        }
        if (strcmp(a, "--turns") == 0) {
            o->parts |= BENCH_PART_TURNS;
            continue;
        }
        if (strcmp(a, "--nbody") == 0) {
            o->parts |= BENCH_PART_NBODY;
            continue;
        }
        if (strcmp(a, "--executors") == 0) {
            o->parts |= BENCH_PART_EXECUTORS;
            continue;
        }
        /* --threads alone runs the sweep; followed by a list of counts it is the older spelling of
         * --counts (kept: scripts and the CLI smoke test pass it). */
        if (strcmp(a, "--threads") == 0 && !(v && v[0] >= '0' && v[0] <= '9')) {
            o->parts |= BENCH_PART_THREADS;
            continue;
        }
        static char const *const valued[] = {"--rounds", "--warmup",       "--duration", "--reduce-mib",
                                             "--passes", "--wake-samples", "--wake-idle-ms", "--short-idle-us",
                                             "--idle",   "--timeout",      "--peers",    "--counts", "--threads",
                                             "--staging-mib", "--staging-reps", "--bodies", "--item", "--cycles",
                                             "--processes", NULL};
        int known = 0;
        for (size_t k = 0; valued[k]; k++)
            if (strcmp(a, valued[k]) == 0) known = 1;
        if (!known) {
            fprintf(stderr, "uform bench: unknown option %s\n", a);
            return 2;
        }
        if (!v) {
            fprintf(stderr, "uform bench: %s needs a value\n", a);
            return 2;
        }
        i++;
        int bad = 0;
        if (strcmp(a, "--rounds") == 0) bad = parse_int(a, v, 1, 64, &o->rounds), o->rounds_given = 1;
        else if (strcmp(a, "--cycles") == 0) bad = parse_int(a, v, 1, 4000, &o->cycles);
        else if (strcmp(a, "--processes") == 0) bad = parse_int(a, v, 1, 8, &o->processes);
        else if (strcmp(a, "--warmup") == 0) bad = parse_seconds(a, v, 0, 1, &o->warmup);
        else if (strcmp(a, "--duration") == 0) bad = parse_seconds(a, v, 1, 1, &o->duration);
        /* Per-lane float sums stay exact up to 2^22 values of at most 3 per lane: 1 GiB per call. */
        else if (strcmp(a, "--reduce-mib") == 0) bad = parse_size(a, v, 1, 1024, &o->reduce_mib);
        else if (strcmp(a, "--passes") == 0) bad = parse_int(a, v, 1, 1000, &o->passes);
        else if (strcmp(a, "--wake-samples") == 0) bad = parse_int(a, v, 1, 100000, &o->wake_samples);
        else if (strcmp(a, "--wake-idle-ms") == 0) bad = parse_seconds(a, v, 0, 1e-3, &o->wake_idle);
        else if (strcmp(a, "--short-idle-us") == 0) bad = parse_seconds(a, v, 0, 1e-6, &o->short_idle);
        else if (strcmp(a, "--idle") == 0) bad = parse_seconds(a, v, 1, 1, &o->idle_seconds);
        else if (strcmp(a, "--timeout") == 0) bad = parse_seconds(a, v, 1, 1, &o->timeout);
        else if (strcmp(a, "--peers") == 0) o->peers = v;
        else if (strcmp(a, "--staging-mib") == 0) bad = parse_size(a, v, 1, 65536, &o->staging_mib);
        else if (strcmp(a, "--staging-reps") == 0) bad = parse_int(a, v, 1, 100, &o->staging_reps);
        else if (strcmp(a, "--item") == 0) {
            if (!bench_work_pairs_item(v)) {
                fprintf(stderr, "uform bench: --item is bump or bump-two, not %s\n", v);
                return 2;
            }
            o->item = v;
        } else if (strcmp(a, "--bodies") == 0) {
            if (parse_list(v, "--bodies", 1u << 20, o->bodies, &o->bodies_count)) return 2;
        } else if (parse_counts(v, o)) return 2;
        if (bad) return 2;
    }
    if (!o->parts) o->parts = BENCH_PART_TABLE | BENCH_PART_EXECUTORS | BENCH_PART_STAGING;
    if (o->item && !(o->parts & (BENCH_PART_PAIRS | BENCH_PART_TURNS))) {
        fprintf(stderr, "uform bench: --item is an option of --pairs and --turns; add one\n");
        return 2;
    }
    if ((o->cycles || o->processes) && !(o->parts & BENCH_PART_TURNS)) {
        fprintf(stderr, "uform bench: --cycles and --processes are --turns' options; add --turns\n");
        return 2;
    }
    if (o->peers)
        for (char const *p = o->peers; *p;) {
            char const *end = strchr(p, ',');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), p);
            if (!bench_find_peer(name)) {
                fprintf(stderr, "uform bench: no pool named '%s' in this build\n", name);
                return 2;
            }
            if (!end) break;
            p = end + 1;
        }
    return 0;
}
