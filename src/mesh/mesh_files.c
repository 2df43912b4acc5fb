/* The rendezvous's files (mesh_files.h): every path is resolved against an open directory
 * descriptor with O_NOFOLLOW, so a symbolic link planted in the job directory is never followed,
 * and every file appears whole under its final name or not at all. */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "mesh/mesh_files.h"
#include "platform/platform.h"

void uform__mesh_short(const char *text, char *out, size_t capacity) {
    size_t length = strlen(text), limit = capacity < UFORM_MESH_PATH_MAX ? capacity : UFORM_MESH_PATH_MAX;
    if (length < limit) {
        snprintf(out, capacity, "%s", text);
        return;
    }
    /* The head says where, the tail says which: both stay, the middle goes. */
    size_t head = (limit - 4) / 2, tail = limit - 4 - head;
    snprintf(out, capacity, "%.*s...%s", (int)head, text, text + length - tail);
}

bool uform__mesh_job_name_ok(const char *job) {
    size_t length = job ? strlen(job) : 0;
    if (!length || length > 128 || !strcmp(job, ".") || !strcmp(job, "..")) return false;
    for (size_t i = 0; i < length; i++) {
        char c = job[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-';
        if (!ok) return false;
    }
    return true;
}

/* `directory/job` for a message. */
static void job_path(const char *directory, const char *job, char *out, size_t capacity) {
    char whole[8192];
    snprintf(whole, sizeof whole, "%s/%s", directory, job);
    uform__mesh_short(whole, out, capacity);
}

uform_status_t uform__mesh_open_job(const char *directory, const char *job, bool create, bool *existed, int *job_fd,
                                    unsigned *owner, const char *verb) {
    *existed = false;
    *job_fd = -1;
    struct stat info;
    char where[UFORM_MESH_PATH_MAX], path[UFORM_MESH_PATH_MAX];
    uform__mesh_short(directory, where, sizeof where);
    job_path(directory, job, path, sizeof path);
    if (stat(directory, &info) != 0)
        return uform__fail_errno(errno == ENOENT ? UFORM_STATUS_NOT_FOUND : UFORM_STATUS_IO_ERROR, errno,
                                 "%s: the mesh's directory cannot be used: %s", verb, where);
    if (!S_ISDIR(info.st_mode))
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the mesh's directory is not a directory: %s", verb, where);
    int base = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (base < 0)
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, errno, "%s: cannot open the mesh's directory: %s", verb, where);
    if (create && mkdirat(base, job, 0700) != 0) {
        int error = errno;
        close(base);
        if (error == EEXIST) {
            *existed = true;
            return UFORM_STATUS_OK;
        }
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot create the job directory: %s", verb, path);
    }
    int fd = openat(base, job, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int error = errno;
    if (fd < 0 || fstat(fd, &info) != 0) {
        if (fd >= 0) error = errno, close(fd), fd = -2; /* opened, not stat'ed */
        if (create) unlinkat(base, job, AT_REMOVEDIR); /* made here, refused here: not left behind */
    }
    close(base);
    if (fd == -2)
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot stat the job directory: %s", verb, path);
    if (fd < 0) {
        if (error == ENOENT) return UFORM_STATUS_OK; /* not yet (*job_fd stays -1): the caller waits */
        if (error == ELOOP || error == ENOTDIR) {
            struct stat link_info;
            int probe = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            bool is_link = probe >= 0 && fstatat(probe, job, &link_info, AT_SYMLINK_NOFOLLOW) == 0 &&
                           S_ISLNK(link_info.st_mode);
            if (probe >= 0) close(probe);
            return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "%s: the job directory is %s, not a directory: %s", verb,
                               is_link ? "a symbolic link" : "a file", path);
        }
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot open the job directory: %s", verb, path);
    }
    /* Its owner is the caller's to judge (uform__mesh_open_job): index 0 made it, whoever the
     * file system says owns it; a follower holds it against index 0's run file. */
    if (owner) *owner = (unsigned)info.st_uid;
    *job_fd = fd;
    return UFORM_STATUS_OK;
}

static bool write_all(int fd, const char *text, size_t length) {
    while (length) {
        ssize_t written = write(fd, text, length);
        if (written < 0 && errno == EINTR) continue;
        if (written == 0) errno = EIO; /* no progress and no errno of its own */
        if (written <= 0) return false;
        text += written;
        length -= (size_t)written;
    }
    return true;
}

/* Whether this process met a file system without hard links (then every claim is a `.claim`
 * file created exclusively, and every removal removes it too). */
static _Atomic bool links_refused;

/* The errors of a file system that has no hard links (object-store FUSE mounts, some SMB). */
static bool no_hard_links(int error) {
    return error == EPERM || error == ENOTSUP || error == EOPNOTSUPP || error == ENOSYS || error == EMLINK;
}

