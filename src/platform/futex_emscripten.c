/* Futexes on WebAssembly (Emscripten with -pthread): emscripten_futex_wait/wake are
 * memory.atomic.wait32/notify on the shared memory, the same "sleep while the word holds this
 * value" contract as Linux's FUTEX_WAIT_PRIVATE. Their timeout is in milliseconds (a double). */
#include <emscripten/threading.h>
#include <limits.h>
#include <math.h>

#include "platform/platform.h"

void uform__futex_wait(const uint32_t *word, uint32_t expected, int64_t timeout_ns) {
    double timeout_ms = timeout_ns < 0 ? INFINITY : (double)timeout_ns / 1e6;
    /* -EWOULDBLOCK (value changed) and -ETIMEDOUT are both "go and look again". */
    emscripten_futex_wait((volatile void *)word, expected, timeout_ms);
}

void uform__futex_wake(const uint32_t *word, int count) {
    emscripten_futex_wake((volatile void *)word, count < 0 ? INT_MAX : count);
}
