/* The C library refuses to start an executor's thread: creation answers with a status and a
 * message that names the thread and the errno text, leaves nothing behind, and the next
 * creation works. The refusal is real: the process's default thread stack is set far past what
 * the address space can map (pthread_setattr_default_np), so pthread_create's own mmap fails
 * and it answers EAGAIN, as it does when a machine runs out of memory or threads. Skipped (exit
 * 77) where the C library caps the default stack (musl) or has no such call (WebAssembly). */
#include <errno.h>
#include <pthread.h>

#include "executor/executor_test_util.h"
#include "test.h"

int main(void) {
#if defined(__EMSCRIPTEN__)
    printf("skipped: no pthread_setattr_default_np on WebAssembly\n");
    return 77;
#else
    pthread_attr_t before;
    CHECK(pthread_getattr_default_np(&before) == 0);
    pthread_attr_t huge;
    CHECK(pthread_attr_init(&huge) == 0);
    /* 2^62 bytes: no address space maps that, so every new thread's stack fails to. */
    CHECK(pthread_attr_setstacksize(&huge, (size_t)1 << 62) == 0);
    int refused = pthread_setattr_default_np(&huge);
    pthread_attr_destroy(&huge);
    /* musl accepts the call but caps the size it keeps (at 8 MiB): read it back. */
    size_t kept = 0;
    pthread_attr_t now;
    if (!refused && pthread_getattr_default_np(&now) == 0) {
        pthread_attr_getstacksize(&now, &kept);
        pthread_attr_destroy(&now);
    }
    if (refused || kept != (size_t)1 << 62) {
        printf("skipped: the C library keeps no default stack of 2^62 bytes (%s; kept %zu)\n",
               refused ? strerror(refused) : "accepted", kept);
        pthread_setattr_default_np(&before);
        pthread_attr_destroy(&before);
        return 77;
    }

    for (size_t threads = 1; threads <= 3; threads++) {
        uform_executor_t *executor = (uform_executor_t *)1;
        uform_status_t status = uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, threads, 0, &executor);
        CHECK(status == UFORM_STATUS_IO_ERROR || status == UFORM_STATUS_OUT_OF_MEMORY);
        CHECK(executor == NULL);
        /* The leader (thread 0) starts first, so it is the one refused; the message says which
         * thread, of how many, under its name, and why. */
        char expected[96];
        snprintf(expected, sizeof expected, "uform_executor_for_ram: cannot start thread 0 of %zu (uform:ram:0): ",
                 threads);
        CHECK(strncmp(uform_last_error(), expected, strlen(expected)) == 0);
        CHECK(strlen(uform_last_error()) > strlen(expected)); /* the errno text follows */
        printf("refused with %s: %s\n", uform_status_name(status), uform_last_error());
    }

    /* The default back: the next executor starts every thread and runs a call. */
    CHECK(pthread_setattr_default_np(&before) == 0);
    pthread_attr_destroy(&before);
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 3, 0, &executor));
    _Atomic size_t runs[6] = {0};
    CHECK_OK(uform_executor_for_n(executor, NULL, 6, count_task_runs, (void *)runs));
    for (size_t i = 0; i < 6; i++) CHECK_EQ_INT(runs[i], 1);
    CHECK_OK(uform_executor_free(executor));
    TEST_DONE();
#endif
}
