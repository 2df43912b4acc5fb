/* Whether the process that wrote a file of the run is provably gone (mesh_session.h). A pid names
 * a process only inside one pid namespace of one boot of one kernel: two containers that share a
 * host name (Kubernetes pods with hostNetwork, --uts=host) each number their own processes, and
 * kill(2) from one cannot see the other's. So a holder is judged gone only when host, boot id and
 * pid namespace all match the checker's and kill answers ESRCH; everything else is treated as
 * alive, waited out through the timeouts and graces as for a process of another host. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mesh/mesh_session.h"

/* The first line of `path` into `out` (capacity bytes), "" when it cannot be read. */
static void read_line(const char *path, char *out, size_t capacity) {
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t got = read(fd, out, capacity - 1);
    close(fd);
    out[got > 0 ? got : 0] = 0;
    out[strcspn(out, "\n")] = 0;
}

/* Only what a record line may hold (no '=' or newline matters; keep it to the kernel's forms). */
static void keep_plain(char *text) {
    for (char *c = text; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == ':' || *c == '[' || *c == ']'))
            *c = '_';
}

void uform__mesh_identity(uform__mesh_facts_t *f) {
    read_line("/proc/sys/kernel/random/boot_id", f->boot, sizeof f->boot);
    ssize_t length = readlink("/proc/self/ns/pid", f->pidns, sizeof f->pidns - 1);
    f->pidns[length > 0 ? length : 0] = 0;
    keep_plain(f->boot);
    keep_plain(f->pidns);
}

/* Field `key` of `text` equal to `ours`, both present and not empty. */
static bool same_field(const char *text, const char *key, const char *ours) {
    char theirs[128];
    return ours && ours[0] && uform__mesh_field(text, key, theirs, sizeof theirs) && theirs[0] && !strcmp(theirs, ours);
}

bool uform__mesh_holder_gone(const char *text, const uform__mesh_facts_t *mine) {
    uint64_t pid = 0;
    if (!mine || !same_field(text, "host", mine->host) || !same_field(text, "boot", mine->boot) ||
        !same_field(text, "pidns", mine->pidns) || !uform__mesh_field_number(text, "pid", &pid) || pid == 0 ||
        pid > (uint64_t)INT32_MAX)
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}
