/* Fresh child processes for `uform bench` (see spawn.h). */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

char **bench_self_command_line(void) {
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
    if (!argv) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < size && k < count; i += strlen(buffer + i) + 1) argv[k++] = buffer + i;
    argv[k] = NULL;
    return argv;
}

bench_outcome_t bench_spawn(char **argv, char const *spec, void (*prepare)(char const *variant),
                            char const *variant, double timeout, char *result, size_t result_size) {
    if (result_size) result[0] = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return BENCH_OUTCOME_SPAWN;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return BENCH_OUTCOME_SPAWN;
    }
    if (pid == 0) {
        /* The parent is single-threaded (it never creates a pool), so setenv is safe here. */
        dup2(fds[1], STDOUT_FILENO);
        setenv(BENCH_CHILD_ENV, spec, 1);
        if (prepare) prepare(variant);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fds[1]);
    char output[8192];
    size_t size = 0;
    int hung = 0;
    double const deadline = bench_now_seconds() + timeout;
    for (;;) {
        double left = deadline - bench_now_seconds();
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
    size_t const mark = strlen(BENCH_RESULT_MARK);
    for (char *line = strtok(output, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, BENCH_RESULT_MARK, mark) == 0 && line[mark] == ' ') {
            snprintf(result, result_size, "%s", line + mark + 1);
            parsed = 1;
        } else
            fprintf(stderr, "%s\n", line);
    }
    if (hung) return BENCH_OUTCOME_HUNG;
    if (WIFSIGNALED(status)) return BENCH_OUTCOME_CRASHED;
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 127) return BENCH_OUTCOME_SPAWN;
    if (WEXITSTATUS(status) != 0 || !parsed) return BENCH_OUTCOME_FAILED;
    return BENCH_OUTCOME_OK;
}

char const *bench_outcome_text(bench_outcome_t outcome) {
    switch (outcome) {
    case BENCH_OUTCOME_FAILED: return "FAILED (check)";
    case BENCH_OUTCOME_CRASHED: return "CRASHED";
    case BENCH_OUTCOME_HUNG: return "HUNG (killed)";
    case BENCH_OUTCOME_SPAWN: return "n/a (could not start)";
    default: return "ok";
    }
}

void bench_print_result(char const *line) {
    printf("%s %s\n", BENCH_RESULT_MARK, line);
    fflush(stdout);
}

/* ---- children that stay alive ------------------------------------------------------------- */

bench_outcome_t bench_live_start(bench_live_child_t *child, char **argv, char const *spec) {
    memset(child, 0, sizeof *child);
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) != 0) return BENCH_OUTCOME_SPAWN;
    if (pipe2(from, O_CLOEXEC) != 0) {
        close(to[0]), close(to[1]);
        return BENCH_OUTCOME_SPAWN;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        return BENCH_OUTCOME_SPAWN;
    }
    if (pid == 0) {
        dup2(to[0], STDIN_FILENO); /* dup2 clears O_CLOEXEC on the copies */
        dup2(from[1], STDOUT_FILENO);
        setenv(BENCH_CHILD_ENV, spec, 1);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    child->pid = (int)pid;
    child->to = to[1];
    child->from = from[0];
    return BENCH_OUTCOME_OK;
}

static void live_kill(bench_live_child_t *child) {
    if (!child->pid) return;
    kill((pid_t)child->pid, SIGKILL);
    while (waitpid((pid_t)child->pid, NULL, 0) < 0 && errno == EINTR) {}
    close(child->to);
    close(child->from);
    child->pid = 0;
}

/* Takes one line out of `pending` into `line`: 1, or 0 when no whole line is there yet. */
static int take_line(bench_live_child_t *child, char *line, size_t size) {
    char *end = memchr(child->pending, '\n', child->pending_size);
    if (!end) return 0;
    size_t length = (size_t)(end - child->pending);
    snprintf(line, size, "%.*s", (int)length, child->pending);
    memmove(child->pending, end + 1, child->pending_size - length - 1);
    child->pending_size -= length + 1;
    return 1;
}

bench_outcome_t bench_live_ask(bench_live_child_t *child, char command, double timeout, char *result,
                               size_t result_size) {
    if (!child->pid) return BENCH_OUTCOME_FAILED;
    if (command) {
        ssize_t wrote;
        while ((wrote = write(child->to, &command, 1)) < 0 && errno == EINTR) {}
        if (wrote != 1) {
            live_kill(child);
            return BENCH_OUTCOME_FAILED;
        }
    }
    size_t const mark = strlen(BENCH_RESULT_MARK);
    double const deadline = bench_now_seconds() + timeout;
    for (;;) {
        char line[sizeof child->pending];
        while (take_line(child, line, sizeof line)) {
            if (strncmp(line, BENCH_RESULT_MARK, mark) == 0 && line[mark] == ' ') {
                snprintf(result, result_size, "%s", line + mark + 1);
                return BENCH_OUTCOME_OK;
            }
            fprintf(stderr, "%s\n", line);
        }
        if (child->pending_size == sizeof child->pending - 1) child->pending_size = 0; /* a line too long: dropped */
        double left = deadline - bench_now_seconds();
        if (left <= 0) {
            live_kill(child);
            return BENCH_OUTCOME_HUNG;
        }
        struct pollfd p = {child->from, POLLIN, 0};
        int ready = poll(&p, 1, (int)(left * 1000) + 1);
        if (ready <= 0) continue; /* EINTR or not yet */
        ssize_t got = read(child->from, child->pending + child->pending_size,
                           sizeof child->pending - 1 - child->pending_size);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) { /* it ended without answering */
            int status = 0;
            while (waitpid((pid_t)child->pid, &status, 0) < 0 && errno == EINTR) {}
            close(child->to);
            close(child->from);
            child->pid = 0;
            return WIFSIGNALED(status) ? BENCH_OUTCOME_CRASHED : BENCH_OUTCOME_FAILED;
        }
        child->pending_size += (size_t)got;
    }
}

bench_outcome_t bench_live_end(bench_live_child_t *child, double timeout) {
    if (!child->pid) return BENCH_OUTCOME_FAILED;
    close(child->to);
    double const deadline = bench_now_seconds() + timeout;
    int status = 0;
    for (;;) {
        pid_t done = waitpid((pid_t)child->pid, &status, WNOHANG);
        if (done == (pid_t)child->pid) break;
        if (bench_now_seconds() > deadline) {
            kill((pid_t)child->pid, SIGKILL);
            while (waitpid((pid_t)child->pid, NULL, 0) < 0 && errno == EINTR) {}
            close(child->from);
            child->pid = 0;
            return BENCH_OUTCOME_HUNG;
        }
        bench_sleep_seconds(0.001);
    }
    /* Pass on what it printed last. */
    char line[sizeof child->pending];
    ssize_t got;
    while ((got = read(child->from, child->pending + child->pending_size,
                       sizeof child->pending - 1 - child->pending_size)) > 0)
        child->pending_size += (size_t)got;
    while (take_line(child, line, sizeof line)) fprintf(stderr, "%s\n", line);
    close(child->from);
    child->pid = 0;
    if (WIFSIGNALED(status)) return BENCH_OUTCOME_CRASHED;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? BENCH_OUTCOME_OK : BENCH_OUTCOME_FAILED;
}
