/* WebAssembly sum kernel for wasm32_v128 (SIMD128, wasm_simd128.h). Four float lanes are
 * widened to two pairs of doubles (f64x2.promote_low_f32x4) and added in double, as the other
 * kernels add in double. */
#include "kernels/kernels.h"

#if UFORM_KERNELS_WASM32_V128
#include <wasm_simd128.h>

double uform__sum_f32_wasm32_v128(const float *values, size_t n) {
    v128_t low = wasm_f64x2_splat(0.0), high = wasm_f64x2_splat(0.0);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v128_t four = wasm_v128_load(values + i);
        low = wasm_f64x2_add(low, wasm_f64x2_promote_low_f32x4(four));
        high = wasm_f64x2_add(high, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(four, four, 2, 3, 0, 1)));
    }
    v128_t both = wasm_f64x2_add(low, high);
    double sum = wasm_f64x2_extract_lane(both, 0) + wasm_f64x2_extract_lane(both, 1);
    for (; i < n; i++) sum += (double)values[i];
    return sum;
}
#else
typedef int uform__sum_f32_wasm_empty_;
#endif
