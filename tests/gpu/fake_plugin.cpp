// fake_plugin.cpp - a stand-in for bin/libtsl_cuda.so whose "device" is host memory, for
// checking the GPU's HOST side (ops/gpu_sort.c, gpu_matmul.c, gpu_linalg.c, gpu_ew.c's exact
// comparison) on a machine without a GPU: tests/gpu/fake.sh appends this to
// tests/gpu/emul_shim.h and the kernel modules' source (so sort, unique, pad, i64 matmul and
// the cuSOLVER aids run the plugin's real kernels, one thread, with ops/cuda/sort.c's and
// solver.c's launch sequences), builds a shared object and runs parity cases with
// TSL_CUDA_PLUGIN pointing at it. The other entries implement plugin.h's contracts plainly
// (gemm as a triple loop, solve through LAPACK as ops/cpu/lapack.c calls it, elementwise for
// the few ops these paths launch); an entry it does not have fails with "fake plugin: ...".
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

#define NO(what) (std::snprintf(err, n, "fake plugin: no %s", what), -1)

static int fake_init(char *, size_t) { return CUDA_OK; }
static int fake_alloc(void **p, size_t bytes, char *err, size_t n) {
    *p = std::calloc(bytes ? bytes : 1, 1);
    return *p ? 0 : NO("memory");
}
static void fake_free(void *p, size_t) { std::free(p); }
static void fake_stats(int64_t *m, int64_t *c) { *m = 0; *c = 0; }
static int fake_copy(void *dst, const void *src, size_t bytes, char *, size_t) { std::memmove(dst, src, bytes); return 0; }
static int fake_copy2d(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t h, char *, size_t) {
    for (size_t r = 0; r < h; r++) std::memmove((char *)dst + r * dp, (const char *)src + r * sp, w);
    return 0;
}
static int fake_sync(char *, size_t) { return 0; }

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

