/* Which executors the calling thread runs callbacks for. A worker belongs to its executor for
 * its whole life; a thread making a synchronous call belongs to that executor while the call
 * runs, on top of whatever it belonged to before. The links live on the threads' own stacks,
 * so the chain costs no allocation, and it is as deep as the calls nested on this thread.
 *
 * One thread-local pointer would not do: X's worker calling Y would be marked Y's alone, and
 * Y's callback calling X (on that same thread) would then get CONTENDED for a synchronous call,
 * or deadlock for a deferred one, instead of the INVALID_ARGUMENT the header promises. */
#include "executor/executor_internal.h"

UFORM_HOT_THREAD_LOCAL_ uform__membership_t *uform__membership_innermost = NULL;

bool uform__thread_belongs_to(const uform_executor_t *executor) {
    for (const uform__membership_t *link = uform__membership_innermost; link; link = link->outer)
        if (link->executor == executor) return true;
    return false;
}
