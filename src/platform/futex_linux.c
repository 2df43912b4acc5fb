/* Futexes are the only sleeping primitive on the hot path: a wake is one syscall and a
 * sleeper costs nothing, which is what PARKED needs. Process-private: executors never cross
 * processes. */
#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"

void uform__futex_wait(const uint32_t *word, uint32_t expected, int64_t timeout_ns) {
    struct timespec timeout, *timeout_pointer = NULL;
    if (timeout_ns >= 0) {
        timeout.tv_sec = (time_t)(timeout_ns / 1000000000);
        timeout.tv_nsec = (long)(timeout_ns % 1000000000);
        timeout_pointer = &timeout;
    }
    /* EAGAIN (value changed), EINTR and ETIMEDOUT are all "go and look again". */
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout_pointer, NULL, 0);
}

void uform__futex_wake(const uint32_t *word, int count) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count < 0 ? INT_MAX : count, NULL, NULL, 0);
}
