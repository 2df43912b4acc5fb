/* The shared library's thread-local storage, through a real dlopen (test_thread_local_block
 * PATH-TO-libuform.so):
 * - its TLS block stays under UFORM_TLS_BLOCK_LIMIT_ bytes: the thread-locals a call touches are
 *   initial-exec (core/thread_local.h), so a libuform loaded by dlopen takes its whole block
 *   from glibc's small static reserve, where a big block would make the dlopen itself fail;
 * - the loaded copy runs 2-thread calls from several threads at once, each with an executor of
 *   its own (each thread's bias slot and membership chain are its own);
 * - every thread keeps its own last error, on the heap since it left TLS, valid until the
 *   thread ends, and freed then (the ASan build's leak check sees the threads that failed and
 *   ended here);
 * - a message stays readable from another key's destructor at the thread's end (POSIX leaves
 *   the destructors' order open; ASan sees a read of a freed buffer, and the plain build a text
 *   that malloc's free list wrote over);
 * - a first failure from another key's destructor in its second pass is freed before the
 *   thread is gone;
 * - dlclose leaves the library mapped (it is linked -z nodelete): a thread that failed, and so
 *   holds a buffer, ends after the dlclose and runs the library's destructors. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/thread_local.h"
#include "test.h"

/* The loaded copy's entry points, of the same types as the header's. */
static struct {
    __typeof__(&uform_executor_for_ram) for_ram;
    __typeof__(&uform_executor_for_n) for_n;
    __typeof__(&uform_executor_free) free;
    __typeof__(&uform_last_error) last_error;
} loaded;

enum { CALLERS = 3, CALLS = 2000, FAILING_THREADS = 32 };

typedef struct tls_block_t {
    char path[PATH_MAX];
    int found;
    size_t tls_bytes;
} tls_block_t;

static int find_block(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    tls_block_t *block = data;
    char path[PATH_MAX];
    if (!info->dlpi_name || !info->dlpi_name[0] || !realpath(info->dlpi_name, path)) return 0;
    if (strcmp(path, block->path) != 0) return 0;
    block->found = 1;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS) block->tls_bytes = info->dlpi_phdr[i].p_memsz;
    return 1;
}

typedef struct counts_t {
    _Atomic long tasks[2];
} counts_t;

static uform_status_t count_task(void *context, size_t i, size_t thread) {
    (void)thread;
    atomic_fetch_add_explicit(&((counts_t *)context)->tasks[i], 1, memory_order_relaxed);
    return UFORM_STATUS_OK;
}

/* One caller: its own 2-thread executor of the loaded copy, CALLS calls of 2 tasks, then a
 * refused call whose message must be this thread's own and stay until this thread fails again. */
static void *caller(void *argument) {
    long id = (long)(intptr_t)argument;
    if (loaded.last_error()[0] != '\0') return "a new thread's last error is not empty";
    uform_executor_t *executor = NULL;
    if (loaded.for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor) != UFORM_STATUS_OK) return "for_ram failed";
    counts_t counts = {{0, 0}};
    for (int call = 0; call < CALLS; call++)
        if (loaded.for_n(executor, NULL, 2, count_task, &counts) != UFORM_STATUS_OK) return "a call failed";
    if (counts.tasks[0] != CALLS || counts.tasks[1] != CALLS) return "a task ran other than once a call";
    /* No task: refused, with a message naming the entry point. */
    if (loaded.for_n(executor, NULL, 1000 + (size_t)id, NULL, NULL) != UFORM_STATUS_INVALID_ARGUMENT)
        return "a call without a task was not refused";
    const char *message = loaded.last_error();
    if (!strstr(message, "uform_executor_for_n")) return "the refusal's message does not name its entry point";
    loaded.free(executor);
    if (loaded.last_error() != message || !strstr(message, "uform_executor_for_n"))
        return "the message did not stay while the thread made no other failure";
    return NULL;
}

static void *fail_once(void *argument) {
    (void)argument;
    /* No output pointer: refused; the message is this thread's, freed when it ends. */
    if (loaded.for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, NULL) == UFORM_STATUS_OK) return "not refused";
    return loaded.last_error()[0] ? NULL : "no message";
}

/* A key of this program's, made after the library's: its destructor runs after the library's in
 * each pass, and reads the message its thread got before it began to end. */
static pthread_key_t reader_key;
static _Atomic int messages_read_at_exit;

static void read_message_at_exit(void *message) {
    if (strstr(message, "uform_executor_for_ram")) atomic_fetch_add(&messages_read_at_exit, 1);
}

static void *fail_and_hand_message_to_reader(void *argument) {
    (void)argument;
    if (loaded.for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, NULL) == UFORM_STATUS_OK) return "not refused";
    if (pthread_setspecific(reader_key, (void *)loaded.last_error()) != 0) return "pthread_setspecific failed";
    return NULL;
}

/* A thread that never failed fails for the first time from a key's destructor in its second
 * pass: the buffer that allocates must still be freed in the passes POSIX has left (the ASan
 * build's leak check). Passes 3 and 4 leak it; status.c says why. */
static pthread_key_t late_key;
static _Atomic int late_messages;

