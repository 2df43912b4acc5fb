/* Internal: which executors the calling thread is running callbacks for (executor_membership.c). */
#ifndef UFORM_EXECUTOR_MEMBERSHIP_H
#define UFORM_EXECUTOR_MEMBERSHIP_H

#include <stdbool.h>

#include "core/thread_local.h"
#include "uform.h"

/** One link of a thread's chain: a worker's whole life, or one synchronous call's duration. */
typedef struct uform__membership_t {
    const uform_executor_t *executor;
    struct uform__membership_t *outer;
} uform__membership_t;

/* The innermost link of the calling thread's chain (executor_membership.c). Push and pop are
 * inline: every synchronous call makes both, and two calls into another file were about a tenth
 * of a 1-thread call (perf, bench/RESULTS.md). */
extern UFORM_HOT_THREAD_LOCAL_ uform__membership_t *uform__membership_innermost;

static inline void uform__membership_push(uform__membership_t *link, const uform_executor_t *executor) {
    link->executor = executor;
    link->outer = uform__membership_innermost;
    uform__membership_innermost = link;
}

static inline void uform__membership_pop(uform__membership_t *link) { uform__membership_innermost = link->outer; }
/** True if the calling thread runs a callback of `executor`, however many other executors'
 *  calls are nested in between (X's worker calls Y, whose callback calls X). */
bool uform__thread_belongs_to(const uform_executor_t *executor);

#endif
