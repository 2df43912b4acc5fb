/* Internal: which executors the calling thread is running callbacks for (executor_membership.c). */
#ifndef UFORM_EXECUTOR_MEMBERSHIP_H
#define UFORM_EXECUTOR_MEMBERSHIP_H

#include <stdbool.h>

#include "uform.h"

/** One link of a thread's chain: a worker's whole life, or one synchronous call's duration. */
typedef struct uform__membership_t {
    const uform_executor_t *executor;
    struct uform__membership_t *outer;
} uform__membership_t;

void uform__membership_push(uform__membership_t *link, const uform_executor_t *executor);
void uform__membership_pop(uform__membership_t *link);
/** True if the calling thread runs a callback of `executor`, however many other executors'
 *  calls are nested in between (X's worker calls Y, whose callback calls X). */
bool uform__thread_belongs_to(const uform_executor_t *executor);

#endif
