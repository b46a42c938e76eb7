/* math.c - vectorised math functions over arrays, through SLEEF's AVX2 entry points.
 *
 * Every element goes through the same 8-wide (f32) or 4-wide (f64) function, the tail
 * included (it is padded into a vector), so a whole tensor and any chunk of it give
 * identical bits: fused and unfused execution agree. */
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include <sleef.h>
#include "cpu.h"

#define VEC_F32(NAME, SLEEF)                                                  \
    void NAME(const float *x, float *y, int64_t n) {                         \
        int64_t i = 0;                                                        \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, SLEEF(_mm256_loadu_ps(x + i))); \
        if (i < n) {                                                          \
            float buf[8] = { 0 };                                             \
            memcpy(buf, x + i, sizeof(float) * (size_t)(n - i));              \
            _mm256_storeu_ps(buf, SLEEF(_mm256_loadu_ps(buf)));               \
            memcpy(y + i, buf, sizeof(float) * (size_t)(n - i));              \
        }                                                                     \
    }
#define VEC_F64(NAME, SLEEF)                                                  \
    void NAME(const double *x, double *y, int64_t n) {                       \
        int64_t i = 0;                                                        \
        for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, SLEEF(_mm256_loadu_pd(x + i))); \
        if (i < n) {                                                          \
            double buf[4] = { 0 };                                            \
            memcpy(buf, x + i, sizeof(double) * (size_t)(n - i));             \
            _mm256_storeu_pd(buf, SLEEF(_mm256_loadu_pd(buf)));               \
            memcpy(y + i, buf, sizeof(double) * (size_t)(n - i));             \
        }                                                                     \
    }

VEC_F32(vm_exp_f32, Sleef_expf8_u10avx2)
VEC_F32(vm_log_f32, Sleef_logf8_u10avx2)
VEC_F32(vm_tanh_f32, Sleef_tanhf8_u10avx2)
VEC_F32(vm_sin_f32, Sleef_sinf8_u10avx2)
VEC_F32(vm_cos_f32, Sleef_cosf8_u10avx2)
VEC_F32(vm_sqrt_f32, _mm256_sqrt_ps)
VEC_F64(vm_exp_f64, Sleef_expd4_u10avx2)
VEC_F64(vm_log_f64, Sleef_logd4_u10avx2)
VEC_F64(vm_tanh_f64, Sleef_tanhd4_u10avx2)
VEC_F64(vm_sin_f64, Sleef_sind4_u10avx2)
VEC_F64(vm_cos_f64, Sleef_cosd4_u10avx2)
VEC_F64(vm_sqrt_f64, _mm256_sqrt_pd)

/* sigmoid(x) = 1 / (1 + exp(-x)), with the same exp as above. */
static __m256 sigmoid8(__m256 x) {
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
}
static __m256d sigmoid4(__m256d x) {
    __m256d one = _mm256_set1_pd(1.0);
    __m256d e = Sleef_expd4_u10avx2(_mm256_sub_pd(_mm256_setzero_pd(), x));
    return _mm256_div_pd(one, _mm256_add_pd(one, e));
}
VEC_F32(vm_sigmoid_f32, sigmoid8)
VEC_F64(vm_sigmoid_f64, sigmoid4)
