/* The NULL executor's scratch is unmapped at its thread's exit through a pthread key's destructor
 * (executor_scratch.c). With every key of the process in use, that key cannot be made: the call
 * must say so (OUT_OF_MEMORY, a message naming the key) rather than hand out pages nobody will
 * unmap, and the next call, once a key is free again, must succeed. Real keys, really
 * exhausted, in this process of its own; real threads, whose exit must unmap the pages. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "uform.h"

enum { KEYS_AT_MOST = 1 << 16, SCRATCH_BYTES = 300000 };

static pthread_key_t keys[KEYS_AT_MOST];
static size_t keys_made;

typedef struct attempt_t {
    uform_status_t status;
    char message[256];
    void *scratch;
} attempt_t;

static void *ask_for_scratch(void *out) {
    attempt_t *attempt = out;
    attempt->scratch = NULL;
    attempt->status = uform_executor_scratch(NULL, 0, SCRATCH_BYTES, &attempt->scratch);
    snprintf(attempt->message, sizeof attempt->message, "%s", attempt->status ? uform_last_error() : "");
    if (attempt->status == UFORM_STATUS_OK) memset(attempt->scratch, 7, SCRATCH_BYTES); /* all writable */
    return NULL;
}

static attempt_t on_a_thread(void) {
    attempt_t attempt;
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, ask_for_scratch, &attempt) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    return attempt;
}

#if defined(__linux__)
/* Whether `address` lies in a mapping of this process now (/proc/self/maps). */
static bool mapped(const void *address) {
    FILE *maps = fopen("/proc/self/maps", "r");
    CHECK(maps != NULL);
    uintptr_t at = (uintptr_t)address, begin, end;
    bool found = false;
    char line[512];
    while (!found && fgets(line, sizeof line, maps))
        if (sscanf(line, "%jx-%jx", (uintmax_t *)&begin, (uintmax_t *)&end) == 2 && at >= begin && at < end)
            found = true;
    fclose(maps);
    return found;
}
#endif

int main(void) {
    /* The library's own last-error key first (a refused call): its messages stay readable. */
    CHECK_STATUS(uform_executor_scratch(NULL, 0, 1, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    while (keys_made < KEYS_AT_MOST && pthread_key_create(&keys[keys_made], NULL) == 0) keys_made++;
    CHECK(keys_made > 0 && keys_made < KEYS_AT_MOST);
    printf("%zu keys made before the process ran out\n", keys_made);

    attempt_t refused = on_a_thread();
    CHECK_EQ_INT(refused.status, UFORM_STATUS_OUT_OF_MEMORY);
    CHECK(refused.scratch == NULL);
    CHECK(strstr(refused.message, "uform_executor_scratch") != NULL);
    CHECK(strstr(refused.message, "key") != NULL);

    /* One key free again: the next call makes its key and hands out its pages. */
    CHECK(pthread_key_delete(keys[--keys_made]) == 0);
    attempt_t granted = on_a_thread();
    CHECK_OK(granted.status);
    CHECK(granted.scratch != NULL);
#if defined(__linux__)
    /* Its thread has ended: the key's destructor unmapped the pages. */
    CHECK(!mapped(granted.scratch));
#endif
    /* The key is made once for the process: every key is in use again, and a new thread's
     * scratch still works. */
    if (pthread_key_create(&keys[keys_made], NULL) == 0) keys_made++;
    attempt_t again = on_a_thread();
    CHECK_OK(again.status);
    for (size_t i = 0; i < keys_made; i++) CHECK(pthread_key_delete(keys[i]) == 0);
    TEST_DONE();
}
