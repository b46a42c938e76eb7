/* math512.c - the AVX-512 versions of math.c's array functions (same SLEEF algorithms and
 * accuracy variants, 16-wide f32 / 8-wide f64, tails padded into a vector). Built with
 * -mavx512f and only called after math.c has checked the processor supports it. */
#include <immintrin.h>
#include <string.h>
#include <sleef.h>
#include "math512.h"

#define VEC_F32(NAME, SLEEF)                                                  \
    void NAME(const float *x, float *y, int64_t n) {                         \
        int64_t i = 0;                                                        \
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, SLEEF(_mm512_loadu_ps(x + i))); \
        if (i < n) {                                                          \
            float buf[16] = { 0 };                                            \
            memcpy(buf, x + i, sizeof(float) * (size_t)(n - i));              \
            _mm512_storeu_ps(buf, SLEEF(_mm512_loadu_ps(buf)));               \
            memcpy(y + i, buf, sizeof(float) * (size_t)(n - i));              \
        }                                                                     \
    }
#define VEC_F64(NAME, SLEEF)                                                  \
    void NAME(const double *x, double *y, int64_t n) {                       \
        int64_t i = 0;                                                        \
        for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, SLEEF(_mm512_loadu_pd(x + i))); \
        if (i < n) {                                                          \
            double buf[8] = { 0 };                                            \
            memcpy(buf, x + i, sizeof(double) * (size_t)(n - i));             \
            _mm512_storeu_pd(buf, SLEEF(_mm512_loadu_pd(buf)));               \
            memcpy(y + i, buf, sizeof(double) * (size_t)(n - i));             \
        }                                                                     \
    }

static __m512 sigmoid16(__m512 x) {
    __m512 one = _mm512_set1_ps(1.0f);
    __m512 e = Sleef_finz_expf16_u10avx512f(_mm512_sub_ps(_mm512_setzero_ps(), x));
    return _mm512_div_ps(one, _mm512_add_ps(one, e));
}
static __m512d sigmoid8(__m512d x) {
    __m512d one = _mm512_set1_pd(1.0);
    __m512d e = Sleef_finz_expd8_u10avx512f(_mm512_sub_pd(_mm512_setzero_pd(), x));
    return _mm512_div_pd(one, _mm512_add_pd(one, e));
}

#define AVX512_SLEEF(NAME, ULP)                                        \
    VEC_F32(avx512_##NAME##_f32, Sleef_finz_##NAME##f16_##ULP##avx512f)     \
    VEC_F64(avx512_##NAME##_f64, Sleef_finz_##NAME##d8_##ULP##avx512f)
VM_SLEEF_UNARY(AVX512_SLEEF)
VEC_F32(avx512_sqrt_f32, _mm512_sqrt_ps)
VEC_F32(avx512_sigmoid_f32, sigmoid16)
VEC_F64(avx512_sqrt_f64, _mm512_sqrt_pd)
VEC_F64(avx512_sigmoid_f64, sigmoid8)

/* Two operands with strides 0 or 1, as math.c's VEC2. */
#define VEC2(NAME, T, W, VT, LOAD, SET1, STORE, SLEEF)                                       \
    void NAME(const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) {              \
        if (n <= 0) return;                                                                \
        VT va = SET1(a[0]), vb = SET1(b[0]);                                               \
        int64_t i = 0;                                                                     \
        for (; i + W <= n; i += W) {                                                       \
            if (sa) va = LOAD(a + i);                                                      \
            if (sb) vb = LOAD(b + i);                                                      \
            STORE(y + i, SLEEF(va, vb));                                                   \
        }                                                                                  \
        if (i < n) {                                                                       \
            T ba[W] = { 0 }, bb[W] = { 0 };                                                \
            for (int64_t k = 0; k < n - i; k++) ba[k] = a[sa ? i + k : 0], bb[k] = b[sb ? i + k : 0]; \
            STORE(ba, SLEEF(LOAD(ba), LOAD(bb)));                                          \
            memcpy(y + i, ba, sizeof(T) * (size_t)(n - i));                                \
        }                                                                                  \
    }
VEC2(avx512_atan2_f32, float, 16, __m512, _mm512_loadu_ps, _mm512_set1_ps, _mm512_storeu_ps, Sleef_finz_atan2f16_u10avx512f)
VEC2(avx512_atan2_f64, double, 8, __m512d, _mm512_loadu_pd, _mm512_set1_pd, _mm512_storeu_pd, Sleef_finz_atan2d8_u10avx512f)
