/* ncclGetUniqueId through uform: every id is new (the double's are random, as the bootstrap's
 * magic is), from one thread or many; the default version is NCCL 2.21.5's code. */
#include <pthread.h>

#include "nccl_double.h"

#define IDS 64
#define THREADS 4

static uint8_t ids[IDS + THREADS * IDS][UFORM_NCCL_UNIQUE_ID_BYTES];

static void *make_ids(void *argument) {
    size_t first = IDS + (size_t)(uintptr_t)argument * IDS;
    for (size_t i = 0; i < IDS; i++) CHECK_OK(uform__nccl_unique_id(ids[first + i]));
    return NULL;
}

int main(void) {
    use_nccl_double("", NULL, 0);
    int version = 0;
    CHECK_OK(uform__nccl_available(&version));
    CHECK_EQ_INT(version, 22105);
    CHECK_STATUS(uform__nccl_unique_id(NULL), UFORM_STATUS_INVALID_ARGUMENT);
    for (size_t i = 0; i < IDS; i++) CHECK_OK(uform__nccl_unique_id(ids[i]));
    pthread_t threads[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, make_ids, (void *)t) == 0);
    for (size_t t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    static const uint8_t zero[UFORM_NCCL_UNIQUE_ID_BYTES];
    size_t total = IDS + THREADS * IDS;
    for (size_t i = 0; i < total; i++) {
        CHECK(memcmp(ids[i], zero, sizeof zero) != 0);
        for (size_t j = 0; j < i; j++) CHECK(memcmp(ids[i], ids[j], UFORM_NCCL_UNIQUE_ID_BYTES) != 0);
    }
    TEST_DONE();
}
