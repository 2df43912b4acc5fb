/* One outcome when a process is killed (SIGKILL, sent by the test) at each step of the exchange:
 * the survivors agree (one_outcome.h). */
#include "one_outcome.h"

int main(void) {
    one_outcome_all(SIGKILL);
    TEST_DONE();
}
