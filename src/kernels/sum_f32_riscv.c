/* RISC-V sum kernel for alibaba_c930 (RVV 1.0). GCC 12 has no RVV intrinsics and would not
 * compile C for "v" anyway, so the loop is assembly, enabled for this block alone with
 * ".option arch, +v": the rest of the binary stays plain RV64GC and runs on any RISC-V CPU.
 * The compiler never allocates vector registers in a build without "v", so the block may use
 * v8-v11 and v24 freely. Each strip widens its floats to double inside one unordered widening
 * reduction (vfwredusum), as the other kernels add in double. */
#include "kernels/kernels.h"

#if UFORM_KERNELS_ALIBABA_C930
double uform__sum_f32_alibaba_c930(const float *values, size_t n) {
    double result, zero = 0.0;
    const float *at = values;
    size_t left = n, step;
    __asm__ volatile(".option push\n"
                     ".option arch, +v\n"
                     "vsetivli zero, 1, e64, m1, ta, ma\n"
                     "vfmv.s.f v24, %[zero]\n"
                     "1:\n"
                     "beqz %[left], 2f\n"
                     "vsetvli %[step], %[left], e32, m4, ta, ma\n"
                     "vle32.v v8, (%[at])\n"
                     "vfwredusum.vs v24, v8, v24\n"
                     "sub %[left], %[left], %[step]\n"
                     "slli %[step], %[step], 2\n"
                     "add %[at], %[at], %[step]\n"
                     "j 1b\n"
                     "2:\n"
                     "vsetivli zero, 1, e64, m1, ta, ma\n"
                     "vfmv.f.s %[result], v24\n"
                     ".option pop\n"
                     : [result] "=f"(result), [left] "+r"(left), [at] "+r"(at), [step] "=&r"(step)
                     : [zero] "f"(zero)
                     : "memory");
    return result;
}
#else
typedef int uform__sum_f32_riscv_empty_;
#endif
