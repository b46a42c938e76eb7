/* cpu.h - internal interfaces between the CPU kernel files of ops/. */
#ifndef TSL_CPU_H
#define TSL_CPU_H
#include <stdint.h>
#include "tops.h"

/* math.c: array math through SLEEF vectors (x and y may alias). VM_SLEEF_UNARY lists the
 * functions that come straight from SLEEF, with the accuracy variant (u10: 1.0 ULP, u35:
 * 3.5 ULP) that both the AVX2 and the AVX-512 path call: one list, so the two paths cannot
 * drift apart and give different bits. u10 wherever SLEEF has it; tanh keeps u35. */
#define VM_SLEEF_UNARY(F)                                                          \
    F(exp, u10) F(exp2, u10) F(expm1, u10) F(log, u10) F(log2, u10) F(log10, u10) \
    F(log1p, u10) F(sin, u10) F(cos, u10) F(tan, u10) F(asin, u10) F(acos, u10)   \
    F(atan, u10) F(sinh, u10) F(cosh, u10) F(tanh, u35) F(asinh, u10)             \
    F(acosh, u10) F(atanh, u10)
#define VM_DECLARE(NAME, ULP)                                      \
    void vm_##NAME##_f32(const float *x, float *y, int64_t n);     \
    void vm_##NAME##_f64(const double *x, double *y, int64_t n);
VM_SLEEF_UNARY(VM_DECLARE)
VM_DECLARE(sqrt, exact)
VM_DECLARE(sigmoid, u10)   /* 1 / (1 + exp(-x)) with the exp above */
#undef VM_DECLARE
/* out[i] = atan2(y[i*sy], x[i*sx]), strides 0 or 1 (out may alias y or x); SLEEF u10. */
void vm_atan2_f32(const float *y, int64_t sy, const float *x, int64_t sx, float *out, int64_t n);
void vm_atan2_f64(const double *y, int64_t sy, const double *x, int64_t sx, double *out, int64_t n);
void vm_force_avx2(int on);   /* tests: compare the AVX2 and AVX-512 paths */

/* ew.c: kernels with a parameter or an operand the generic entry points do not carry.
 * cpu_round_decimals: NumPy's around to `decimals` places (dst may be src); 0. */
int cpu_round_decimals(DType dt, const void *src, void *dst, int64_t n, int64_t decimals);
/* a[i] (op) x for a comparison op, exactly (no rounding of x or a[i]); num_left: x (op)
 * a[i]. 0, or -1 (error set) for an op that is not a comparison. */
int cpu_compare_i64_number(OpCode op, const int64_t *a, double x, bool num_left, uint8_t *out, int64_t n);

/* Broadcast iteration: output shape with per-input strides (in elements, 0 where the
 * input is broadcast), adjacent dimensions merged where possible. */
typedef struct {
    int nd;
    int64_t shape[TSL_MAX_RANK];
    int64_t stride[3][TSL_MAX_RANK];
} BIter;
void biter_init(BIter *it, const Shape *out, const Shape *const *ins, int nin);
/* Calls fn(offsets, count) for each innermost run; offsets[k] is input k's element offset,
 * and inner strides are it->stride[k][it->nd-1]. Returns 0, or fn's first non-zero. */
typedef int (*BRunFn)(void *ctx, const int64_t *off, int64_t out_off, int64_t n);
int biter_run(const BIter *it, int nin, BRunFn fn, void *ctx);

/* Reduction helpers shared with softmax. */
double cpu_sum_f64(const double *x, int64_t n, int64_t stride);
float cpu_sum_f32(const float *x, int64_t n, int64_t stride);

/* The CPU kernel of each op family (the impl column of ops.def), reached through the CPU's
 * entry in the device registry (kernels.c). out[k] already has the dtype and shape that
 * infer_<impl> gave, except for F_VIEW and F_DYNAMIC ops, whose kernels allocate out[k].
 * 0, or -1 with the message set by op_fail(). */
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) int cpu_##impl(const OpCall *c, Tensor **out);
#include "ops.def"
#undef OP

#endif
