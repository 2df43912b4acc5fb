/* Device arenas and the VRAM executor's lifetimes against the CUDA driver test double: a
 * symmetric arena over two devices; an arena holds its executor (free drains and answers OK, the
 * last arena's free closes it, seen as the devices' memory and contexts going back to the
 * double); the last arena freed while another thread frees the executor; drain and free while
 * copies are queued behind a stream the test holds shut. */
#include <time.h>

#include "vram_double.h"

static const char config[] = "device cc=9.0 memory=128M\ndevice cc=9.0 memory=128M\n";
static cuda_double_t cu;

static void sleep_ms(int ms) {
    struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

static uform_status_t hold_stream(void *context, const uform_device_slot_t *slot) {
    CHECK_CU(cu.cuLaunchHostFunc((uform_cuStream)slot->stream, gate_wait, context), UFORM_CUDA_SUCCESS);
    return UFORM_STATUS_OK;
}

typedef struct opener_t {
    gate_t *gate;
    _Atomic int opened;
} opener_t;

static void *open_later(void *argument) {
    opener_t *opener = argument;
    sleep_ms(100);
    atomic_store(&opener->opened, 1);
    gate_open(opener->gate);
    return NULL;
}

typedef struct race_t {
    uform_executor_t *executor;
    uform_arena_t *arena;
    _Atomic int ready;
} race_t;

static void *free_arena(void *argument) {
    race_t *race = argument;
    atomic_fetch_add(&race->ready, 1);
    while (atomic_load(&race->ready) < 2) {
    }
    uform_arena_free(race->arena);
    return NULL;
}

int main(void) {
    cu = vram_double_open(config);
    uform_executor_t *executor = vram_executor(NULL, 0, 0);

    /* A symmetric arena: one offset, a twin on each device. */
    uform_arena_t *arena = NULL;
    CHECK_OK(uform_arena_new_in(executor, 4u << 20, &arena));
    CHECK_EQ_INT(uform_arena_devices(arena), 2);
    void *a = NULL, *b = NULL, *twin = NULL, *twin_b = NULL;
    CHECK_OK(uform_arena_allocate(arena, 1000, 0, &a));
    CHECK_OK(uform_arena_allocate(arena, 5000, 256, &b));
    CHECK(((uintptr_t)b & 255) == 0 && (char *)b >= (char *)a + 1000);
    CHECK_OK(uform_arena_device_pointer(arena, 0, b, &twin));
    CHECK(twin == b);
    CHECK_OK(uform_arena_device_pointer(arena, 1, a, &twin));
    CHECK_OK(uform_arena_device_pointer(arena, 1, b, &twin_b));
    CHECK(twin != a && (char *)twin_b - (char *)twin == (char *)b - (char *)a);
    size_t used = 0, capacity = 0;
    CHECK_OK(uform_arena_usage(arena, &used, &capacity));
    CHECK(used >= 6000 && capacity == (4u << 20));
    CHECK(vram_device_used(&cu, 0) >= (4u << 20) && vram_device_used(&cu, 1) >= (4u << 20));
    /* Bad input. */
    void *out = NULL;
    CHECK_STATUS(uform_arena_device_pointer(arena, 2, a, &out), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_arena_device_pointer(arena, 1, (char *)a + (4u << 20), &out), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_arena_device_pointer(arena, 1, twin, &out), UFORM_STATUS_INVALID_ARGUMENT); /* device 1's */
    CHECK_STATUS(uform_arena_device_pointer(NULL, 0, a, &out), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_arena_allocate(arena, 8u << 20, 0, &out), UFORM_STATUS_OUT_OF_MEMORY);
    uform_arena_t *host = NULL;
    CHECK_OK(uform_arena_new_in(NULL, 4096, &host));
    CHECK_EQ_INT(uform_arena_devices(host), 0);
    CHECK_STATUS(uform_arena_device_pointer(host, 0, a, &out), UFORM_STATUS_INVALID_ARGUMENT);
    uform_arena_free(host);

    /* The executor freed while two arenas live: OK, and its devices stay open for them. */
    uform_arena_t *second = NULL;
    CHECK_OK(uform_arena_new_in(executor, 2u << 20, &second));
    CHECK_OK(uform_executor_free(executor));
    CHECK(vram_device_used(&cu, 1) >= (6u << 20));
    uform_arena_free(arena);
    CHECK(vram_device_used(&cu, 1) >= (2u << 20)); /* the second still holds it */
    uform_arena_free(second); /* the last: closes the executor, its contexts released */
    CHECK_EQ_INT(vram_device_used(&cu, 0), 0);
    CHECK_EQ_INT(vram_device_used(&cu, 1), 0);

    /* The last arena's free racing the executor's free, many times: exactly one closes it. */
    for (int round = 0; round < 20; round++) {
        race_t race = {vram_executor(NULL, 0, 0), NULL, 0};
        CHECK_OK(uform_arena_new_in(race.executor, 1u << 20, &race.arena));
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, free_arena, &race) == 0);
        atomic_fetch_add(&race.ready, 1);
        while (atomic_load(&race.ready) < 2) {
        }
        CHECK_OK(uform_executor_free(race.executor));
        pthread_join(thread, NULL);
    }
    CHECK_EQ_INT(vram_device_used(&cu, 0), 0);

    /* Drain while copies are queued behind a held stream: it returns only after they ran. */
    executor = vram_executor(NULL, 0, 0);
    CHECK_OK(uform_arena_new_in(executor, 1u << 20, &arena));
    CHECK_OK(uform_arena_allocate(arena, 4096, 0, &a));
    gate_t gate = GATE_INIT;
    opener_t opener = {&gate, 0};
    uform_deferred_t *held = NULL, *copied = NULL;
    uform_call_t call = UFORM_CALL_INIT;
    call.deferred = &held;
    CHECK_OK(uform_executor_for_devices(executor, &call, hold_stream, &gate));
    static unsigned char source[4096];
    fill(source, sizeof source, 3);
    call.deferred = &copied;
    CHECK_OK(uform_executor_copy_to_device(executor, &call, 0, a, source, sizeof source));
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, open_later, &opener) == 0);
    CHECK_OK(uform_executor_drain(executor, UFORM_MOOD_PARKED));
    CHECK_EQ_INT(atomic_load(&opener.opened), 1);
    CHECK_OK(uform_deferred_poll(held));
    CHECK_OK(uform_deferred_poll(copied));
    CHECK_OK(uform_deferred_wait(copied, 0));
    uform_deferred_free(held);
    uform_deferred_free(copied);
    pthread_join(thread, NULL);

    /* Free while calls are queued behind a held stream: they finish first, then free returns. */
    gate_t gate2 = GATE_INIT;
    opener_t opener2 = {&gate2, 0};
    call.deferred = &held;
    CHECK_OK(uform_executor_for_devices(executor, &call, hold_stream, &gate2));
    call.deferred = &copied;
    static unsigned char back[4096];
    CHECK_OK(uform_executor_copy_to_host(executor, &call, back, 0, a, sizeof back));
    CHECK(pthread_create(&thread, NULL, open_later, &opener2) == 0);
    CHECK_OK(uform_executor_free(executor)); /* the arena holds it: drained, closed later */
    CHECK_EQ_INT(atomic_load(&opener2.opened), 1);
    CHECK_OK(uform_deferred_wait(held, 0));
    CHECK_OK(uform_deferred_wait(copied, 0));
    CHECK_EQ_INT(first_mismatch(back, sizeof back, 3), sizeof back);
    uform_deferred_free(held);
    uform_deferred_free(copied);
    pthread_join(thread, NULL);
    uform_arena_free(arena);
    CHECK_EQ_INT(vram_device_used(&cu, 0), 0);
    TEST_DONE();
}
