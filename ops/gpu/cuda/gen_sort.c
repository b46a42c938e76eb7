/* gen_sort.c - the ordering and padding kernels' source (see gen_sort.h). */
#include "gen_sort.h"

#define STR_(...) #__VA_ARGS__
#define STR(...) STR_(__VA_ARGS__)

static const char source[] =
    "struct TslPadArgs { " STR(GEN_PAD_ARGS_FIELDS) " };\n"
    /* the CPU's sort keys (ops/cpu/axis.c key_at): IEEE order as unsigned integers */
    "__device__ __forceinline__ tsl_u64 tsl_key_f64(double x) {\n"
    "  if (x != x) return ~0ull;\n"
    "  if (x == 0) x = 0;\n"
    "  tsl_u64 b = (tsl_u64)__double_as_longlong(x);\n"
    "  return (b >> 63) ? ~b : (b | (1ull << 63)); }\n"
    "__device__ __forceinline__ tsl_u64 tsl_key(tsl_b8 x) { return x != 0; }\n"
    "__device__ __forceinline__ tsl_u64 tsl_key(tsl_i64 x) { return (tsl_u64)x ^ (1ull << 63); }\n"
    "__device__ __forceinline__ tsl_u64 tsl_key(float x) { return tsl_key_f64((double)x); }\n"
    "__device__ __forceinline__ tsl_u64 tsl_key(double x) { return tsl_key_f64(x); }\n"
    /* line (o, i) of [outer, n, inner] becomes row o * inner + i of P (key, position) pairs;
     * the P - n pads sort after everything (largest key, largest position) */
    "template <typename T> __device__ void sort_keys(const T *in, long long outer, long long n, long long inner,\n"
    "    long long P, tsl_u64 flip, tsl_u64 *key, tsl_i64 *pos) {\n"
    "  long long total = outer * inner * P;\n"
    "  for (long long t = tsl_tid(); t < total; t += tsl_nthreads()) {\n"
    "    long long line = t / P, j = t % P, o = line / inner, i = line % inner;\n"
    "    if (j < n) { key[t] = tsl_key(in[(o * n + j) * inner + i]) ^ flip; pos[t] = j; }\n"
    "    else { key[t] = ~0ull; pos[t] = 0x7fffffffffffffffLL; } } }\n"
    "#define TSL_SORT_KEYS(T, S) extern \"C\" __global__ void tsl_sort_keys_##S(const T *in, long long outer, \\\n"
    "    long long n, long long inner, long long P, tsl_u64 flip, tsl_u64 *key, tsl_i64 *pos) \\\n"
    "  { sort_keys<T>(in, outer, n, inner, P, flip, key, pos); }\n"
    "TSL_SORT_KEYS(tsl_b8, b8) TSL_SORT_KEYS(tsl_i64, i64) TSL_SORT_KEYS(float, f32) TSL_SORT_KEYS(double, f64)\n"
    /* one compare-exchange step (k, j) of the bitonic network on every row of P pairs at
     * once (j < P: a pair never leaves its row); each pair (t, t ^ j) belongs to the thread
     * of its lower index */
    "extern \"C\" __global__ void tsl_sort_step(tsl_u64 *key, tsl_i64 *pos, long long total, long long P, long long k, long long j) {\n"
    "  for (long long t = tsl_tid(); t < total; t += tsl_nthreads()) {\n"
    "    long long l = t ^ j;\n"
    "    if (l <= t) continue;\n"
    "    bool up = ((t % P) & k) == 0;\n"
    "    tsl_u64 ka = key[t], kb = key[l]; tsl_i64 pa = pos[t], pb = pos[l];\n"
    "    bool greater = ka > kb || (ka == kb && pa > pb);\n"
    "    if (greater == up) { key[t] = kb; key[l] = ka; pos[t] = pb; pos[l] = pa; } } }\n"
    /* the same network's steps that stay inside a tile of 512 pairs, in shared memory: for k
     * from kfirst to klast, j from min(k / 2, 256) down to 1 (the tile's own half-size), one
     * launch instead of one per step. A tile never splits a row's pair (rows are P long, P a
     * power of two, tiles 512-aligned); pairs past total are padding that pairs only with
     * padding. Any block size: each thread takes pairs i, i + blockDim.x, ... */
    "extern \"C\" __global__ void tsl_sort_tile(tsl_u64 *key, tsl_i64 *pos, long long total, long long P,\n"
    "    long long kfirst, long long klast) {\n"
    "  __shared__ tsl_u64 sk[512]; __shared__ tsl_i64 sp[512];\n"
    "  for (long long base = (long long)blockIdx.x * 512; base < total; base += (long long)gridDim.x * 512) {\n"
    "    for (int e = threadIdx.x; e < 512; e += blockDim.x) {\n"
    "      long long t = base + e;\n"
    "      sk[e] = t < total ? key[t] : ~0ull; sp[e] = t < total ? pos[t] : 0x7fffffffffffffffLL; }\n"
    "    __syncthreads();\n"
    "    for (long long k = kfirst; k <= klast; k <<= 1)\n"
    "      for (int j = (k >> 1) < 256 ? (int)(k >> 1) : 256; j > 0; j >>= 1) {\n"
    "        for (int i = threadIdx.x; i < 256; i += blockDim.x) {\n"
    "          int a = 2 * j * (i / j) + i % j, b = a + j;\n"
    "          bool up = (((base + a) % P) & k) == 0;\n"
    "          tsl_u64 ka = sk[a], kb = sk[b]; tsl_i64 pa = sp[a], pb = sp[b];\n"
    "          bool greater = ka > kb || (ka == kb && pa > pb);\n"
    "          if (greater == up) { sk[a] = kb; sk[b] = ka; sp[a] = pb; sp[b] = pa; } }\n"
    "        __syncthreads(); }\n"
    "    for (int e = threadIdx.x; e < 512; e += blockDim.x) {\n"
    "      long long t = base + e;\n"
    "      if (t < total) { key[t] = sk[e]; pos[t] = sp[e]; } }\n"
    "    __syncthreads(); } }\n"
    /* the first kout of each sorted row: values (may be NULL) and positions (may be NULL)
     * into [outer, kout, inner] */
    "template <typename E> __device__ void sort_write(const E *in, const tsl_i64 *pos, long long outer, long long n,\n"
    "    long long inner, long long P, long long kout, E *vals, tsl_i64 *idx) {\n"
    "  long long total = outer * kout * inner;\n"
    "  for (long long t = tsl_tid(); t < total; t += tsl_nthreads()) {\n"
    "    long long o = t / (kout * inner), r = t % (kout * inner), p = r / inner, i = r % inner;\n"
    "    tsl_i64 j = pos[(o * inner + i) * P + p];\n"
    "    if (vals) vals[t] = in[(o * n + j) * inner + i];\n"
    "    if (idx) idx[t] = j; } }\n"
    "#define TSL_SORT_WRITE(E, S) extern \"C\" __global__ void tsl_sort_write_##S(const E *in, const tsl_i64 *pos, \\\n"
    "    long long outer, long long n, long long inner, long long P, long long kout, E *vals, tsl_i64 *idx) \\\n"
    "  { sort_write<E>(in, pos, outer, n, inner, P, kout, vals, idx); }\n"
    "TSL_SORT_WRITE(unsigned char, 1) TSL_SORT_WRITE(unsigned int, 4) TSL_SORT_WRITE(unsigned long long, 8)\n"
    /* unique over one sorted row: 1 where a key starts (the first of equals, the lowest
     * position: the CPU keeps the first in input order), its running count, then the writes */
    "extern \"C\" __global__ void tsl_unique_flags(const tsl_u64 *key, long long n, tsl_i64 *rank) {\n"
    "  for (long long t = tsl_tid(); t < n; t += tsl_nthreads()) rank[t] = t == 0 || key[t] != key[t - 1]; }\n"
    /* inclusive running sum in place, by ONE block: each thread sums a contiguous chunk, a
     * shared-memory scan of the chunk sums, then each thread rewrites its chunk */
    "extern \"C\" __global__ void tsl_unique_scan(tsl_i64 *x, long long n) {\n"
    "  __shared__ tsl_i64 part[1024];\n"
    "  if (blockIdx.x != 0 || blockDim.x > 1024) return;\n"
    "  long long per = (n + blockDim.x - 1) / blockDim.x, lo = threadIdx.x * per, hi = lo + per < n ? lo + per : n;\n"
    "  tsl_i64 s = 0;\n"
    "  for (long long p = lo; p < hi; p++) s += x[p];\n"
    "  part[threadIdx.x] = s; __syncthreads();\n"
    "  for (unsigned d = 1; d < blockDim.x; d <<= 1) {\n"
    "    tsl_i64 v = threadIdx.x >= d ? part[threadIdx.x - d] : 0; __syncthreads();\n"
    "    part[threadIdx.x] += v; __syncthreads(); }\n"
    "  tsl_i64 run = threadIdx.x ? part[threadIdx.x - 1] : 0;\n"
    "  for (long long p = lo; p < hi; p++) { run += x[p]; x[p] = run; } }\n"
    "template <typename E> __device__ void unique_write(const E *in, const tsl_u64 *key, const tsl_i64 *pos,\n"
    "    const tsl_i64 *rank, long long n, E *out) {\n"
    "  for (long long t = tsl_tid(); t < n; t += tsl_nthreads())\n"
    "    if (t == 0 || key[t] != key[t - 1]) out[rank[t] - 1] = in[pos[t]]; }\n"
    "#define TSL_UNIQUE_WRITE(E, S) extern \"C\" __global__ void tsl_unique_write_##S(const E *in, const tsl_u64 *key, \\\n"
    "    const tsl_i64 *pos, const tsl_i64 *rank, long long n, E *out) { unique_write<E>(in, key, pos, rank, n, out); }\n"
    "TSL_UNIQUE_WRITE(unsigned char, 1) TSL_UNIQUE_WRITE(unsigned int, 4) TSL_UNIQUE_WRITE(unsigned long long, 8)\n"
    /* pad: each output element is the fill value or the input element it lands on */
    "template <typename E> __device__ void pad_kernel(TslPadArgs a) {\n"
    "  const E *in = (const E *)a.in; E *out = (E *)a.out; E v = (E)a.value;\n"
    "  for (long long t = tsl_tid(); t < a.n; t += tsl_nthreads()) {\n"
    "    long long r = t, src = 0, step = 1; bool inside = true;\n"
    "    for (int d = a.ndim - 1; d >= 0; d--) {\n"
    "      long long q = r % a.oshape[d] - a.before[d]; r /= a.oshape[d];\n"
    "      if (q < 0 || q >= a.ishape[d]) { inside = false; break; }\n"
    "      src += q * step; step *= a.ishape[d]; }\n"
    "    out[t] = inside ? in[src] : v; } }\n"
    "extern \"C\" __global__ void tsl_pad_1(TslPadArgs a) { pad_kernel<unsigned char>(a); }\n"
    "extern \"C\" __global__ void tsl_pad_4(TslPadArgs a) { pad_kernel<unsigned int>(a); }\n"
    "extern \"C\" __global__ void tsl_pad_8(TslPadArgs a) { pad_kernel<unsigned long long>(a); }\n";

const char *gen_sort_source(void) { return source; }