// the elementwise ops the host paths under test launch, in the compute dtype
static bool ew_known(int op) {
    return op == OP_MUL || op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE ||
           op == OP_ISNAN || op == OP_ABS;
}
static int fake_has_ew(int op, int) { return ew_known(op); }
static int fake_ew(const CudaEw *j, char *err, size_t n) {
    if (!ew_known(j->op)) return NO("kernel for this elementwise op");
    for (int64_t i = 0; i < j->n; i++) {
        long long xi[2] = { 0, 0 };
        double xd[2] = { 0, 0 };
        for (int k = 0; k < j->nin; k++) {
            int64_t off = 0;
            if (j->form == 'c') off = j->inner[k] ? i : 0;
            else for (int64_t d = j->ndim - 1, r = i; d >= 0; d--) { off += (r % j->shape[d]) * j->stride[k][d]; r /= j->shape[d]; }
            bool num = !j->in[k];
            if (j->ct == DT_I64 || j->ct == DT_BOOL) xi[k] = num ? (long long)j->num[k] : (long long)get(j->in[k], j->ct, off);
            if (j->ct == DT_I64 && !num) xi[k] = ((const long long *)j->in[k])[off];   // exact
            xd[k] = num ? j->num[k] : get(j->in[k], j->ct, off);
        }
        bool ints = j->ct == DT_I64 || j->ct == DT_BOOL;
        double r;
        switch (j->op) {
        case OP_MUL:
            if (j->ct == DT_I64) { ((long long *)j->out)[i] = (long long)((unsigned long long)xi[0] * (unsigned long long)xi[1]); continue; }
            r = xd[0] * xd[1]; break;
        case OP_ISNAN: r = xd[0] != xd[0]; break;
        case OP_ABS:
            if (j->ct == DT_I64) { ((long long *)j->out)[i] = xi[0] < 0 ? -xi[0] : xi[0]; continue; }
            r = std::fabs(xd[0]); break;
        case OP_EQ: r = ints ? xi[0] == xi[1] : xd[0] == xd[1]; break;
        case OP_NE: r = ints ? xi[0] != xi[1] : xd[0] != xd[1]; break;
        case OP_LT: r = ints ? xi[0] < xi[1] : xd[0] < xd[1]; break;
        case OP_LE: r = ints ? xi[0] <= xi[1] : xd[0] <= xd[1]; break;
        case OP_GT: r = ints ? xi[0] > xi[1] : xd[0] > xd[1]; break;
        default: r = ints ? xi[0] >= xi[1] : xd[0] >= xd[1]; break;
        }
        put(j->out, j->out_dt, i, r);
    }
    return 0;
}
static int fake_astype(int di, int dout, const void *in, void *out, int64_t count, char *, size_t) {
    for (int64_t i = 0; i < count; i++) {
        if (di == DT_I64 && dout == DT_I64) ((long long *)out)[i] = ((const long long *)in)[i];
        else if (di == DT_I64 && dout == DT_F32) ((float *)out)[i] = (float)((const long long *)in)[i];
        else put(out, dout, i, get(in, di, i));
    }
    return 0;
}
static int fake_reduce(const CudaReduce *j, char *err, size_t n) {
    if (j->op != OP_ANY) return NO("reduction but any");
    for (int64_t o = 0; o < j->outer * j->inner; o++) {
        bool any = false;
        for (int64_t l = 0; l < j->len; l++) any |= get(j->in, j->dt, (o / j->inner * j->len + l) * j->inner + o % j->inner) != 0;
        put(j->out, j->out_dt, o, any);
    }
    return 0;
}
static int fake_gather(int esz, int ndim, const int64_t *shape, const int64_t *stride, const void *in, void *out,
                       int64_t count, char *, size_t) {
    for (int64_t i = 0; i < count; i++) {
        int64_t off = 0, r = i;
        for (int d = ndim - 1; d >= 0; d--) { off += (r % shape[d]) * stride[d]; r /= shape[d]; }
        std::memcpy((char *)out + i * esz, (const char *)in + off * esz, (size_t)esz);
    }
    return 0;
}
// plugin.h's CudaGemm: C[b] = op(A[b]) @ B[b], row-major
static int fake_gemm(const CudaGemm *j, char *, size_t) {
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

// ops/cuda/sort.c's sequences on the real kernels
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
    for (long long kk = 2; kk <= P; kk <<= 1)
        for (long long jj = kk >> 1; jj > 0; jj >>= 1) tsl_sort_step(k, q, total, p, kk, jj);
}
static int fake_sort(int dt, const void *in, int64_t outer, int64_t len, int64_t inner, int desc, int64_t kout, void *vals,
                     int64_t *idx, uint64_t *key, int64_t *pos, int64_t P, char *err, size_t n) {
    if ((P & (P - 1)) || P < len || kout > len) return NO("sort of these arguments");
    if (outer * inner == 0 || len == 0 || kout == 0) return 0;
    sort_rows(dt, in, outer, len, inner, desc, P, key, pos);
    long long o = outer, l = len, i = inner, p = P, k = kout;
    size_t es = esize(dt);
    if (es == 1) tsl_sort_write_1((const unsigned char *)in, (tsl_i64 *)pos, o, l, i, p, k, (unsigned char *)vals, (tsl_i64 *)idx);
    else if (es == 4) tsl_sort_write_4((const unsigned *)in, (tsl_i64 *)pos, o, l, i, p, k, (unsigned *)vals, (tsl_i64 *)idx);
    else tsl_sort_write_8((const unsigned long long *)in, (tsl_i64 *)pos, o, l, i, p, k, (unsigned long long *)vals, (tsl_i64 *)idx);
    return 0;
}
static int fake_unique(int dt, const void *in, int64_t count, void *out, int64_t *m, uint64_t *key, int64_t *pos,
                       int64_t *rank, int64_t P, char *err, size_t n) {
    *m = 0;
    if ((P & (P - 1)) || P < count) return NO("unique of these arguments");
    if (count == 0) return 0;
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
static int fake_pad(int esz, int ndim, const int64_t *oshape, const int64_t *ishape, const int64_t *before, const void *value,
                    const void *in, void *out, int64_t count, char *, size_t) {
    TslPadArgs a;
    std::memset(&a, 0, sizeof a);
    a.n = count;
    a.ndim = ndim;
    for (int d = 0; d < ndim; d++) { a.oshape[d] = oshape[d]; a.ishape[d] = ishape[d]; a.before[d] = before[d]; }
    std::memcpy(&a.value, value, (size_t)esz);
    a.in = in;
    a.out = out;
    if (esz == 1) tsl_pad_1(a); else if (esz == 4) tsl_pad_4(a); else tsl_pad_8(a);
    return 0;
}
static int fake_imatmul(const CudaImatmul *j, char *, size_t) {
    TslImatmulArgs a;
    std::memset(&a, 0, sizeof a);
    a.m = j->m; a.n = j->n; a.k = j->k; a.ta = j->trans_a; a.nbd = j->nbd; a.total = j->m * j->n;
    for (int d = 0; d < j->nbd; d++) { a.bshape[d] = j->bshape[d]; a.astr[d] = j->a_stride[d]; a.bstr[d] = j->b_stride[d]; a.total *= j->bshape[d]; }
    a.a = j->a; a.b = j->b; a.c = j->c;
    tsl_imatmul(a);
    return 0;
}

// plugin.h's CudaSolve through LAPACK (column-major in and out, as cuSOLVER gets them), with
// solver.c's aids (det, eye, tril, qr_r) as the real kernels
#define LA(dt, S, D) ((dt) == DT_F32 ? (S) : (D))
static int fake_solve(const CudaSolve *j, int64_t *failed, char *err, size_t n) {
    *failed = -1;
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

static int fake_nothing(char *err, size_t n) { return NO("such entry"); }

static TslCudaPlugin make_table() {
    TslCudaPlugin p;
    std::memset(&p, 0, sizeof p);
    p.abi = TSL_CUDA_ABI;
    p.nops = OP__COUNT;
    p.init = fake_init;
    p.alloc = fake_alloc;
    p.free = fake_free;
    p.alloc_stats = fake_stats;
    p.to_device = fake_copy;
    p.to_host = fake_copy;
    p.copy = fake_copy;
    p.copy2d = fake_copy2d;
    p.synchronize = fake_sync;
    p.has_ew = fake_has_ew;
    p.ew = fake_ew;
    p.astype = fake_astype;
    p.reduce = fake_reduce;
    p.gemm = fake_gemm;
    p.gather_strided = fake_gather;
    p.sort = fake_sort;
    p.unique = fake_unique;
    p.pad = fake_pad;
    p.imatmul = fake_imatmul;
    p.solve = fake_solve;
    (void)fake_nothing;
    return p;
}
static const TslCudaPlugin table = make_table();
extern "C" __attribute__((visibility("default"))) const TslCudaPlugin *tsl_cuda_plugin(void) { return &table; }
