/* One outcome when a process is stopped (SIGSTOP, sent by the test) at each step of the exchange
 * until the others have answered, past their timeout, then continued: all agree (one_outcome.h). */
#include "one_outcome.h"

int main(void) {
    one_outcome_all(SIGSTOP);
    TEST_DONE();
}
