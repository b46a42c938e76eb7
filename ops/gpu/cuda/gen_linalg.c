/* gen_linalg.c - the integer matmul kernel's source (see gen_linalg.h). */
#include "gen_linalg.h"

#define STR_(...) #__VA_ARGS__
#define STR(...) STR_(__VA_ARGS__)

static const char source[] =
    "struct TslImatmulArgs { " STR(GEN_IMATMUL_ARGS_FIELDS) " };\n"
    /* one thread per result element: its batch index picks a's and b's matrices, then the
     * dot product in unsigned 64-bit arithmetic (wraps as i64 does everywhere in TSL) */
    "extern \"C\" __global__ void tsl_imatmul(TslImatmulArgs a) {\n"
    "  for (long long t = tsl_tid(); t < a.total; t += tsl_nthreads()) {\n"
    "    long long mn = a.m * a.n, bi = t / mn, r = t % mn, i = r / a.n, j = r % a.n, oa = 0, ob = 0;\n"
    "    for (int d = a.nbd - 1; d >= 0; d--) { long long q = bi % a.bshape[d]; bi /= a.bshape[d];\n"
    "      oa += q * a.astr[d]; ob += q * a.bstr[d]; }\n"
    "    const long long *x = (const long long *)a.a + oa, *y = (const long long *)a.b + ob;\n"
    "    tsl_u64 s = 0;\n"
    "    for (long long p = 0; p < a.k; p++)\n"
    "      s += (tsl_u64)x[a.ta ? p * a.m + i : i * a.k + p] * (tsl_u64)y[p * a.n + j];\n"
    "    ((long long *)a.c)[t] = (long long)s; } }\n"
    /* around cuSOLVER (ops/gpu/cuda/solver.c); matrices column-major, one after another */
    /* det from getrf's LU and pivots as the CPU's lu_det: 0 for a singular matrix (info > 0),
     * else the product of u's diagonal in f64, negated for each row swap */
    "template <typename T> __device__ void det_kernel(const T *lu, const int *ipiv, const int *info, long long n,\n"
    "    long long batch, T *out) {\n"
    "  for (long long b = tsl_tid(); b < batch; b += tsl_nthreads()) {\n"
    "    double d = 1;\n"
    "    if (info[b] > 0) d = 0;\n"
    "    else for (long long i = 0; i < n; i++) { d *= (double)lu[b * n * n + i * n + i]; if (ipiv[b * n + i] != i + 1) d = -d; }\n"
    "    out[b] = (T)d; } }\n"
    /* identity matrices (inv solves against them) */
    "template <typename T> __device__ void eye_kernel(T *x, long long n, long long total) {\n"
    "  for (long long t = tsl_tid(); t < total; t += tsl_nthreads()) { long long r = t % (n * n); x[t] = r / n == r % n ? (T)1 : (T)0; } }\n"
    /* cholesky: potrf leaves the strict upper triangle as it found it; zero it */
    "template <typename T> __device__ void tril_kernel(T *x, long long n, long long total) {\n"
    "  for (long long t = tsl_tid(); t < total; t += tsl_nthreads()) { long long r = t % (n * n); if (r % n < r / n) x[t] = 0; } }\n"
    /* qr: r (row-major k x n per matrix) from the upper triangle geqrf leaves in a (m x n) */
    "template <typename T> __device__ void qr_r_kernel(const T *a, long long m, long long n, long long k, long long batch, T *r) {\n"
    "  for (long long t = tsl_tid(); t < batch * k * n; t += tsl_nthreads()) {\n"
    "    long long b = t / (k * n), q = t % (k * n), p = q / n, j = q % n;\n"
    "    r[t] = j >= p ? a[b * m * n + j * m + p] : (T)0; } }\n"
    "#define TSL_LINALG(T, S) \\\n"
    "  extern \"C\" __global__ void tsl_det_##S(const T *lu, const int *ipiv, const int *info, long long n, long long batch, T *out) \\\n"
    "  { det_kernel<T>(lu, ipiv, info, n, batch, out); } \\\n"
    "  extern \"C\" __global__ void tsl_eye_##S(T *x, long long n, long long total) { eye_kernel<T>(x, n, total); } \\\n"
    "  extern \"C\" __global__ void tsl_tril_##S(T *x, long long n, long long total) { tril_kernel<T>(x, n, total); } \\\n"
    "  extern \"C\" __global__ void tsl_qr_r_##S(const T *a, long long m, long long n, long long k, long long batch, T *r) \\\n"
    "  { qr_r_kernel<T>(a, m, n, k, batch, r); }\n"
    "TSL_LINALG(float, f32) TSL_LINALG(double, f64)\n";

const char *gen_linalg_source(void) { return source; }
