/* math.c - vectorised math functions over arrays, through SLEEF's AVX2 entry points.
 *
 * Every element goes through the same 8-wide (f32) or 4-wide (f64) function, the tail
 * included (it is padded into a vector), so a whole tensor and any chunk of it give
 * identical bits: fused and unfused execution agree. math512.c has the AVX-512 versions;
 * cpu.h's vm_* dispatch to them when the processor has AVX-512F (SLEEF computes the same
 * bits with either, given the same accuracy variant, which cpu.h's VM_SLEEF_UNARY fixes
 * for both; tests/unit checks it). */
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

#define AVX2_SLEEF(NAME, ULP)                                         \
    VEC_F32(avx2_##NAME##_f32, Sleef_finz_##NAME##f8_##ULP##avx2)          \
    VEC_F64(avx2_##NAME##_f64, Sleef_finz_##NAME##d4_##ULP##avx2)
VM_SLEEF_UNARY(AVX2_SLEEF)
VEC_F32(avx2_sqrt_f32, _mm256_sqrt_ps)
VEC_F64(avx2_sqrt_f64, _mm256_sqrt_pd)

/* sigmoid(x) = 1 / (1 + exp(-x)), with the same exp as above. */
static __m256 sigmoid8(__m256 x) {
    __m256 one = _mm256_set1_ps(1.0f);
    __m256 e = Sleef_finz_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
}
static __m256d sigmoid4(__m256d x) {
    __m256d one = _mm256_set1_pd(1.0);
    __m256d e = Sleef_finz_expd4_u10avx2(_mm256_sub_pd(_mm256_setzero_pd(), x));
    return _mm256_div_pd(one, _mm256_add_pd(one, e));
}
VEC_F32(avx2_sigmoid_f32, sigmoid8)
VEC_F64(avx2_sigmoid_f64, sigmoid4)

/* Two operands, each with stride 0 (one value, broadcast) or 1; the tail is padded with
 * zeros into one more vector call, as above. */
#define VEC2(NAME, T, W, VT, LOAD, SET1, STORE, SLEEF)                                       \
    static void NAME(const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) {       \
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
VEC2(avx2_atan2_f32, float, 8, __m256, _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps, Sleef_finz_atan2f8_u10avx2)
VEC2(avx2_atan2_f64, double, 4, __m256d, _mm256_loadu_pd, _mm256_set1_pd, _mm256_storeu_pd, Sleef_finz_atan2d4_u10avx2)

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
#define DISPATCH_BOTH(NAME, ULP) DISPATCH(NAME##_f32, float) DISPATCH(NAME##_f64, double)
VM_SLEEF_UNARY(DISPATCH_BOTH)
DISPATCH_BOTH(sqrt, exact)
DISPATCH_BOTH(sigmoid, u10)

#define DISPATCH2(NAME, T)                                                                   \
    void vm_##NAME(const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) {        \
        if (has_avx512()) avx512_##NAME(a, sa, b, sb, y, n);                                 \
        else avx2_##NAME(a, sa, b, sb, y, n);                                                \
    }
DISPATCH2(atan2_f32, float)
DISPATCH2(atan2_f64, double)

/* Forces the AVX2 path (tests compare the two). */
void vm_force_avx2(int on) { use_avx512 = on ? 0 : -1; }
