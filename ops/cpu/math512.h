/* math512.h - AVX-512 array math (math512.c), called through math.c's dispatch. */
#ifndef TSL_MATH512_H
#define TSL_MATH512_H
#include <stdint.h>

#define MATH512(NAME, T) void avx512_##NAME(const T *x, T *y, int64_t n);
MATH512(exp_f32, float)
MATH512(log_f32, float)
MATH512(tanh_f32, float)
MATH512(sin_f32, float)
MATH512(cos_f32, float)
MATH512(sqrt_f32, float)
MATH512(sigmoid_f32, float)
MATH512(exp_f64, double)
MATH512(log_f64, double)
MATH512(tanh_f64, double)
MATH512(sin_f64, double)
MATH512(cos_f64, double)
MATH512(sqrt_f64, double)
MATH512(sigmoid_f64, double)
#undef MATH512

#endif
