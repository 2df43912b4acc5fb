/* One outcome across pid namespaces: containers that share a host name (Kubernetes pods with
 * hostNetwork, --uts=host) each number their own processes, so a pid that kill(2) cannot find
 * from one may be a live process of another. Index 1 runs in a pid namespace of its own, under a
 * pid that no process of the test's namespace has, and stalls after it acknowledged the roster
 * until the others have answered (past the grace index 0 waits for it to leave). Index 0 must not
 * judge it dead: its file and the outcome stay for it, and all three answer OK; the last one out
 * removes everything. Making a pid namespace needs CAP_SYS_ADMIN: without it the test skips (77). */
#include <fcntl.h>
#include <sched.h>

#include "mesh_processes.h"

/* wasm32 builds compile this test but never run it (it loads the CUDA double); Emscripten has no
 * unshare. */
#ifdef __EMSCRIPTEN__
#define unshare(flags) (errno = ENOSYS, -1)
#endif

static member_t members[3];

/* 0 when a child of this process can make a pid namespace; else the errno that refused it. */
static int unshare_refusal(void) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(unshare(CLONE_NEWPID) == 0 ? 0 : errno & 0x7f);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* A pid no process of this namespace has: index 0 would find nothing there with kill(2). */
static pid_t absent_pid(void) {
    long max = 32768;
    FILE *file = fopen("/proc/sys/kernel/pid_max", "r");
    if (file) {
        if (fscanf(file, "%ld", &max) != 1) max = 32768;
        fclose(file);
    }
    for (pid_t pid = (pid_t)(max - 100); pid > 300; pid--)
        if (kill(pid, 0) != 0 && errno == ESRCH) return pid;
    return 0;
}

/* Starts `m` as the child of the first process (pid 1) of a new pid namespace, numbered `pid`
 * there (ns_last_pid, which that namespace's init may set); m->pid is the test's child, which
 * ends once the member has. */
static void start_in_namespace(member_t *m, pid_t pid) {
    fflush(NULL);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(fds[0]);
        if (unshare(CLONE_NEWPID) != 0) _exit(4);
        pid_t init = fork(); /* pid 1 of the new namespace */
        if (init < 0) _exit(5);
        if (init == 0) {
            char last[32];
            int length = snprintf(last, sizeof last, "%ld", (long)pid - 1);
            int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
            bool set = fd >= 0 && write(fd, last, (size_t)length) == length;
            if (fd >= 0) close(fd);
            if (!set) printf("ns_last_pid cannot be set (%s): the member takes the next free pid\n", strerror(errno));
            fflush(NULL);
            pid_t member = fork();
            if (member < 0) _exit(6);
            if (member == 0) {
                if (getpid() != pid) printf("the member is pid %ld in its namespace\n", (long)getpid());
                m->pid = getpid();
                member_run(m);
                ssize_t written = write(fds[1], m, sizeof *m);
                _exit(written == (ssize_t)sizeof *m ? 0 : 3);
            }
            int status = 0;
            waitpid(member, &status, 0);
            _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 7);
        }
        int status = 0;
        waitpid(init, &status, 0);
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 8);
    }
    close(fds[1]);
    m->pid = child;
    m->pipe = fds[0];
}

int main(void) {
    int refusal = unshare_refusal();
    if (refusal) {
        printf("unshare(CLONE_NEWPID) refused (%s): a pid namespace needs CAP_SYS_ADMIN; skipped\n", strerror(refusal));
        return 77;
    }
    pid_t pid = absent_pid();
    CHECK(pid > 0);
    make_mesh_directory();
    const char *job = "pid-namespace";
    members_fill(members, 3, job, 1, 1);
    members[1].signal_at = "acknowledged"; /* holds there until the test writes go.<job> */
    members_start(&members[0], 1);
    start_in_namespace(&members[1], pid);
    members_start(&members[2], 1);

    char mark[1024], go[1024];
    struct stat info;
    snprintf(mark, sizeof mark, "%s/mark.%s", mesh_directory, job);
    snprintf(go, sizeof go, "%s/go.%s", mesh_directory, job);
    for (int waited_ms = 0; lstat(mark, &info) != 0 && waited_ms < 20000; waited_ms++) usleep(1000);
    CHECK(lstat(mark, &info) == 0);
    member_finish(&members[0]); /* past its grace for index 1 to leave */
    member_finish(&members[2]);
    FILE *file = fopen(go, "w");
    CHECK(file != NULL);
    fclose(file);
    member_finish(&members[1]);

    for (size_t i = 0; i < 3; i++) {
        if (members[i].status != UFORM_STATUS_OK)
            TEST_FAIL_("index %zu answered %s (%s), expected OK", i, uform_status_name(members[i].status),
                       members[i].message);
        CHECK_EQ_INT(members[i].description.gpus_per_colocated_domain, 3);
    }
    char left[1024];
    job_left(job, left, sizeof left);
    if (left[0]) TEST_FAIL_("left in the job directory: %s", left);
    CHECK(job_gone(job));
    unlink(mark);
    unlink(go);
    remove_mesh_directory();
    TEST_DONE();
}