static void fail_in_second_pass(void *pass) {
    if ((intptr_t)pass < 2) {
        pthread_setspecific(late_key, (void *)((intptr_t)pass + 1));
        return;
    }
    if (loaded.for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, NULL) != UFORM_STATUS_OK &&
        strstr(loaded.last_error(), "uform_executor_for_ram"))
        atomic_fetch_add(&late_messages, 1);
}

static void *end_without_failing(void *argument) {
    (void)argument;
    return pthread_setspecific(late_key, (void *)(intptr_t)1) == 0 ? NULL : "pthread_setspecific failed";
}

/* Fails (so it holds a message buffer), then waits until the library is closed, and ends. */
static pthread_mutex_t close_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t close_changed = PTHREAD_COND_INITIALIZER;
static int close_step; /* 1: the thread failed; 2: the library is closed */

static void *fail_then_outlive_dlclose(void *argument) {
    (void)argument;
    const char *result = loaded.for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 1, 0, NULL) == UFORM_STATUS_OK ? "not refused" : NULL;
    pthread_mutex_lock(&close_lock);
    close_step = 1;
    pthread_cond_broadcast(&close_changed);
    while (close_step != 2) pthread_cond_wait(&close_changed, &close_lock);
    pthread_mutex_unlock(&close_lock);
    return (void *)result;
}

/** Runs `count` threads of `entry` (each given its index) to their end; a thread's non-NULL
 *  result is its complaint, and fails the test. */
static void run_threads(void *(*entry)(void *), int count, const char *who) {
    pthread_t threads[FAILING_THREADS];
    void *results[FAILING_THREADS];
    CHECK(count <= FAILING_THREADS);
    for (int i = 0; i < count; i++) CHECK_EQ_INT(pthread_create(&threads[i], NULL, entry, (void *)(intptr_t)i), 0);
    for (int i = 0; i < count; i++) CHECK_EQ_INT(pthread_join(threads[i], &results[i]), 0);
    for (int i = 0; i < count; i++)
        if (results[i]) TEST_FAIL_("%s %d: %s", who, i, (const char *)results[i]);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH-TO-libuform.so\n", argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) TEST_FAIL_("dlopen(%s): %s", argv[1], dlerror());

    tls_block_t block = {.found = 0, .tls_bytes = 0};
    CHECK(realpath(argv[1], block.path) != NULL);
    dl_iterate_phdr(find_block, &block);
    CHECK(block.found);
    CHECK(block.tls_bytes > 0); /* it has thread-locals; none at all would mean this checks nothing */
    if (block.tls_bytes > UFORM_TLS_BLOCK_LIMIT_)
        TEST_FAIL_("the library's TLS block is %zu bytes, over the %d its initial-exec thread-locals allow",
                   block.tls_bytes, UFORM_TLS_BLOCK_LIMIT_);

    *(void **)&loaded.for_ram = dlsym(library, "uform_executor_for_ram");
    *(void **)&loaded.for_n = dlsym(library, "uform_executor_for_n");
    *(void **)&loaded.free = dlsym(library, "uform_executor_free");
    *(void **)&loaded.last_error = dlsym(library, "uform_last_error");
    CHECK(loaded.for_ram && loaded.for_n && loaded.free && loaded.last_error);
    CHECK_EQ_STR(loaded.last_error(), "");

    run_threads(caller, CALLERS, "caller");
    /* None of their failures is the main thread's. */
    CHECK_EQ_STR(loaded.last_error(), "");

    run_threads(fail_once, FAILING_THREADS, "failing thread");

    /* The library's keys exist by now (its callers failed); this one is made after them. */
    CHECK_EQ_INT(pthread_key_create(&reader_key, read_message_at_exit), 0);
    run_threads(fail_and_hand_message_to_reader, FAILING_THREADS, "reader thread");
    CHECK_EQ_INT(atomic_load(&messages_read_at_exit), FAILING_THREADS);

    CHECK_EQ_INT(pthread_key_create(&late_key, fail_in_second_pass), 0);
    run_threads(end_without_failing, FAILING_THREADS, "late-failing thread");
    CHECK_EQ_INT(atomic_load(&late_messages), FAILING_THREADS);

    pthread_t outliver;
    CHECK_EQ_INT(pthread_create(&outliver, NULL, fail_then_outlive_dlclose, NULL), 0);
    pthread_mutex_lock(&close_lock);
    while (close_step != 1) pthread_cond_wait(&close_changed, &close_lock);
    pthread_mutex_unlock(&close_lock);
    CHECK_EQ_INT(dlclose(library), 0);
    void *still = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    if (!still) TEST_FAIL_("dlclose unmapped the library: it must be linked -z nodelete");
    dlclose(still);
    pthread_mutex_lock(&close_lock);
    close_step = 2;
    pthread_cond_broadcast(&close_changed);
    pthread_mutex_unlock(&close_lock);
    void *complaint = NULL;
    CHECK_EQ_INT(pthread_join(outliver, &complaint), 0); /* its destructors ran at its end */
    if (complaint) TEST_FAIL_("the thread that outlived dlclose: %s", (const char *)complaint);
    TEST_DONE();
}
