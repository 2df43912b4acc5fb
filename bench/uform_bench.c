/* The standalone `uform-bench`: the same benchmark as `uform bench`. */
#include "bench.h"

int main(int argc, char **argv) { return uform_bench_main(argc, argv); }
