/* math.c - vectorised math functions over arrays, through SLEEF's AVX2 entry points.
 *
 * Every element goes through the same 8-wide (f32) or 4-wide (f64) function, the tail
 * included (it is padded into a vector), and SLEEF's deterministic (finz) variants make
 * each lane's bits a function of its own value, so a whole tensor and any chunk of it give
 * identical bits: fused and unfused execution agree. math512.c has the AVX-512 versions;
 * the vm_* functions dispatch to them when the processor has AVX-512F. Both call the
 * variants cpu.h's EW_SLEEF_UNARY names, and this file is the reference: where SLEEF's
 * AVX-512 code leaves other bits (NaNs), math512.c adjusts its results to these
 * (tests/unit/test_ew.c checks both paths agree). With AVX-512F, cpu_unary reaches most of
 * these through chain512.c, one vector of math512.c's functions at a time. */
#include <pthread.h>
#include <stdatomic.h>
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sleef.h>
#include "cpu.h"
#include "math512.h"
#include "vecloop.h"

#define VEC_F32(NAME, F) static VEC1(NAME, float, 8, _mm256_loadu_ps, _mm256_storeu_ps, F)
#define VEC_F64(NAME, F) static VEC1(NAME, double, 4, _mm256_loadu_pd, _mm256_storeu_pd, F)

#define AVX2_SLEEF(NAME, ULP, NANBITS, RANGE)                         \
    VEC_F32(avx2_##NAME##_f32, Sleef_finz_##NAME##f8_##ULP##avx2)     \
    VEC_F64(avx2_##NAME##_f64, Sleef_finz_##NAME##d4_##ULP##avx2)
EW_SLEEF_UNARY(AVX2_SLEEF)
VEC_F32(avx2_sqrt_f32, _mm256_sqrt_ps)
VEC_F64(avx2_sqrt_f64, _mm256_sqrt_pd)

/* sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|) from the
 * same exp as above: exp never overflows, so sigmoid(-100) is tiny, not 0. */
static __m256 sigmoid8(__m256 x) {
    __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    __m256 nabs = _mm256_min_ps(x, _mm256_sub_ps(zero, x));   /* -|x| (NaN passes through) */
    __m256 e = Sleef_finz_expf8_u10avx2(nabs), d = _mm256_add_ps(one, e);
    __m256 neg = _mm256_cmp_ps(x, zero, _CMP_LT_OQ);
    return _mm256_blendv_ps(_mm256_div_ps(one, d), _mm256_div_ps(e, d), neg);
}
static __m256d sigmoid4(__m256d x) {
    __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
    __m256d nabs = _mm256_min_pd(x, _mm256_sub_pd(zero, x));
    __m256d e = Sleef_finz_expd4_u10avx2(nabs), d = _mm256_add_pd(one, e);
    __m256d neg = _mm256_cmp_pd(x, zero, _CMP_LT_OQ);
    return _mm256_blendv_pd(_mm256_div_pd(one, d), _mm256_div_pd(e, d), neg);
}
VEC_F32(avx2_sigmoid_f32, sigmoid8)
VEC_F64(avx2_sigmoid_f64, sigmoid4)

/* Two operands, as vecloop.h's VEC2. */
static VEC2(avx2_atan2_f32, float, 8, __m256, _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps,
     Sleef_finz_atan2f8_u10avx2)
static VEC2(avx2_atan2_f64, double, 4, __m256d, _mm256_loadu_pd, _mm256_set1_pd, _mm256_storeu_pd,
     Sleef_finz_atan2d4_u10avx2)

/* Dispatch: AVX-512 when the processor has it, decided once per process (pthread_once),
 * read-only afterwards. */
static int cpu_avx512;
static int force_avx2;   /* tests only (vm_force_avx2), set while no other thread runs kernels */
static atomic_bool detected;   /* set (release) once cpu_avx512 holds the answer */
static void detect_avx512(void) {
    cpu_avx512 = __builtin_cpu_supports("avx512f") && !getenv("TSL_NO_AVX512");
    atomic_store_explicit(&detected, true, memory_order_release);
}
static int has_avx512(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!atomic_load_explicit(&detected, memory_order_acquire))   /* skips the call once known */
        pthread_once(&once, detect_avx512);
    return cpu_avx512 && !force_avx2;
}
bool cpu_has_avx512(void) { return has_avx512(); }
#define DISPATCH(NAME, T)                                                        \
    static void sleef_##NAME(const T *x, T *y, int64_t n) {                      \
        if (has_avx512()) avx512_##NAME(x, y, n);                                \
        else avx2_##NAME(x, y, n);                                               \
    }

