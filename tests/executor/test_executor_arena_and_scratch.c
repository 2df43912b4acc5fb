/* Host arenas (bound memory, huge-page sized, bump allocation, outliving the executor) and
 * per-thread scratch (grown to a high-water mark, kept between calls, per thread). */
#include <pthread.h>

#include "test.h"

typedef struct {
    uform_executor_t *executor;
    void *pointers[8];
    _Atomic int failures;
} scratch_context_t;

static uform_status_t use_scratch(void *context, size_t thread, size_t unused) {
    scratch_context_t *state = context;
    void *scratch = NULL;
    if (uform_executor_scratch(state->executor, thread, 100000 + thread, &scratch) != UFORM_STATUS_OK) {
        state->failures++;
        return UFORM_STATUS_OUT_OF_MEMORY;
    }
    memset(scratch, (int)thread, 100000 + thread); /* the whole size is writable */
    if ((uintptr_t)scratch % 64) state->failures++;
    state->pointers[thread] = scratch;
    return UFORM_STATUS_OK;
}

/* A thread's NULL-executor scratch, used and left to be unmapped when the thread ends. */
static void *null_executor_scratch(void *out) {
    if (uform_executor_scratch(NULL, 0, 256, (void **)out) == UFORM_STATUS_OK) memset(*(void **)out, 3, 256);
    return NULL;
}

int main(void) {
    uform_executor_t *executor = NULL;
    CHECK_OK(uform_executor_for_ram(NULL, 0, UFORM_CPU_CLASS_NONE, 2, 0, &executor));

    scratch_context_t state = {executor, {0}, 0};
    CHECK_OK(uform_executor_for_threads(executor, NULL, use_scratch, &state));
    CHECK_EQ_INT(state.failures, 0);
    CHECK(state.pointers[0] && state.pointers[1] && state.pointers[0] != state.pointers[1]);
    void *first[2] = {state.pointers[0], state.pointers[1]};
    CHECK_OK(uform_executor_for_threads(executor, NULL, use_scratch, &state));
    CHECK(state.pointers[0] == first[0] && state.pointers[1] == first[1]); /* kept: high-water mark */
    void *scratch = NULL;
    CHECK_STATUS(uform_executor_scratch(executor, 2, 10, &scratch), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_scratch(executor, 0, 10, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_OK(uform_executor_scratch(NULL, 0, 1 << 20, &scratch)); /* the NULL executor's own */
    memset(scratch, 1, 1 << 20);
    /* Smaller asks take the buffer as it is (the path that touches no key); a larger one grows it. */
    void *again = NULL;
    CHECK_OK(uform_executor_scratch(NULL, 0, 100, &again));
    CHECK(again == scratch);
    CHECK_OK(uform_executor_scratch(NULL, 0, 4u << 20, &again));
    memset(again, 2, 4u << 20);
    CHECK_OK(uform_executor_scratch(NULL, 0, 1 << 20, &scratch));
    CHECK(scratch == again);
    /* Another thread's is its own. */
    pthread_t other;
    void *others = NULL;
    CHECK_EQ_INT(pthread_create(&other, NULL, null_executor_scratch, &others), 0);
    CHECK_EQ_INT(pthread_join(other, NULL), 0);
    CHECK(others != NULL && others != scratch);

    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 8u << 20, &arena));
    void *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(uform_arena_allocate(arena, 1000, 0, &a));
    CHECK_OK(uform_arena_allocate(arena, 3u << 20, 4096, &b));
    CHECK(((uintptr_t)a % 64) == 0 && ((uintptr_t)b % 4096) == 0 && (char *)b >= (char *)a + 1000);
    memset(b, 7, 3u << 20);
    size_t used = 0, capacity = 0;
    CHECK_OK(uform_arena_usage(arena, &used, &capacity));
    CHECK_EQ_INT(capacity, 8u << 20);
    CHECK(used >= 1000 + (3u << 20));
    CHECK_STATUS(uform_arena_allocate(arena, 6u << 20, 0, &c), UFORM_STATUS_OUT_OF_MEMORY); /* full */
    CHECK_OK(uform_arena_usage(arena, &used, NULL));
    CHECK(used < (8u << 20)); /* a failed allocation changes nothing */
    CHECK_STATUS(uform_arena_allocate(arena, 10, 3, &c), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_arena_allocate(arena, 10, 0, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    uform_arena_t *refused = (uform_arena_t *)1;
    CHECK_STATUS(uform_arena_new_in(executor, 0, &refused), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(refused == NULL);
    CHECK_STATUS(uform_arena_new_in(executor, 4096, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    uform_arena_t *absurd = NULL;
    CHECK_STATUS(uform_arena_new_in(executor, (size_t)-1, &absurd), UFORM_STATUS_OUT_OF_MEMORY);

    /* The arena outlives its executor. */
    CHECK_OK(uform_executor_free(executor));
    CHECK(((unsigned char *)b)[12345] == 7);
    uform_arena_free(arena);
    uform_arena_free(NULL);

    uform_arena_t *local = NULL; /* the NULL executor: local memory */
    CHECK_OK(uform_arena_new_in(NULL, 4096, &local));
    CHECK_OK(uform_arena_allocate(local, 4096, 0, &a));
    uform_arena_free(local);
    TEST_DONE();
}
