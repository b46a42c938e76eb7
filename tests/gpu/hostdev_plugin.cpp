// hostdev_plugin.cpp - a stand-in for bin/libtsl_cuda.so whose "device" is host memory, for
// checking the GPU's HOST side (ops/gpu/*.c, the op core's device handling) on a machine
// without a GPU: tests/gpu/hostdev.sh appends this to tests/gpu/hostdev_shim.h and the source of
// every kernel the plugin launches (the prelude, the families, each elementwise kernel, the
// sort/pad and i64-matmul / cuSOLVER-aid modules: emit_kernels all), builds a shared object
// and runs the parity cases with TSL_CUDA_PLUGIN pointing at it. The entries do what
// ops/gpu/cuda/cuda_kernels.c, sort.c, linalg.c and solver.c do around those kernels (flags,
// bad positions, launch sequences); gemm is a triple loop and solve calls LAPACK with
// cuSOLVER's column-major contract. Fused chains (compiled per graph) and NCCL fail with
// "host-memory stand-in plugin: ...".
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#include <lapack.h>
#include "cuda/plugin.h"

// the op table's codes and the dtypes (opcall.h and tensor.h are C, not C++)
enum {
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) OP_##id,
#include "ops.def"
#undef OP
    OP__COUNT
};
enum { DT_BOOL, DT_I64, DT_F32, DT_F64 };

#define NO(what) (std::snprintf(err, n, "host-memory stand-in plugin: no %s", what), -1)

// ---------- the stream, and CUDA Graph capture emulated on it ----------
// Outside a capture the stand-in's stream is synchronous: stream work runs at once. While a
// capture is under way (capture_begin .. capture_end, cudaStreamCaptureModeRelaxed as
// ops/gpu/cuda/graph.c asks) stream work is RECORDED, not run, with its kernel arguments built
// and copied by value now, as a CUDA Graph bakes a kernel's parameters (device addresses
// included); graph_launch replays the list in order. What CUDA refuses on a capturing stream
// (a synchronize; a copy to or from pageable host memory, which the real plugin follows with
// a synchronize: so every entry that reads a result back on the host) fails with CUDA's error
// and invalidates the capture: later stream work fails too, and capture_end reports
// cudaErrorStreamCaptureInvalidated, as cudaStreamEndCapture does. Allocation is allowed
// (relaxed mode); a block freed while capturing is kept for the graph, as cuda_capture_keep
// does, so no later allocation reuses an address the graph's kernels bake.
typedef std::function<int(char *, size_t)> Work;
struct HostdevGraph {
    std::vector<Work> work;
    std::vector<void *> kept;
};
static std::mutex cap_lock;   // the kept list: free may come from another thread
static bool capturing, invalidated;
static HostdevGraph *rec;     // what the capture under way recorded

#define CAPTURE_INVALIDATED "operation failed due to a previous error during capture"
static int stream(Work w, char *err, size_t n) {
    if (!capturing) return w(err, n);
    if (invalidated) return std::snprintf(err, n, "CUDA error in a launch: " CAPTURE_INVALIDATED), -1;
    rec->work.push_back(std::move(w));
    return 0;
}
// An entry that waits for the stream (what: the CUDA call the real plugin makes): refused
// while capturing, which invalidates the capture
static int host_wait(const char *what, char *err, size_t n) {
    if (!capturing) return 0;
    invalidated = true;
    std::snprintf(err, n, "CUDA error in %s: operation not permitted when stream is capturing", what);
    return -1;
}

static int hostdev_init(char *, size_t) { return CUDA_OK; }
static int hostdev_alloc(void **p, size_t bytes, char *err, size_t n) {
    *p = std::calloc(bytes ? bytes : 1, 1);
    return *p ? 0 : NO("memory");
}
static void hostdev_free(void *p, size_t) {
    if (!p) return;
    {
        std::lock_guard<std::mutex> hold(cap_lock);
        if (capturing) { rec->kept.push_back(p); return; }
    }
    std::free(p);
}
static void hostdev_stats(int64_t *m, int64_t *c) { *m = 0; *c = 0; }
static int hostdev_to(void *dst, const void *src, size_t bytes, char *err, size_t n) {
    if (!bytes) return 0;
    if (host_wait("cudaMemcpy", err, n)) return -1;   // a host copy, then a synchronize
    std::memmove(dst, src, bytes);
    return 0;
}
static int hostdev_copy(void *dst, const void *src, size_t bytes, char *err, size_t n) {
    if (!bytes) return 0;
    return stream([=](char *, size_t) { std::memmove(dst, src, bytes); return 0; }, err, n);
}
static int hostdev_copy2d(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, char *err, size_t n) {
    if (!w || !h) return 0;
    return stream([=](char *, size_t) {
        for (size_t r = 0; r < h; r++) std::memmove((char *)dst + r * dp, (const char *)src + r * sp, w);
        return 0;
    }, err, n);
}
static int hostdev_sync(char *err, size_t n) { return host_wait("cudaStreamSynchronize", err, n); }