/* The fallback without hard links: `name.claim` created exclusively (O_EXCL: one winner, on NFS
 * too) claims the name, then the whole temporary file is renamed onto it, so a reader sees all of
 * it or nothing. The claim holds the same text, written before the rename: a writer killed
 * between the two leaves a claim that says what it decided, and readers take it from there
 * (uform__mesh_read_claimed). Only a writer killed between creating the claim and writing it
 * leaves an empty one. */
static uform_status_t claim_and_rename(int job_fd, const char *temporary, const char *name, const char *text,
                                       bool *taken, char *holder, const char *verb) {
    char claim[300];
    snprintf(claim, sizeof claim, "%s.claim", name);
    int fd = openat(job_fd, claim, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int error = errno;
    if (fd < 0) {
        unlinkat(job_fd, temporary, 0);
        if (error != EEXIST) return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot claim %s", verb, name);
        *taken = true;
        if (uform__mesh_read_claimed(job_fd, name, holder, verb) != UFORM_STATUS_OK) holder[0] = 0;
        return UFORM_STATUS_OK;
    }
    /* The claim is this process's whether or not its copy of the text lands: the rename below
     * publishes the whole file either way. */
    (void)(write_all(fd, text, strlen(text)) && fsync(fd) == 0);
    close(fd);
    if (renameat(job_fd, temporary, job_fd, name) != 0) {
        error = errno;
        unlinkat(job_fd, temporary, 0);
        unlinkat(job_fd, claim, 0);
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot publish %s", verb, name);
    }
    fsync(job_fd);
    return UFORM_STATUS_OK;
}

/* 64 random bits: host and pid alone repeat across containers that share a host name, each
 * numbering its own processes (pid namespaces), so every temporary name carries these too. */
static uint64_t random_bits(void) {
    uint64_t bits = 0;
#if defined(__EMSCRIPTEN__)
    if (getentropy(&bits, sizeof bits) != 0) /* no getrandom in Emscripten's libc */
#else
    if (getrandom(&bits, sizeof bits, 0) != (ssize_t)sizeof bits)
#endif
        bits = (uform__now_ns() ^ ((uint64_t)getpid() << 32)) * 6364136223846793005ull + (uint64_t)(uintptr_t)&bits;
    return bits;
}

uform_status_t uform__mesh_write_new(int job_fd, const char *name, const char *text, bool *taken, char *holder,
                                     const char *verb) {
    *taken = false;
    char temporary[256], host[65] = "";
    static _Atomic unsigned serial;
    gethostname(host, sizeof host - 1); /* host and pid say whose it is; the random bits make it unique */
    for (char *c = host; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-')) *c = '_';
    snprintf(temporary, sizeof temporary, ".%s.%s.%ld.%u.%016llx.tmp", name, host, (long)getpid(),
             atomic_fetch_add(&serial, 1), (unsigned long long)random_bits());
    int fd = openat(job_fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return uform__fail_errno(UFORM_STATUS_IO_ERROR, errno, "%s: cannot create %s", verb, temporary);
    bool ok = write_all(fd, text, strlen(text)) && fsync(fd) == 0;
    int error = errno;
    close(fd);
    if (!ok) {
        unlinkat(job_fd, temporary, 0);
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot write %s", verb, name);
    }
    /* link() fails on an existing name, where rename() would replace it: the claim is exclusive. */
    int linked = atomic_load_explicit(&links_refused, memory_order_relaxed) ? -1 : linkat(job_fd, temporary, job_fd, name, 0);
    error = linked != 0 && atomic_load_explicit(&links_refused, memory_order_relaxed) ? EPERM : errno;
    if (linked != 0 && no_hard_links(error)) {
        atomic_store_explicit(&links_refused, true, memory_order_relaxed);
        return claim_and_rename(job_fd, temporary, name, text, taken, holder, verb);
    }
    if (linked != 0 && error == EEXIST) {
        /* NFS may answer a retransmitted LINK that did succeed with EEXIST: then the temporary
         * file has two names, and the claim is ours (the recipe open(2) gives for O_EXCL). */
        struct stat info;
        if (fstatat(job_fd, temporary, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_nlink == 2) linked = 0;
    }
    unlinkat(job_fd, temporary, 0);
    if (linked != 0) {
        if (error == EEXIST) {
            *taken = true;
            if (uform__mesh_read(job_fd, name, holder, verb) != UFORM_STATUS_OK) holder[0] = 0;
            return UFORM_STATUS_OK;
        }
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot publish %s", verb, name);
    }
    fsync(job_fd); /* the new name itself is durable before anyone is told to read it */
    return UFORM_STATUS_OK;
}

uform_status_t uform__mesh_read(int job_fd, const char *name, char *text, const char *verb) {
    int fd = openat(job_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return UFORM_STATUS_NOT_FOUND;
        return uform__fail_errno(UFORM_STATUS_IO_ERROR, errno, "%s: cannot open %s", verb, name);
    }
    size_t length = 0;
    for (;;) {
        ssize_t got = read(fd, text + length, UFORM_MESH_FILE_MAX - 1 - length);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int error = errno;
            close(fd);
            return uform__fail_errno(UFORM_STATUS_IO_ERROR, error, "%s: cannot read %s", verb, name);
        }
        if (got == 0 || (length += (size_t)got) == UFORM_MESH_FILE_MAX - 1) break;
    }
    close(fd);
    text[length] = 0;
    return UFORM_STATUS_OK;
}

uform_status_t uform__mesh_read_claimed(int job_fd, const char *name, char *text, const char *verb) {
    uform_status_t status = uform__mesh_read(job_fd, name, text, verb);
    if (status != UFORM_STATUS_NOT_FOUND) return status;
    char claim[300];
    snprintf(claim, sizeof claim, "%s.claim", name);
    status = uform__mesh_read(job_fd, claim, text, verb);
    return status == UFORM_STATUS_OK && !text[0] ? UFORM_STATUS_NOT_FOUND : status;
}

int uform__mesh_probe(int job_fd, const char *name) {
    struct stat info;
    if (fstatat(job_fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0) return 1;
    return errno == ENOENT ? 0 : -1;
}

bool uform__mesh_mtime_ns(int job_fd, const char *name, int64_t *ns) {
    struct stat info;
    if (fstatat(job_fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0) return false;
    *ns = (int64_t)info.st_mtim.tv_sec * 1000000000 + info.st_mtim.tv_nsec;
    return true;
}

bool uform__mesh_job_removed(int job_fd) {
    struct stat info;
    return fstat(job_fd, &info) == 0 && info.st_nlink == 0;
}

void uform__mesh_remove(int job_fd, const char *name) {
    unlinkat(job_fd, name, 0);
    if (atomic_load_explicit(&links_refused, memory_order_relaxed)) {
        char claim[300];
        snprintf(claim, sizeof claim, "%s.claim", name);
        unlinkat(job_fd, claim, 0);
    }
}

void uform__mesh_remove_temporaries(int job_fd) {
    int fd = dup(job_fd);
    DIR *directory = fd >= 0 ? fdopendir(fd) : NULL;
    if (!directory) {
        if (fd >= 0) close(fd);
        return;
    }
    for (struct dirent *entry; (entry = readdir(directory));) {
        size_t length = strlen(entry->d_name);
        if (entry->d_name[0] == '.' && length > 5 && !strcmp(entry->d_name + length - 4, ".tmp"))
            unlinkat(job_fd, entry->d_name, 0);
    }
    closedir(directory);
}

void uform__mesh_remove_job(const char *directory, const char *job, int job_fd) {
    int parent = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parent < 0) return;
    struct stat ours, there;
    /* The same directory, not one a new run made under the name since (it cannot while ours
     * exists, but ours may be gone already); AT_REMOVEDIR fails, harmlessly, unless it is empty. */
    if (fstat(job_fd, &ours) == 0 && fstatat(parent, job, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
        ours.st_dev == there.st_dev && ours.st_ino == there.st_ino)
        unlinkat(parent, job, AT_REMOVEDIR);
    close(parent);
}

bool uform__mesh_field(const char *text, const char *key, char *value, size_t capacity) {
    size_t key_length = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        if (length > key_length && !strncmp(line, key, key_length) && line[key_length] == '=') {
            size_t value_length = length - key_length - 1;
            if (value_length >= capacity) return false;
            memcpy(value, line + key_length + 1, value_length);
            value[value_length] = 0;
            return true;
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

bool uform__mesh_field_number(const char *text, const char *key, uint64_t *value) {
    char digits[32];
    if (!uform__mesh_field(text, key, digits, sizeof digits) || !digits[0]) return false;
    char *end = NULL;
    errno = 0;
    unsigned long long parsed = strtoull(digits, &end, 10);
    if (errno || !end || *end || digits[0] == '-') return false;
    *value = parsed;
    return true;
}

bool uform__mesh_backoff(uint64_t deadline_ns, uint64_t *step_ns) {
    uint64_t now = uform__now_ns();
    if (now >= deadline_ns) return false;
    if (!*step_ns) *step_ns = 100000;
    uint64_t pause = *step_ns < deadline_ns - now ? *step_ns : deadline_ns - now;
    struct timespec sleep_for = {(time_t)(pause / 1000000000u), (long)(pause % 1000000000u)};
    nanosleep(&sleep_for, NULL);
    if (*step_ns < 50000000) *step_ns *= 2;
    return true;
}
