/* cpu.h - internal interfaces between the CPU kernel files of ops/. */
#ifndef TSL_CPU_H
#define TSL_CPU_H
#include <stdint.h>
#include "tops.h"

/* math.c: y[i] = f(x[i]) through SLEEF vectors (x and y may alias). */
void vm_exp_f32(const float *x, float *y, int64_t n);
void vm_log_f32(const float *x, float *y, int64_t n);
void vm_tanh_f32(const float *x, float *y, int64_t n);
void vm_sin_f32(const float *x, float *y, int64_t n);
void vm_cos_f32(const float *x, float *y, int64_t n);
void vm_sqrt_f32(const float *x, float *y, int64_t n);
void vm_sigmoid_f32(const float *x, float *y, int64_t n);
void vm_exp_f64(const double *x, double *y, int64_t n);
void vm_log_f64(const double *x, double *y, int64_t n);
void vm_tanh_f64(const double *x, double *y, int64_t n);
void vm_sin_f64(const double *x, double *y, int64_t n);
void vm_cos_f64(const double *x, double *y, int64_t n);
void vm_sqrt_f64(const double *x, double *y, int64_t n);
void vm_sigmoid_f64(const double *x, double *y, int64_t n);
void vm_force_avx2(int on);   /* tests: compare the AVX2 and AVX-512 paths */

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

#endif
