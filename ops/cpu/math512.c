/* math512.c - the AVX-512 versions of math.c's array functions: the same deterministic
 * SLEEF variants, 16-wide f32 / 8-wide f64, tails padded into a vector, giving math.c's
 * bits exactly. Built with -mavx512f and only called after math.c has checked the
 * processor supports it. */
#include <immintrin.h>
#include <string.h>
#include <sleef.h>
#include "math512.h"
#include "vecloop.h"

#define VEC_F32(NAME, F) VEC1(NAME, float, 16, _mm512_loadu_ps, _mm512_storeu_ps, F)
#define VEC_F64(NAME, F) VEC1(NAME, double, 8, _mm512_loadu_pd, _mm512_storeu_pd, F)

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

/* Two operands, as vecloop.h's VEC2. */
VEC2(avx512_atan2_f32, float, 16, __m512, _mm512_loadu_ps, _mm512_set1_ps, _mm512_storeu_ps,
     Sleef_finz_atan2f16_u10avx512f)
VEC2(avx512_atan2_f64, double, 8, __m512d, _mm512_loadu_pd, _mm512_set1_pd, _mm512_storeu_pd,
     Sleef_finz_atan2d8_u10avx512f)
