/* math512.c - the AVX-512 versions of math.c's array functions: the same deterministic
 * SLEEF variants, 16-wide f32 / 8-wide f64, tails padded into a vector, giving math.c's
 * bits exactly. Built with -mavx512f and only called after math.c has checked the
 * processor supports it. */
#include <immintrin.h>
#include <string.h>
#include <sleef.h>
#include "math512.h"

#define VEC_F32(NAME, SLEEF)                                                                 \
    void NAME(const float *x, float *y, int64_t n) {                                         \
        int64_t i = 0;                                                                       \
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, SLEEF(_mm512_loadu_ps(x + i))); \
        if (i < n) {                                                                         \
            float buf[16] = { 0 };                                                           \
            memcpy(buf, x + i, sizeof(float) * (size_t)(n - i));                             \
            _mm512_storeu_ps(buf, SLEEF(_mm512_loadu_ps(buf)));                              \
            memcpy(y + i, buf, sizeof(float) * (size_t)(n - i));                             \
        }                                                                                    \
    }
#define VEC_F64(NAME, SLEEF)                                                               \
    void NAME(const double *x, double *y, int64_t n) {                                     \
        int64_t i = 0;                                                                     \
        for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, SLEEF(_mm512_loadu_pd(x + i))); \
        if (i < n) {                                                                       \
            double buf[8] = { 0 };                                                         \
            memcpy(buf, x + i, sizeof(double) * (size_t)(n - i));                          \
            _mm512_storeu_pd(buf, SLEEF(_mm512_loadu_pd(buf)));                            \
            memcpy(y + i, buf, sizeof(double) * (size_t)(n - i));                          \
        }                                                                                  \
    }

/* sigmoid as in math.c: 1 / (1 + e) for x >= 0, e / (1 + e) below, e = exp(-|x|). */
__m512 avx512_sigmoid_16(__m512 x) {
    __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
    __m512 nabs = _mm512_min_ps(x, _mm512_sub_ps(zero, x));
    __m512 e = Sleef_finz_expf16_u10avx512f(nabs), d = _mm512_add_ps(one, e);
    __mmask16 neg = _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ);
    return _mm512_mask_blend_ps(neg, _mm512_div_ps(one, d), _mm512_div_ps(e, d));
}
__m512d avx512_sigmoid_8(__m512d x) {
    __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();
    __m512d nabs = _mm512_min_pd(x, _mm512_sub_pd(zero, x));
    __m512d e = Sleef_finz_expd8_u10avx512f(nabs), d = _mm512_add_pd(one, e);
    __mmask8 neg = _mm512_cmp_pd_mask(x, zero, _CMP_LT_OQ);
    return _mm512_mask_blend_pd(neg, _mm512_div_pd(one, d), _mm512_div_pd(e, d));
}

/* NaN bits as math.c's AVX2 path leaves them (cpu.h's EW_SLEEF_UNARY says which). */
static inline __m512 nan_keep_ps(__m512 v) { return v; }
static inline __m512d nan_keep_pd(__m512d v) { return v; }
static inline __m512 nan_canon_ps(__m512 v) {
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_blend_ps(nan, v, _mm512_set1_ps(__builtin_nanf("")));
}
static inline __m512d nan_canon_pd(__m512d v) {
    __mmask8 nan = _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_blend_pd(nan, v, _mm512_set1_pd(__builtin_nan("")));
}

#define AVX512_SLEEF(NAME, ULP, NANBITS, RANGE)                                \
    __m512 avx512_##NAME##_16(__m512 x) {                                      \
        return NANBITS##_ps(Sleef_finz_##NAME##f16_##ULP##avx512f(x));         \
    }                                                                          \
    __m512d avx512_##NAME##_8(__m512d x) {                                     \
        return NANBITS##_pd(Sleef_finz_##NAME##d8_##ULP##avx512f(x));          \
    }                                                                          \
    VEC_F32(avx512_##NAME##_f32, avx512_##NAME##_16)                           \
    VEC_F64(avx512_##NAME##_f64, avx512_##NAME##_8)
EW_SLEEF_UNARY(AVX512_SLEEF)
VEC_F32(avx512_sqrt_f32, _mm512_sqrt_ps)
VEC_F32(avx512_sigmoid_f32, avx512_sigmoid_16)
VEC_F64(avx512_sqrt_f64, _mm512_sqrt_pd)
VEC_F64(avx512_sigmoid_f64, avx512_sigmoid_8)

/* Two operands with strides 0 or 1, as math.c's VEC2. */
#define VEC2(NAME, T, W, VT, LOAD, SET1, STORE, SLEEF)                          \
    void NAME(const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) { \
        if (n <= 0) return;                                                   \
        VT va = SET1(a[0]), vb = SET1(b[0]);                                  \
        int64_t i = 0;                                                        \
        for (; i + W <= n; i += W) {                                          \
            if (sa) va = LOAD(a + i);                                         \
            if (sb) vb = LOAD(b + i);                                         \
            STORE(y + i, SLEEF(va, vb));                                      \
        }                                                                     \
        if (i < n) {                                                          \
            T ba[W] = { 0 }, bb[W] = { 0 };                                   \
            for (int64_t k = 0; k < n - i; k++) {                             \
                ba[k] = a[sa ? i + k : 0];                                    \
                bb[k] = b[sb ? i + k : 0];                                    \
            }                                                                 \
            STORE(ba, SLEEF(LOAD(ba), LOAD(bb)));                             \
            memcpy(y + i, ba, sizeof(T) * (size_t)(n - i));                   \
        }                                                                     \
    }
VEC2(avx512_atan2_f32, float, 16, __m512, _mm512_loadu_ps, _mm512_set1_ps, _mm512_storeu_ps,
     Sleef_finz_atan2f16_u10avx512f)
VEC2(avx512_atan2_f64, double, 8, __m512d, _mm512_loadu_pd, _mm512_set1_pd, _mm512_storeu_pd,
     Sleef_finz_atan2d8_u10avx512f)
