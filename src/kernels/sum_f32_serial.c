/* The portable floor: plain C, compiled for the build's baseline and nothing more. */
#include "kernels/kernels.h"

double uform__sum_f32_serial(const float *values, size_t n) {
    /* Four independent sums keep the adder busy without reassociating a single chain. */
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a0 += values[i];
        a1 += values[i + 1];
        a2 += values[i + 2];
        a3 += values[i + 3];
    }
    for (; i < n; i++) a0 += values[i];
    return (a0 + a1) + (a2 + a3);
}
