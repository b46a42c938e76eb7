/* math512.h - AVX-512 array math (math512.c), called through math.c's dispatch. */
#ifndef TSL_MATH512_H
#define TSL_MATH512_H
#include <stdint.h>
#include "cpu.h"

#define MATH512(NAME, ULP, NANBITS, RANGE)                           \
    void avx512_##NAME##_f32(const float *x, float *y, int64_t n);   \
    void avx512_##NAME##_f64(const double *x, double *y, int64_t n);
EW_SLEEF_UNARY(MATH512)
MATH512(sqrt, exact, nan_keep, sleef_only)
MATH512(sigmoid, u10, nan_keep, sleef_only)
#undef MATH512
void avx512_atan2_f32(const float *y, int64_t sy, const float *x, int64_t sx, float *out,
                      int64_t n);
void avx512_atan2_f64(const double *y, int64_t sy, const double *x, int64_t sx, double *out,
                      int64_t n);

/* One vector of each function, for chain512.c (only where AVX-512F code is compiled): the
 * very function each element of the array versions above goes through. */
#ifdef __AVX512F__
#include <immintrin.h>
#define MATH512_VEC(NAME, ULP, NANBITS, RANGE) \
    __m512 avx512_##NAME##_16(__m512 x);       \
    __m512d avx512_##NAME##_8(__m512d x);
EW_SLEEF_UNARY(MATH512_VEC)
MATH512_VEC(sigmoid, u10, nan_keep, sleef_only)
#undef MATH512_VEC
#endif

#endif
