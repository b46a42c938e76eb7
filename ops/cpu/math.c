/* math.c - vectorised math functions over arrays, through SLEEF's AVX2 entry points.
 *
 * Every element goes through the same 8-wide (f32) or 4-wide (f64) function, the tail
 * included (it is padded into a vector), so a whole tensor and any chunk of it give
 * identical bits: fused and unfused execution agree. math512.c has the AVX-512 versions;
 * cpu.h's vm_* dispatch to them when the processor has AVX-512F (SLEEF computes the same
 * bits with either; tests/unit checks it). tanh uses SLEEF's 3.5-ULP variant. */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sleef.h>
#include "cpu.h"
#include "math512.h"

#define VEC_F32(NAME, SLEEF)                                                  \
    static void NAME(const float *x, float *y, int64_t n) {                         \
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
    static void NAME(const double *x, double *y, int64_t n) {                       \
        int64_t i = 0;                                                        \
        for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, SLEEF(_mm256_loadu_pd(x + i))); \
        if (i < n) {                                                          \
            double buf[4] = { 0 };                                            \
            memcpy(buf, x + i, sizeof(double) * (size_t)(n - i));             \
            _mm256_storeu_pd(buf, SLEEF(_mm256_loadu_pd(buf)));               \
            memcpy(y + i, buf, sizeof(double) * (size_t)(n - i));             \
        }                                                                     \
    }

VEC_F32(avx2_exp_f32, Sleef_expf8_u10avx2)
VEC_F32(avx2_log_f32, Sleef_logf8_u10avx2)
VEC_F32(avx2_tanh_f32, Sleef_tanhf8_u35avx2)
VEC_F32(avx2_sin_f32, Sleef_sinf8_u10avx2)
VEC_F32(avx2_cos_f32, Sleef_cosf8_u10avx2)
VEC_F32(avx2_sqrt_f32, _mm256_sqrt_ps)
VEC_F64(avx2_exp_f64, Sleef_expd4_u10avx2)
VEC_F64(avx2_log_f64, Sleef_logd4_u10avx2)
VEC_F64(avx2_tanh_f64, Sleef_tanhd4_u35avx2)
VEC_F64(avx2_sin_f64, Sleef_sind4_u10avx2)
VEC_F64(avx2_cos_f64, Sleef_cosd4_u10avx2)
VEC_F64(avx2_sqrt_f64, _mm256_sqrt_pd)

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
VEC_F32(avx2_sigmoid_f32, sigmoid8)
VEC_F64(avx2_sigmoid_f64, sigmoid4)

/* Dispatch: AVX-512 when the processor has it, decided once. */
static int use_avx512 = -1;
static int has_avx512(void) {
    if (use_avx512 < 0) use_avx512 = __builtin_cpu_supports("avx512f") && !getenv("TSL_NO_AVX512");
    return use_avx512;
}
#define DISPATCH(NAME, T)                                                        \
    void vm_##NAME(const T *x, T *y, int64_t n) {                                \
        if (has_avx512()) avx512_##NAME(x, y, n);                                \
        else avx2_##NAME(x, y, n);                                               \
    }
DISPATCH(exp_f32, float)
DISPATCH(log_f32, float)
DISPATCH(tanh_f32, float)
DISPATCH(sin_f32, float)
DISPATCH(cos_f32, float)
DISPATCH(sqrt_f32, float)
DISPATCH(sigmoid_f32, float)
DISPATCH(exp_f64, double)
DISPATCH(log_f64, double)
DISPATCH(tanh_f64, double)
DISPATCH(sin_f64, double)
DISPATCH(cos_f64, double)
DISPATCH(sqrt_f64, double)
DISPATCH(sigmoid_f64, double)

/* Forces the AVX2 path (tests compare the two). */
void vm_force_avx2(int on) { use_avx512 = on ? 0 : -1; }