/* Past these |x| (f32, f64), safely inside SLEEF's good range, libm computes the elements
 * of the libm_past functions (cpu.h): a little further on SLEEF gives inf where the result
 * is finite. Rare, and a function of the value alone, so chunks and paths still agree. */
#define LIBM_PAST_sinh 88.5f, 709.0
#define LIBM_PAST_cosh 88.5f, 709.0
#define LIBM_PAST_asinh 1e18f, 1e150
#define LIBM_PAST_acosh 1e18f, 1e150
#define LIBM_PAST_log1p 1e30f, 1e300
#define BOUND_F32(F32, F64) F32
#define BOUND_F64(F32, F64) F64
#define CALL(M, ...) M(__VA_ARGS__)

/* sleef(x) into y, then libm(x[i]) where |x[i]| > bound; in blocks, since y may be x. */
#define RANGED(NAME, T)                                                                          \
    static void NAME(void (*sleef)(const T *, T *, int64_t), T (*libm)(T), T bound, const T *x, \
                     T *y, int64_t n) {                                                         \
        enum { B = 512 };                                                                       \
        T big[B];                                                                               \
        int at[B];                                                                              \
        for (int64_t i = 0; i < n; i += B) {                                                    \
            int m = n - i < B ? (int)(n - i) : B, nbig = 0;                                     \
            for (int j = 0; j < m; j++)                                                         \
                if (x[i + j] > bound || x[i + j] < -bound) big[nbig] = x[i + j], at[nbig++] = j; \
            sleef(x + i, y + i, m);                                                             \
            for (int k = 0; k < nbig; k++) y[i + at[k]] = libm(big[k]);                         \
        }                                                                                       \
    }
RANGED(ranged_f32, float)
RANGED(ranged_f64, double)

#define PUBLIC_sleef_only(NAME)                                                                 \
    void vm_##NAME##_f32(const float *x, float *y, int64_t n) { sleef_##NAME##_f32(x, y, n); }  \
    void vm_##NAME##_f64(const double *x, double *y, int64_t n) { sleef_##NAME##_f64(x, y, n); }
#define PUBLIC_libm_past(NAME)                                                              \
    void vm_##NAME##_f32(const float *x, float *y, int64_t n) {                             \
        ranged_f32(sleef_##NAME##_f32, NAME##f, CALL(BOUND_F32, LIBM_PAST_##NAME), x, y, n); \
    }                                                                                       \
    void vm_##NAME##_f64(const double *x, double *y, int64_t n) {                           \
        ranged_f64(sleef_##NAME##_f64, NAME, CALL(BOUND_F64, LIBM_PAST_##NAME), x, y, n);    \
    }
#define PUBLIC(NAME, ULP, NANBITS, RANGE) \
    DISPATCH(NAME##_f32, float) DISPATCH(NAME##_f64, double) PUBLIC_##RANGE(NAME)
EW_SLEEF_UNARY(PUBLIC)
PUBLIC(sqrt, exact, nan_keep, sleef_only)
PUBLIC(sigmoid, u10, nan_keep, sleef_only)

#define DISPATCH2(NAME, T)                                                            \
    void vm_##NAME(const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) { \
        if (has_avx512()) avx512_##NAME(a, sa, b, sb, y, n);                          \
        else avx2_##NAME(a, sa, b, sb, y, n);                                         \
    }
DISPATCH2(atan2_f32, float)
DISPATCH2(atan2_f64, double)

/* Forces the AVX2 path (tests compare the two). */
void vm_force_avx2(int on) { force_avx2 = on; }
