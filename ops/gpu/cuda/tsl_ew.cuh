/* tsl_ew.cuh - the hand-written part of every generated CUDA module's prelude: the dtype
 * names, NaN, and the helpers the element functions and kernels share. The element function
 * of each op (tsl_add, tsl_exp, ...) is generated from ops/ew.def by ops/gen/ewgen.c; this
 * file is embedded next to them at build time (build/ew_cuda.h) and compiled by NVRTC, or
 * as host C++ by the stand-in device (tests/gpu/hostdev.sh). */
typedef unsigned char tsl_b8;
typedef long long tsl_i64;
typedef unsigned long long tsl_u64;
#define TSL_NAN_F __int_as_float(0x7fc00000)
#define TSL_NAN_D __longlong_as_double(0x7ff8000000000000LL)

/* NumPy's around: p is 10^|decimals| as the CPU computes it (exact up to 10^22), q whether
 * decimals >= 0 (ops/cpu/ew.c's cpu_round_decimals) */
__device__ __forceinline__ float tsl_round(float x, double p, int q) {
  float pf = (float)p; return p == 1 ? rintf(x) : q ? rintf(x * pf) / pf : rintf(x / pf) * pf; }
__device__ __forceinline__ double tsl_round(double x, double p, int q) {
  return p == 1 ? rint(x) : q ? rint(x * p) / p : rint(x / p) * p; }
/* integers as the CPU's round_i64: to a multiple of 10^k, ties to the even multiple,
 * exactly; 10^k past twice i64's range rounds everything to 0; bool: unchanged, or all
 * false for decimals < 0 */
__device__ __forceinline__ tsl_i64 tsl_round(tsl_i64 x, double p, int q) {
  if (q || p == 1) return x; if (p >= 18446744073709551616.0) return 0;
  tsl_u64 d = (tsl_u64)p, m = x < 0 ? 0 - (tsl_u64)x : (tsl_u64)x, quo = m / d, rem = m % d;
  if (rem > d - rem || (rem == d - rem && (quo & 1))) quo++;
  tsl_u64 r = quo * d; return x < 0 ? (tsl_i64)(0 - r) : (tsl_i64)r; }
__device__ __forceinline__ tsl_b8 tsl_round(tsl_b8 x, double p, int q) { return q ? x : 0; }

/* a number operand in the compute dtype: a truth value is any non-zero number (NaN
 * included), as the CPU's astype */
template <typename T> __device__ __forceinline__ T tsl_num(double v) { return (T)v; }
template <> __device__ __forceinline__ tsl_b8 tsl_num<tsl_b8>(double v) { return v != 0; }
__device__ __forceinline__ long long tsl_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long tsl_nthreads() { return (long long)gridDim.x * blockDim.x; }
