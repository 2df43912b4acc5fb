/* Statuses: each has a name and a message from the one list, unknown numbers answer fixed
 * strings, and the last error is per thread. */
#include <errno.h>
#include <pthread.h>

#include "core/error.h"
#include "test.h"

static void *other_thread(void *argument) {
    (void)argument;
    /* A new thread starts with an empty last error and its failures stay its own. */
    if (uform_last_error()[0] != '\0') return (void *)1;
    uform__fail(UFORM_STATUS_TIMEOUT, "from the other thread");
    return strcmp(uform_last_error(), "from the other thread") == 0 ? NULL : (void *)1;
}

int main(void) {
    CHECK_EQ_STR(uform_last_error(), "");
    for (int s = 0; s < UFORM_STATUS_COUNT_; s++) {
        CHECK(uform_status_name((uform_status_t)s) != NULL);
        CHECK(strcmp(uform_status_name((uform_status_t)s), "UNKNOWN") != 0);
        CHECK(strcmp(uform_status_message((uform_status_t)s), "unknown status") != 0);
        CHECK(uform_status_message((uform_status_t)s)[0] != '\0');
    }
    CHECK_EQ_STR(uform_status_name(UFORM_STATUS_OK), "OK");
    CHECK_EQ_STR(uform_status_name(UFORM_STATUS_MALFORMED), "MALFORMED");
    CHECK_EQ_STR(uform_status_message(UFORM_STATUS_TIMEOUT), "the wait timed out");
    CHECK_EQ_INT(UFORM_STATUS_INTERRUPTED, 10); /* numbers are pinned */
    CHECK_EQ_STR(uform_status_name((uform_status_t)UFORM_STATUS_COUNT_), "UNKNOWN");
    CHECK_EQ_STR(uform_status_message((uform_status_t)-1), "unknown status");
    CHECK_EQ_STR(uform_status_message((uform_status_t)1000), "unknown status");

    CHECK_STATUS(uform__fail(UFORM_STATUS_NOT_FOUND, "node %d", 7), UFORM_STATUS_NOT_FOUND);
    CHECK_EQ_STR(uform_last_error(), "node 7");
    CHECK_STATUS(uform__fail_errno(UFORM_STATUS_IO_ERROR, ENOENT, "open %s", "x"), UFORM_STATUS_IO_ERROR);
    CHECK_EQ_STR(uform_last_error(), "open x: No such file or directory");
    /* Overlong detail is cut, never overflows. */
    char longer[2048];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    uform__fail(UFORM_STATUS_IO_ERROR, "%s", longer);
    CHECK(strlen(uform_last_error()) < sizeof longer - 1);

    uform__fail(UFORM_STATUS_IO_ERROR, "main thread");
    pthread_t thread;
    void *result = (void *)1;
    CHECK_EQ_INT(pthread_create(&thread, NULL, other_thread, NULL), 0);
    CHECK_EQ_INT(pthread_join(thread, &result), 0);
    CHECK(result == NULL);
    CHECK_EQ_STR(uform_last_error(), "main thread");
    TEST_DONE();
}
