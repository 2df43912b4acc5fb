/* Internal: the rendezvous's files, all relative to the job directory's descriptor, so nothing is
 * ever followed through a symbolic link once the directory is open. Written whole (temporary
 * file, fsync, link to the final name, which fails if it exists), mode 0600, read by opening the
 * path: what NFS supports without locks or inotify. */
#ifndef UFORM_MESH_FILES_H
#define UFORM_MESH_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uform.h"

/** The largest file the rendezvous writes or reads. */
#define UFORM_MESH_FILE_MAX 4096

/** The longest path a message shows (uform__mesh_short). */
#define UFORM_MESH_PATH_MAX 168
/** `text` (a path) for a message, shortened in the middle ("/very/lo...ng/path") to fit
 *  UFORM_MESH_PATH_MAX bytes, so the reason around it always fits the last error. */
void uform__mesh_short(const char *text, char *out, size_t capacity);

/** A job's name is plain: [A-Za-z0-9._-], 1 to 128 bytes, not "." or "..". */
bool uform__mesh_job_name_ok(const char *job);

/**
 * Opens `directory` (which must exist and be a directory) and its `job` entry. With `create`, the
 * job directory is made (mode 0700) and must not exist yet: EEXIST answers *existed = true and
 * opens nothing. Without it, a missing job directory answers OK with *job_fd -1 (the caller waits).
 * The job directory must be a real directory (not a symbolic link). On OK, *job_fd is the job
 * directory's descriptor (close it) and *owner (may be NULL) its owner's uid, for the caller to
 * judge: on NFS with root_squash or all_squash the directory index 0 makes belongs to nobody
 * (65534), not to its euid, so index 0 accepts the one it made and records its owner in the run
 * file, and a follower refuses a directory whose owner is not the one recorded. A directory made
 * here and refused here (it cannot be stat'ed) is removed.
 */
uform_status_t uform__mesh_open_job(const char *directory, const char *job, bool create, bool *existed, int *job_fd,
                                    unsigned *owner, const char *verb);

/**
 * Writes `text` as the file `name` in the job directory, whole: a temporary file created
 * exclusively (O_EXCL, O_NOFOLLOW, 0600), fsync'ed, then linked to `name`. If `name` exists,
 * nothing is replaced: *taken = true and `holder` (UFORM_MESH_FILE_MAX bytes) receives what it
 * holds. IO_ERROR with errno's text on failure.
 */
uform_status_t uform__mesh_write_new(int job_fd, const char *name, const char *text, bool *taken, char *holder,
                                     const char *verb);

/** Reads the whole file `name` (NUL-terminated into `text`, UFORM_MESH_FILE_MAX bytes). NOT_FOUND
 *  quietly when it does not exist yet; IO_ERROR otherwise. */
uform_status_t uform__mesh_read(int job_fd, const char *name, char *text, const char *verb);

/** The same, and where `name` is missing, what its `.claim` holds (a writer without hard links
 *  killed between its claim and its rename): NOT_FOUND when neither has anything yet. The claim's
 *  text may be partial: the caller checks it (the outcome is sealed). */
uform_status_t uform__mesh_read_claimed(int job_fd, const char *name, char *text, const char *verb);

/** Whether `name` is in the job directory (a stat, no read): 1 present, 0 absent (ENOENT), -1
 *  unknown (any other error, such as a transient one on NFS: the caller asks again). */
int uform__mesh_probe(int job_fd, const char *name);

/** `name`'s modification time in nanoseconds, as the file system's clock set it (on NFS the
 *  server's, the one clock every host of a run shares); false if it cannot be read. */
bool uform__mesh_mtime_ns(int job_fd, const char *name, int64_t *ns);

/** True when the job directory itself has been removed (its link count is 0) under this
 *  descriptor: a new directory of the same name is another run's. */
bool uform__mesh_job_removed(int job_fd);

/** Removes `name` (missing is fine), and its `.claim` where this process writes without hard
 *  links. */
void uform__mesh_remove(int job_fd, const char *name);

/** Removes every temporary file (`.<name>...tmp`) in the job directory: what a writer killed
 *  before its link or rename left. Only the last process out calls it, once the outcome is final:
 *  a live writer's file then belongs to a process that came too late for the run. */
void uform__mesh_remove_temporaries(int job_fd);

/** Removes the job directory if it is still the one `job_fd` opened (same device and inode,
 *  looked up through the parent's descriptor, never a path rebuilt in a buffer) and empty;
 *  anything else is left alone, harmlessly. */
void uform__mesh_remove_job(const char *directory, const char *job, int job_fd);

/** `key=value` lines: the value of `key` in `text` into `value` (capacity bytes); false if absent. */
bool uform__mesh_field(const char *text, const char *key, char *value, size_t capacity);
/** The same for an unsigned decimal; false if absent or malformed. */
bool uform__mesh_field_number(const char *text, const char *key, uint64_t *value);

/** Sleeps the next step of a bounded backoff (0.1 ms doubling to 50 ms) and answers false once
 *  `deadline_ns` (uform__now_ns time) has passed. */
bool uform__mesh_backoff(uint64_t deadline_ns, uint64_t *step_ns);

#endif