static size_t esize(int dt) { return dt == DT_BOOL ? 1 : dt == DT_F32 ? 4 : 8; }
static double get(const void *p, int dt, int64_t i) {
    switch (dt) {
    case DT_BOOL: return ((const unsigned char *)p)[i];
    case DT_I64: return (double)((const long long *)p)[i];
    case DT_F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}
static void put(void *p, int dt, int64_t i, double x) {
    switch (dt) {
    case DT_BOOL: ((unsigned char *)p)[i] = x != 0; break;
    case DT_I64: ((long long *)p)[i] = (long long)x; break;
    case DT_F32: ((float *)p)[i] = (float)x; break;
    default: ((double *)p)[i] = x;
    }
}

static int flag, flag_bad;
static unsigned long long badk;

// ops/gpu/cuda/cuda_kernels.c cuda_ew: the generated kernel of (op, ct, form), i64 errors raised
static int hostdev_has_ew(int op, int ct) { return op >= 0 && op < OP__COUNT && ct >= 0 && ct < 4 && ew_fn[op][ct][0]; }
// ops/gpu/cuda/cuda_kernels.c raises(): the integer kernels whose flag the host reads back
static bool raises(int op, int ct) { return ct == DT_I64 && (op == OP_FLOOR_DIVIDE || op == OP_MOD || op == OP_POW); }

// An elementwise kernel's error flag as cuda_kernels.c reports it: 1 to 3, the integer errors.
static int raised_error(int f, char *e, size_t en) {
    static const char *const msg[] = { "", "integer division by zero", "integer modulo by zero",
                                       "integers to negative integer powers are not allowed" };
    if (f >= 1 && f <= 3) return std::snprintf(e, en, "%s", msg[f]), -1;
    return 0;
}
static int hostdev_ew(const CudaEw *j, char *err, size_t n) {
    if (!hostdev_has_ew(j->op, j->ct)) return NO("kernel for this elementwise op");
    if (raises(j->op, j->ct) && host_wait("a kernel", err, n)) return -1;
    TslEwArgs a;
    std::memset(&a, 0, sizeof a);
    a.n = j->n; a.ndim = j->ndim;
    for (int d = 0; d < j->ndim; d++) { a.shape[d] = j->shape[d]; a.st0[d] = j->stride[0][d]; a.st1[d] = j->stride[1][d]; }
    a.inner0 = j->inner[0]; a.inner1 = j->inner[1]; a.in0 = j->in[0]; a.in1 = j->in[1]; a.num0 = j->num[0]; a.num1 = j->num[1];
    a.p = j->p; a.q = j->q; a.out = j->out; a.bad = &flag;
    void (*kernel)(TslEwArgs) = ew_fn[j->op][j->ct][j->form == 's'];
    return stream([=](char *e, size_t en) {
        flag = 0;
        kernel(a);
        return raised_error(flag, e, en);
    }, err, n);
}

#define BY_DT(dt, F, ...) ((dt) == DT_BOOL ? F##b8(__VA_ARGS__) : (dt) == DT_I64 ? F##i64(__VA_ARGS__) : (dt) == DT_F32 ? F##f32(__VA_ARGS__) : F##f64(__VA_ARGS__))
#define BY_ESZ(esz, F, ...) ((esz) == 1 ? F##1(__VA_ARGS__) : (esz) == 4 ? F##4(__VA_ARGS__) : F##8(__VA_ARGS__))

template <typename F> static void astype_from(int dout, const F *in, void *out, long long n) {
    if (dout == DT_BOOL) astype_kernel<F, tsl_b8>(in, (tsl_b8 *)out, n, &flag);
    else if (dout == DT_I64) astype_kernel<F, tsl_i64>(in, (tsl_i64 *)out, n, &flag);
    else if (dout == DT_F32) astype_kernel<F, float>(in, (float *)out, n, &flag);
    else astype_kernel<F, double>(in, (double *)out, n, &flag);
}
static int astype_now(int di, int dout, const void *in, void *out, int64_t count, char *err, size_t n);
static int hostdev_astype(int di, int dout, const void *in, void *out, int64_t count, char *err, size_t n) {
    if (dout == DT_I64 && (di == DT_F32 || di == DT_F64) && host_wait("astype", err, n)) return -1;
    return stream([=](char *e, size_t en) { return astype_now(di, dout, in, out, count, e, en); }, err, n);
}
static int astype_now(int di, int dout, const void *in, void *out, int64_t count, char *err, size_t n) {
    flag = 0;
    if (di == DT_BOOL) astype_from(dout, (const tsl_b8 *)in, out, count);
    else if (di == DT_I64) astype_from(dout, (const tsl_i64 *)in, out, count);
    else if (di == DT_F32) astype_from(dout, (const float *)in, out, count);
    else astype_from(dout, (const double *)in, out, count);
    if (flag && dout == DT_I64 && (di == DT_F32 || di == DT_F64))
        return std::snprintf(err, n, "cannot convert %s to i64", flag == 1 ? "nan" : flag == 2 ? "inf" : "an out-of-range value"), -1;
    return 0;
}

// reductions and softmax: block kernels, 256 threads per block
static int hostdev_reduce(const CudaReduce *j, char *err, size_t n) {
    TslReduceArgs a = { j->outer, j->len, j->inner, j->in, j->out };
    void (*f)(TslReduceArgs) = nullptr;
#define RED(S) switch (j->op) { case OP_SUM: f = tsl_reduce_sum_##S; break; case OP_PROD: f = tsl_reduce_prod_##S; break; \
    case OP_MAX: f = tsl_reduce_max_##S; break; case OP_MIN: f = tsl_reduce_min_##S; break; case OP_ARGMAX: f = tsl_reduce_argmax_##S; break; \
    case OP_ARGMIN: f = tsl_reduce_argmin_##S; break; case OP_ALL: f = tsl_reduce_all_##S; break; case OP_ANY: f = tsl_reduce_any_##S; break; \
    default: break; }
    if (j->dt == DT_BOOL) { RED(b8) } else if (j->dt == DT_I64) { RED(i64) }
    else if (j->dt == DT_F32) { RED(f32) if (j->op == OP_MEAN) f = tsl_reduce_mean_f32; }
    else { RED(f64) if (j->op == OP_MEAN) f = tsl_reduce_mean_f64; }
#undef RED
    if (!f) return NO("reduction for this op and dtype");
    long long blocks = j->outer * j->inner;
    return stream([=](char *, size_t) { emul_blocks(blocks, [&] { f(a); }); return 0; }, err, n);
}
static int hostdev_softmax(int op, int dt, const void *in, void *out, int64_t rows, int64_t len, char *err, size_t n) {
    TslReduceArgs a = { rows, len, 1, in, out };
    void (*f)(TslReduceArgs) = op == OP_LOG_SOFTMAX ? (dt == DT_F32 ? tsl_log_softmax_f32 : tsl_log_softmax_f64)
                                                    : (dt == DT_F32 ? tsl_softmax_f32 : tsl_softmax_f64);
    return stream([=](char *, size_t) { emul_blocks(rows, [&] { f(a); }); return 0; }, err, n);
}
static int hostdev_gather(int esz, int ndim, const int64_t *shape, const int64_t *stride, const void *in, void *out,
                       int64_t count, char *err, size_t n) {
    TslGatherArgs a;
    std::memset(&a, 0, sizeof a);
    a.n = count; a.ndim = ndim;
    for (int d = 0; d < ndim; d++) { a.shape[d] = shape[d]; a.stride[d] = stride[d]; }
    a.in = in; a.out = out;
    return stream([=](char *, size_t) { BY_ESZ(esz, tsl_gather_, a); return 0; }, err, n);
}
static int hostdev_where(int esz, int ndim, const int64_t *shape, const int64_t (*stride)[TSL_CUDA_MAX_RANK], const void *cond,
                      const void *x, const void *y, void *out, int64_t count, char *err, size_t n) {
    TslWhereArgs w;
    std::memset(&w, 0, sizeof w);
    w.n = count; w.ndim = ndim;
    for (int d = 0; d < ndim; d++) { w.shape[d] = shape[d]; w.st0[d] = stride[0][d]; w.st1[d] = stride[1][d]; w.st2[d] = stride[2][d]; }
    w.cond = cond; w.a = x; w.b = y; w.out = out;
    return stream([=](char *, size_t) { BY_ESZ(esz, tsl_where_, w); return 0; }, err, n);
}
static int hostdev_lines(int kind, int dt, int64_t outer, int64_t len, int64_t inner, int64_t step, const void *in, void *out,
                      char *err, size_t n) {
    TslLineArgs a = { outer, len, inner, step, in, out };
    return stream([=](char *, size_t) {
        if (kind == 0) BY_DT(dt, tsl_cumsum_, a);
        else if (kind == 1) BY_DT(dt, tsl_cumprod_, a);
        else BY_DT(dt, tsl_trace_, a);
        return 0;
    }, err, n);
}
static int badk_read(int64_t *bad_k) {
    if (badk == ~0ull) return 0;
    *bad_k = (int64_t)badk;
    return 1;
}
static int hostdev_take(int esz, const void *t, int64_t nt, const int64_t *idx, void *out, int64_t count, int64_t *bad_k, char *err, size_t n) {
    if (host_wait("a kernel's bad position", err, n)) return -1;   // cuda_kernels.c badk_read
    badk = ~0ull;
    if (esz == 1) tsl_take_1((const unsigned char *)t, nt, (const tsl_i64 *)idx, (unsigned char *)out, count, &badk);
    else if (esz == 4) tsl_take_4((const unsigned *)t, nt, (const tsl_i64 *)idx, (unsigned *)out, count, &badk);
    else tsl_take_8((const unsigned long long *)t, nt, (const tsl_i64 *)idx, (unsigned long long *)out, count, &badk);
    return badk_read(bad_k);
}
static int hostdev_scatter_add(int dt, void *y, int64_t ny, const int64_t *idx, const void *v, int64_t count, int one,
                            int64_t *bad_k, char *err, size_t n) {
    if (host_wait("a kernel's bad position", err, n)) return -1;
    badk = ~0ull;
    const tsl_i64 *ix = (const tsl_i64 *)idx;
    if (dt == DT_BOOL) tsl_scatter_add_b8((tsl_b8 *)y, ny, ix, (const tsl_b8 *)v, count, one, &badk);
    else if (dt == DT_I64) tsl_scatter_add_i64((tsl_i64 *)y, ny, ix, (const tsl_i64 *)v, count, one, &badk);
    else if (dt == DT_F32) tsl_scatter_add_f32((float *)y, ny, ix, (const float *)v, count, one, &badk);
    else tsl_scatter_add_f64((double *)y, ny, ix, (const double *)v, count, one, &badk);
    return badk_read(bad_k);
}
static int hostdev_remap(int esz, int ndim, const int64_t *shape, const int64_t *div, const int64_t *mod, const int64_t *stride,
                      const void *in, void *out, int64_t count, char *err, size_t n) {
    TslRemapArgs a;
    std::memset(&a, 0, sizeof a);
    a.n = count; a.ndim = ndim;
    for (int d = 0; d < ndim; d++) { a.shape[d] = shape[d]; a.div[d] = div[d]; a.mod[d] = mod[d]; a.stride[d] = stride[d]; }
    a.in = in; a.out = out;
    return stream([=](char *, size_t) { BY_ESZ(esz, tsl_remap_, a); return 0; }, err, n);
}
static int hostdev_one_hot(const int64_t *labels, int64_t count, int64_t n, float *out, int64_t *bad_k, char *err, size_t en) {
    if (host_wait("a kernel's bad position", err, en)) return -1;
    badk = ~0ull;
    tsl_one_hot((const tsl_i64 *)labels, count, n, out, &badk);
    return badk_read(bad_k);
}
static int hostdev_random(int kind, uint64_t key, uint64_t counter, int64_t lo, int64_t hi, void *out, int64_t count, char *err, size_t n) {
    return stream([=](char *, size_t) {
        if (kind == 0) tsl_random_uniform(key, counter, (float *)out, count);
        else if (kind == 1) tsl_random_normal(key, counter, (float *)out, count);
        else tsl_random_int(key, counter, (tsl_i64 *)out, count, lo, (uint64_t)hi - (uint64_t)lo);
        return 0;
    }, err, n);
}
// fused chains: the generator's kernel for the chain (gen.c, linked in), compiled on first
// use with the C++ compiler $TSL_HOSTDEV_CXX after $TSL_HOSTDEV_SHIM and the prelude, and dlopen'ed
extern "C" {
typedef struct { int op, dst, a, b; } HostdevGenStep;   // gen.h's GenStep (OpCode is an int enum)
int gen_fused_kernel(const HostdevGenStep *steps, int nsteps, int ninputs, int ct, char *name, size_t nn, char *src, size_t ns);
const char *gen_prelude(void);
}
static int hostdev_fused(const CudaFused *j, char *err, size_t n) {
    const char *cxx = std::getenv("TSL_HOSTDEV_CXX"), *shim = std::getenv("TSL_HOSTDEV_SHIM"), *dir = std::getenv("TSL_HOSTDEV_DIR");
    if (!cxx || !shim || !dir) return NO("fused chains (TSL_HOSTDEV_CXX, TSL_HOSTDEV_SHIM, TSL_HOSTDEV_DIR unset)");
    std::vector<HostdevGenStep> steps((size_t)j->nsteps);
    for (int k = 0; k < j->nsteps; k++) steps[k] = { j->steps[k].op, j->steps[k].dst, j->steps[k].a, j->steps[k].b };
    static char src[65536], name[8192];
    if (gen_fused_kernel(steps.data(), j->nsteps, j->nin, j->ct, name, sizeof name, src, sizeof src)) return NO("kernel for this chain");
    unsigned long long h = 1469598103934665603ull;
    for (const char *c = src; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    char base[512], cmd[2048];
    std::snprintf(base, sizeof base, "%s/fused_%016llx", dir, h);
    std::snprintf(cmd, sizeof cmd, "%s.so", base);
    void *lib = dlopen(cmd, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        char path[600];
        std::snprintf(path, sizeof path, "%s.cpp", base);
        FILE *f = std::fopen(path, "w");
        if (!f) return NO("place for a fused kernel's source");
        std::fprintf(f, "#include \"%s\"\n%s%s", shim, gen_prelude(), src);
        std::fclose(f);
        std::snprintf(cmd, sizeof cmd, "%s -std=c++20 -O1 -w -fPIC -shared -o %s.so %s.cpp", cxx, base, base);
        if (std::system(cmd) != 0) return NO("fused kernel that compiles as host C++");
        std::snprintf(cmd, sizeof cmd, "%s.so", base);
        lib = dlopen(cmd, RTLD_NOW | RTLD_LOCAL);
    }
    void (*kernel)(TslFusedArgs) = lib ? (void (*)(TslFusedArgs))dlsym(lib, name) : nullptr;
    if (!kernel) return NO("fused kernel in its library");
    TslFusedArgs a;
    std::memset(&a, 0, sizeof a);
    a.n = j->n;
    for (int k = 0; k < j->nin; k++) { a.in[k] = j->in[k]; a.inner[k] = j->inner[k]; a.num[k] = j->num[k]; }
    a.out = j->out;
    a.bad = &flag;
    bool check = false;   // cuda_fused: a raising step's flag is read back on the host
    for (int k = 0; k < j->nsteps; k++) check |= raises(j->steps[k].op, j->ct);
    if (check && host_wait("a kernel", err, n)) return -1;
    return stream([=](char *e, size_t en) {
        flag = 0;
        kernel(a);
        return raised_error(flag, e, en);
    }, err, n);
}
static int hostdev_nccl_load(void *, char *err, size_t n) { return NO("NCCL"); }
static int hostdev_nccl_init(const void *, int, int, char *err, size_t n) { return NO("NCCL"); }
static int hostdev_nccl_allgather(const void *, void *, size_t, char *err, size_t n) { return NO("NCCL"); }
static int hostdev_nccl_bcast(void *, size_t, int, char *err, size_t n) { return NO("NCCL"); }
static int hostdev_rank_combine(int, int, const void *, int, int64_t, void *, char *err, size_t n) { return NO("NCCL"); }
// plugin.h's CudaGemm: C[b] = op(A[b]) @ B[b], row-major
static int gemm_now(const CudaGemm *j) {
    for (int64_t b = 0; b < j->batch; b++)
        for (int64_t i = 0; i < j->m; i++)
            for (int64_t c = 0; c < j->n; c++) {
                double s = 0;
                for (int64_t p = 0; p < j->k; p++)
                    s += get(j->a, j->dt, b * j->a_stride + (j->trans_a ? p * j->m + i : i * j->k + p)) *
                         get(j->b, j->dt, b * j->b_stride + p * j->n + c);
                put(j->c, j->dt, (b * j->m + i) * j->n + c, s);
            }
    return 0;
}
static int hostdev_gemm(const CudaGemm *j, char *err, size_t n) {
    CudaGemm v = *j;
    return stream([=](char *, size_t) { return gemm_now(&v); }, err, n);
}

// ops/gpu/cuda/sort.c's sequences on the real kernels
static void sort_rows(int dt, const void *in, int64_t outer, int64_t len, int64_t inner, int desc, int64_t P,
                      uint64_t *key, int64_t *pos) {
    long long o = outer, l = len, i = inner, p = P, total = outer * inner * P;
    unsigned long long flip = desc ? ~0ull : 0;
    tsl_u64 *k = (tsl_u64 *)key;
    tsl_i64 *q = (tsl_i64 *)pos;
    if (dt == DT_BOOL) tsl_sort_keys_b8((const tsl_b8 *)in, o, l, i, p, flip, k, q);
    else if (dt == DT_I64) tsl_sort_keys_i64((const tsl_i64 *)in, o, l, i, p, flip, k, q);
    else if (dt == DT_F32) tsl_sort_keys_f32((const float *)in, o, l, i, p, flip, k, q);
    else tsl_sort_keys_f64((const double *)in, o, l, i, p, flip, k, q);
    const long long T = 512, tiles = (total + T - 1) / T;   // ops/gpu/cuda/sort.c's sequence
    if (P > 1) emul_blocks(tiles, [&] { tsl_sort_tile(k, q, total, p, 2, P < T ? P : T); });
    for (long long kk = 2 * T; kk <= P; kk <<= 1) {
        for (long long jj = kk >> 1; jj >= T; jj >>= 1) tsl_sort_step(k, q, total, p, kk, jj);
        emul_blocks(tiles, [&] { tsl_sort_tile(k, q, total, p, kk, kk); });
    }
}
static int hostdev_sort(int dt, const void *in, int64_t outer, int64_t len, int64_t inner, int desc, int64_t kout, void *vals,
                     int64_t *idx, uint64_t *key, int64_t *pos, int64_t P, char *err, size_t n) {
    if ((P & (P - 1)) || P < len || kout > len) return NO("sort of these arguments");
    if (outer * inner == 0 || len == 0 || kout == 0) return 0;
    return stream([=](char *, size_t) {
        sort_rows(dt, in, outer, len, inner, desc, P, key, pos);
        long long o = outer, l = len, i = inner, p = P, k = kout;
        size_t es = esize(dt);
        if (es == 1) tsl_sort_write_1((const unsigned char *)in, (tsl_i64 *)pos, o, l, i, p, k, (unsigned char *)vals, (tsl_i64 *)idx);
        else if (es == 4) tsl_sort_write_4((const unsigned *)in, (tsl_i64 *)pos, o, l, i, p, k, (unsigned *)vals, (tsl_i64 *)idx);
        else tsl_sort_write_8((const unsigned long long *)in, (tsl_i64 *)pos, o, l, i, p, k, (unsigned long long *)vals, (tsl_i64 *)idx);
        return 0;
    }, err, n);
}
static int hostdev_unique(int dt, const void *in, int64_t count, void *out, int64_t *m, uint64_t *key, int64_t *pos,
                       int64_t *rank, int64_t P, char *err, size_t n) {
    *m = 0;
    if ((P & (P - 1)) || P < count) return NO("unique of these arguments");
    if (count == 0) return 0;
    if (host_wait("unique's count", err, n)) return -1;   // sort.c reads the count back
    sort_rows(dt, in, 1, count, 1, 0, P, key, pos);
    long long c = count;
    tsl_unique_flags((tsl_u64 *)key, c, (tsl_i64 *)rank);
    tsl_unique_scan((tsl_i64 *)rank, c);
    size_t es = esize(dt);
    if (es == 1) tsl_unique_write_1((const unsigned char *)in, (tsl_u64 *)key, (tsl_i64 *)pos, (tsl_i64 *)rank, c, (unsigned char *)out);
    else if (es == 4) tsl_unique_write_4((const unsigned *)in, (tsl_u64 *)key, (tsl_i64 *)pos, (tsl_i64 *)rank, c, (unsigned *)out);
    else tsl_unique_write_8((const unsigned long long *)in, (tsl_u64 *)key, (tsl_i64 *)pos, (tsl_i64 *)rank, c, (unsigned long long *)out);
    *m = rank[count - 1];
    return 0;
}
static int hostdev_pad(int esz, int ndim, const int64_t *oshape, const int64_t *ishape, const int64_t *before, const void *value,
                    const void *in, void *out, int64_t count, char *err, size_t n) {
    TslPadArgs a;
    std::memset(&a, 0, sizeof a);
    a.n = count;
    a.ndim = ndim;
    for (int d = 0; d < ndim; d++) { a.oshape[d] = oshape[d]; a.ishape[d] = ishape[d]; a.before[d] = before[d]; }
    std::memcpy(&a.value, value, (size_t)esz);
    a.in = in;
    a.out = out;
    return stream([=](char *, size_t) {
        if (esz == 1) tsl_pad_1(a); else if (esz == 4) tsl_pad_4(a); else tsl_pad_8(a);
        return 0;
    }, err, n);
}
static int hostdev_conv(const CudaConv *j, char *err, size_t n) {
    typedef void (*Kernel)(TslConvArgs);
    static const Kernel kernels[5][2] = { { tsl_im2col_f32, tsl_im2col_f64 }, { tsl_col2im_f32, tsl_col2im_f64 },
                                          { tsl_bias_f32, tsl_bias_f64 }, { tsl_pool_f32, tsl_pool_f64 },
                                          { tsl_pool_back_f32, tsl_pool_back_f64 } };
    if (j->kind < CUDA_IM2COL || j->kind > CUDA_POOL_BACK || (j->dt != DT_F32 && j->dt != DT_F64))
        return std::snprintf(err, n, "conv: no such kernel"), -1;
    TslConvArgs a = { j->total, j->n, j->c, j->h, j->w, j->oh, j->ow, j->kh, j->kw, j->sh, j->sw, j->dh, j->dw,
                      j->pt, j->pb, j->pl, j->pr, j->max, j->adaptive, j->x, j->gy, j->y };
    Kernel k = kernels[j->kind][j->dt == DT_F64];
    return stream([=](char *, size_t) { k(a); return 0; }, err, n);
}
static int hostdev_nn(const CudaNn *j, char *err, size_t n) {
    typedef void (*Kernel)(TslNnArgs);
    static_assert(sizeof(TslNnArgs) == sizeof(GenNnArgs), "the kernel's arguments are gen_nn.h's");
    Kernel k = NULL;
    int f = j->dt == DT_F64, e = j->dt == DT_BOOL ? 0 : j->dt == DT_F32 ? 1 : 2;
    switch (j->kind) {
    case CUDA_SOFTPLUS: k = f ? tsl_softplus_f64 : tsl_softplus_f32; break;
    case CUDA_NORM_STATS: k = f ? tsl_norm_stats_f64 : tsl_norm_stats_f32; break;
    case CUDA_NORM_APPLY: k = f ? tsl_norm_apply_f64 : tsl_norm_apply_f32; break;
    case CUDA_XENT_ROWS: k = f ? tsl_xent_rows_f64 : tsl_xent_rows_f32; break;
    case CUDA_XENT_SUM: k = f ? tsl_xent_sum_f64 : tsl_xent_sum_f32; break;
    case CUDA_GATHER_AXIS: k = e == 0 ? tsl_gather_axis_1 : e == 1 ? tsl_gather_axis_4 : tsl_gather_axis_8; break;
    case CUDA_IDX_CHECK: k = tsl_idx_check; break;
    case CUDA_MASKED_FILL: k = e == 0 ? tsl_masked_fill_1 : e == 1 ? tsl_masked_fill_4 : tsl_masked_fill_8; break;
    case CUDA_SCATTER_AXIS:
        k = j->dt == DT_BOOL ? tsl_scatter_axis_b8 : j->dt == DT_I64 ? tsl_scatter_axis_i64
          : j->dt == DT_F32 ? tsl_scatter_axis_f32 : tsl_scatter_axis_f64;
        break;
    default: return std::snprintf(err, n, "nn: no such kernel"), -1;
    }
    TslNnArgs a;
    std::memcpy(&a, &j->a, sizeof a);
    return stream([=](char *, size_t) { k(a); return 0; }, err, n);
}
static int hostdev_imatmul(const CudaImatmul *j, char *err, size_t n) {
    TslImatmulArgs a;
    std::memset(&a, 0, sizeof a);
    a.m = j->m; a.n = j->n; a.k = j->k; a.ta = j->trans_a; a.nbd = j->nbd; a.total = j->m * j->n;
    for (int d = 0; d < j->nbd; d++) { a.bshape[d] = j->bshape[d]; a.astr[d] = j->a_stride[d]; a.bstr[d] = j->b_stride[d]; a.total *= j->bshape[d]; }
    a.a = j->a; a.b = j->b; a.c = j->c;
    return stream([=](char *, size_t) { tsl_imatmul(a); return 0; }, err, n);
}

// plugin.h's CudaSolve through LAPACK (column-major in and out, as cuSOLVER gets them), with
// solver.c's aids (det, eye, tril, qr_r) as the real kernels
#define LA(dt, S, D) ((dt) == DT_F32 ? (S) : (D))
static int hostdev_solve(const CudaSolve *j, int64_t *failed, char *err, size_t n) {
    *failed = -1;
    if (host_wait("cusolver's info", err, n)) return -1;   // solver.c reads each info back
    int dt = j->dt, m = (int)j->m, nn = (int)j->n, k = (int)j->k, info = 0, ldm = m > 1 ? m : 1, ldn = nn > 1 ? nn : 1;
    size_t es = esize(dt);
    int64_t mat = j->op == OP_QR || j->op == OP_SVD ? j->m * j->n : j->n * j->n;
    std::vector<int> ipiv((size_t)(j->batch * j->n + 1)), infos((size_t)j->batch + 1);
    std::vector<double> w(1 << 16), tau(64), vt((size_t)(j->k * j->n + 1));
    std::vector<int> iw(1 << 12);
    int lw = 1 << 15;
    if (j->op == OP_INV) { long long n2 = j->n, total = j->batch * j->n * j->n;
        if (dt == DT_F32) tsl_eye_f32((float *)j->out[0], n2, total); else tsl_eye_f64((double *)j->out[0], n2, total); }
    for (int64_t b = 0; b < j->batch; b++) {
        char *a = (char *)j->a + (size_t)(b * mat) * es;
        int *piv = ipiv.data() + b * j->n;
        switch (j->op) {
        case OP_SOLVE: case OP_INV: case OP_DET: {
            if (nn) LA(dt, LAPACK_sgetrf(&nn, &nn, (float *)a, &ldn, piv, &info), LAPACK_dgetrf(&nn, &nn, (double *)a, &ldn, piv, &info));
            infos[b] = info;
            if (j->op == OP_DET || info) break;
            int nr = j->op == OP_INV ? nn : k;
            char *x = (char *)(j->op == OP_INV ? j->out[0] : j->b) + (size_t)(b * j->n * nr) * es;
            LA(dt, LAPACK_sgetrs("N", &nn, &nr, (float *)a, &ldn, piv, (float *)x, &ldn, &info),
               LAPACK_dgetrs("N", &nn, &nr, (double *)a, &ldn, piv, (double *)x, &ldn, &info));
            break;
        }
        case OP_CHOLESKY:
            LA(dt, LAPACK_spotrf("L", &nn, (float *)a, &ldn, &info), LAPACK_dpotrf("L", &nn, (double *)a, &ldn, &info));
            infos[b] = info;
            break;
        case OP_QR: {
            LA(dt, LAPACK_sgeqrf(&m, &nn, (float *)a, &ldm, (float *)tau.data(), (float *)w.data(), &lw, &info),
               LAPACK_dgeqrf(&m, &nn, (double *)a, &ldm, tau.data(), w.data(), &lw, &info));
            long long mm = m, n2 = nn, kk = k, one = 1;
            char *r = (char *)j->out[0] + (size_t)(b * j->k * j->n) * es;
            if (dt == DT_F32) tsl_qr_r_f32((const float *)a, mm, n2, kk, one, (float *)r);
            else tsl_qr_r_f64((const double *)a, mm, n2, kk, one, (double *)r);
            LA(dt, LAPACK_sorgqr(&m, &k, &k, (float *)a, &ldm, (float *)tau.data(), (float *)w.data(), &lw, &info),
               LAPACK_dorgqr(&m, &k, &k, (double *)a, &ldm, tau.data(), w.data(), &lw, &info));
            break;
        }
        case OP_SVD: {
            char *u = (char *)j->out[0] + (size_t)(b * j->m * j->k) * es, *sv = (char *)j->out[1] + (size_t)(b * j->k) * es;
            char *v = (char *)j->out[2] + (size_t)(b * j->n * j->k) * es;
            int ldk = k > 1 ? k : 1;
            LA(dt, LAPACK_sgesdd("S", &m, &nn, (float *)a, &ldm, (float *)sv, (float *)u, &ldm, (float *)vt.data(), &ldk, (float *)w.data(), &lw, iw.data(), &info),
               LAPACK_dgesdd("S", &m, &nn, (double *)a, &ldm, (double *)sv, (double *)u, &ldm, vt.data(), &ldk, w.data(), &lw, iw.data(), &info));
            infos[b] = info;
            for (int p = 0; p < k; p++)   // V (n x k, column-major) from VT (k x n, column-major)
                for (int c = 0; c < nn; c++) std::memcpy(v + (size_t)(p * nn + c) * es, (char *)vt.data() + (size_t)(c * k + p) * es, es);
            break;
        }
        case OP_EIGH: {
            char *wv = (char *)j->out[0] + (size_t)(b * j->n) * es;
            int liw = 1 << 12;
            LA(dt, LAPACK_ssyevd("V", "L", &nn, (float *)a, &ldn, (float *)wv, (float *)w.data(), &lw, iw.data(), &liw, &info),
               LAPACK_dsyevd("V", "L", &nn, (double *)a, &ldn, (double *)wv, w.data(), &lw, iw.data(), &liw, &info));
            infos[b] = info;
            break;
        }
        default: return NO("solver op");
        }
        if (infos[b] > 0 && j->op != OP_DET && *failed < 0) *failed = b;
    }
    long long n2 = j->n, total = j->batch * j->n * j->n, batch = j->batch;
    if (j->op == OP_CHOLESKY) { if (dt == DT_F32) tsl_tril_f32((float *)j->a, n2, total); else tsl_tril_f64((double *)j->a, n2, total); }
    if (j->op == OP_DET) {
        if (dt == DT_F32) tsl_det_f32((const float *)j->a, ipiv.data(), infos.data(), n2, batch, (float *)j->out[0]);
        else tsl_det_f64((const double *)j->a, ipiv.data(), infos.data(), n2, batch, (double *)j->out[0]);
    }
    return 0;
}

#if TSL_CUDA_ABI >= 11
// CUDA Graph capture (the "capt" entries, ops/gpu/cuda/graph.c's contract): the recording is
// the stream's (above); these begin and end it, replay it, and free it with its kept blocks
static void give_back(std::vector<void *> &kept) {
    for (void *p : kept) std::free(p);
    kept.clear();
}
static int hostdev_capture_begin(int, char *err, size_t n) {
    if (capturing) return std::snprintf(err, n, "CUDA error in cudaStreamBeginCapture: operation would make the legacy stream depend on a capturing blocking stream"), -1;
    HostdevGraph *g = new (std::nothrow) HostdevGraph;
    if (!g) return NO("host memory for a capture");
    std::lock_guard<std::mutex> hold(cap_lock);
    rec = g;
    capturing = true;
    invalidated = false;
    return 0;
}
static int hostdev_capture_end(void **graph, char *err, size_t n) {
    *graph = nullptr;
    if (!capturing) return std::snprintf(err, n, "CUDA error in cudaStreamEndCapture: operation not permitted when stream is not capturing"), -1;
    HostdevGraph *g;
    {
        std::lock_guard<std::mutex> hold(cap_lock);
        g = rec;
        rec = nullptr;
        capturing = false;
    }
    // TSL_HOSTDEV_INVALIDATE: every capture ends invalidated, as if a call had needed the host,
    // so that the caller's way back (vm/run/vm_seg.c: the host side put back, the segment op by op) runs
    if (std::getenv("TSL_HOSTDEV_INVALIDATE")) invalidated = true;
    if (invalidated) {   // nothing recorded ran: the kept blocks are free again
        give_back(g->kept);
        delete g;
        return std::snprintf(err, n, "CUDA error in cudaStreamEndCapture: " CAPTURE_INVALIDATED), -1;
    }
    *graph = g;
    return 0;
}
static int hostdev_graph_launch(void *graph, char *err, size_t n) {
    HostdevGraph *g = (HostdevGraph *)graph;
    return stream([g](char *e, size_t en) {
        for (const Work &w : g->work)
            if (w(e, en)) return -1;
        return 0;
    }, err, n);
}
static void hostdev_graph_free(void *graph) {
    HostdevGraph *g = (HostdevGraph *)graph;
    if (!g) return;
    give_back(g->kept);
    delete g;
}
#endif

static TslCudaPlugin make_table() {
    TslCudaPlugin p;
    std::memset(&p, 0, sizeof p);
    p.abi = TSL_CUDA_ABI;
    p.nops = OP__COUNT;
    p.init = hostdev_init;
    p.alloc = hostdev_alloc;
    p.free = hostdev_free;
    p.alloc_stats = hostdev_stats;
    p.to_device = hostdev_to;
    p.to_host = hostdev_to;
    p.copy = hostdev_copy;
    p.copy2d = hostdev_copy2d;
    p.synchronize = hostdev_sync;
    p.has_ew = hostdev_has_ew;
    p.ew = hostdev_ew;
    p.fused = hostdev_fused;
    p.astype = hostdev_astype;
    p.reduce = hostdev_reduce;
    p.softmax = hostdev_softmax;
    p.gemm = hostdev_gemm;
    p.gather_strided = hostdev_gather;
    p.where = hostdev_where;
    p.lines = hostdev_lines;
    p.take = hostdev_take;
    p.scatter_add = hostdev_scatter_add;
    p.remap = hostdev_remap;
    p.one_hot = hostdev_one_hot;
    p.random = hostdev_random;
    p.nccl_load = hostdev_nccl_load;
    p.nccl_init = hostdev_nccl_init;
    p.nccl_allgather = hostdev_nccl_allgather;
    p.nccl_bcast = hostdev_nccl_bcast;
    p.rank_combine = hostdev_rank_combine;
    p.sort = hostdev_sort;
    p.unique = hostdev_unique;
    p.pad = hostdev_pad;
    p.imatmul = hostdev_imatmul;
    p.conv = hostdev_conv;
    p.nn = hostdev_nn;
    p.solve = hostdev_solve;
#if TSL_CUDA_ABI >= 11
    p.capture_begin = hostdev_capture_begin;
    p.capture_end = hostdev_capture_end;
    p.graph_launch = hostdev_graph_launch;
    p.graph_free = hostdev_graph_free;
#endif
    ew_register();
    return p;
}
static const TslCudaPlugin table = make_table();
extern "C" __attribute__((visibility("default"))) const TslCudaPlugin *tsl_cuda_plugin(void) { return &table; }
