/* The asymmetric fence in a WebAssembly build: there is no way to make another thread fence, so
 * it is never ready and the executor keeps its word-based hold (executor_bias.c). */

#include "platform/platform.h"

bool uform__process_barrier_ready(void) { return false; }
int uform__process_barrier_known(void) { return -1; }
bool uform__process_barrier(void) { return false; }
