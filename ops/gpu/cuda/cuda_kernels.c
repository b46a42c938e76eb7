/* cuda_kernels.c - the plugin's kernels: elementwise launches of generated kernels, the
 * hand-written families (one module, compiled once) and matmul through cuBLAS. */
#include <stdio.h>
#include <string.h>
#include "cuda_impl.h"
#include "gen.h"
#include "gen_args.h"

int cuda_has_ew(int op, int ct) {
    return op >= 0 && op < OP__COUNT && ct >= DT_BOOL && ct <= DT_F64 && gen_ew_has(op, ct);
}

/* The elementwise kernel of (op, ct, form): generated and compiled on first use, then
 * looked up here without generating its source again (eager code launches one per op). */
static CUfunction ew_kernel(const CudaEw *job, char *err, size_t n) {
    static CUfunction known[OP__COUNT][4][2];
    CUfunction *slot = &known[job->op][job->ct][job->form == 's'];
    CUfunction f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f) return f;
    static _Thread_local char src[16384];
    char name[128];
    if (gen_ew_kernel(job->op, job->ct, job->form, name, sizeof name, src, sizeof src)) {
        snprintf(err, n, "no GPU kernel for this elementwise op");
        return NULL;
    }
    if ((f = cuda_kernel(src, name, err, n))) __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
}

/* Integer kernels that can meet an operand the CPU refuses report it in cuda.flag; the
 * error must be the user's, at this op, so the host waits for the answer. */
static bool raises(int op, int ct) { return ct == DT_I64 && (op == OP_FLOOR_DIVIDE || op == OP_MOD || op == OP_POW); }

static int flag_reset(char *err, size_t n) {
    cudaError_t e = cudaMemsetAsync(cuda.flag, 0, sizeof(int), cuda.stream);
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "cudaMemset", err, n);
}

/* The flag a kernel raised: 0 none, else the CPU's message in err and -1. */
static int flag_check(char *err, size_t n) {
    int bad = 0;
    cudaError_t e = cudaMemcpyAsync(&bad, cuda.flag, sizeof bad, cudaMemcpyDeviceToHost, cuda.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cuda.stream);
    if (e != cudaSuccess) return cuda_fail_rt(e, "a kernel", err, n);
    static const char *const msg[] = { "", "integer division by zero", "integer modulo by zero",
                                       "integers to negative integer powers are not allowed" };
    if (bad >= 1 && bad <= 3) snprintf(err, n, "%s", msg[bad]);
    return bad ? -1 : 0;
}

int cuda_ew(const CudaEw *job, char *err, size_t n) {
    if (job->op < 0 || job->op >= OP__COUNT || job->ct < DT_BOOL || job->ct > DT_F64) {
        snprintf(err, n, "no GPU kernel for this elementwise op");
        return -1;
    }
    CUfunction f = ew_kernel(job, err, n);
    if (!f) return -1;
    GenEwArgs a;
    memset(&a, 0, sizeof a);
    a.n = job->n;
    a.ndim = job->ndim;
    memcpy(a.shape, job->shape, sizeof a.shape);
    memcpy(a.st0, job->stride[0], sizeof a.st0);
    memcpy(a.st1, job->stride[1], sizeof a.st1);
    a.inner0 = job->inner[0];
    a.inner1 = job->inner[1];
    a.in0 = job->in[0];
    a.in1 = job->in[1];
    a.num0 = job->num[0];
    a.num1 = job->num[1];
    a.p = job->p;
    a.q = job->q;
    a.out = job->out;
    a.bad = cuda.flag;
    void *params[] = { &a };
    bool check = raises(job->op, job->ct);
    if (check && flag_reset(err, n)) return -1;
    if (cuda_launch(f, job->n, params, err, n)) return -1;
    return check ? flag_check(err, n) : 0;
}

int cuda_fused(const CudaFused *job, char *err, size_t n) {
    enum { MAX_STEPS = 256 };
    if (job->nsteps < 1 || job->nsteps > MAX_STEPS || job->nin < 1 || job->nin > TSL_CUDA_MAX_IN) {
        snprintf(err, n, "a fused chain of %d steps over %d inputs is not supported on the GPU", job->nsteps, job->nin);
        return -1;
    }
    GenStep steps[MAX_STEPS];
    for (int s = 0; s < job->nsteps; s++)
        steps[s] = (GenStep){ (OpCode)job->steps[s].op, job->steps[s].dst, job->steps[s].a, job->steps[s].b };
    static _Thread_local char src[65536], name[8192];
    if (gen_fused_kernel(steps, job->nsteps, job->nin, job->ct, name, sizeof name, src, sizeof src)) {
        snprintf(err, n, "no GPU kernel for this fused chain");
        return -1;
    }
    CUfunction f = cuda_kernel(src, name, err, n);
    if (!f) return -1;
    GenFusedArgs a = { .n = job->n, .out = job->out, .bad = cuda.flag };
    for (int k = 0; k < job->nin; k++) {
        a.in[k] = job->in[k];
        a.inner[k] = job->inner[k];
        a.num[k] = job->num[k];
    }
    bool check = false;
    for (int s = 0; s < job->nsteps; s++) check |= raises(job->steps[s].op, job->ct);
    void *params[] = { &a };
    if (check && flag_reset(err, n)) return -1;
    if (cuda_launch(f, job->n, params, err, n)) return -1;
    return check ? flag_check(err, n) : 0;
}

static CUfunction family(const char *name, char *err, size_t n) { return cuda_kernel(gen_families(), name, err, n); }

int cuda_astype(int dt_in, int dt_out, const void *in, void *out, int64_t count, char *err, size_t n) {
    char name[64];
    gen_family_name(name, sizeof name, "astype", gen_dtype_suffix(dt_in), gen_dtype_suffix(dt_out));
    CUfunction f = family(name, err, n);
    if (!f) return -1;
    bool checked = dt_out == DT_I64 && (dt_in == DT_F32 || dt_in == DT_F64);
    if (checked) {
        cudaError_t e = cudaMemsetAsync(cuda.flag, 0, sizeof(int), cuda.stream);
        if (e != cudaSuccess) return cuda_fail_rt(e, "cudaMemset", err, n);
    }
    long long cnt = count;
    void *params[] = { &in, &out, &cnt, &cuda.flag };
    if (cuda_launch(f, count, params, err, n)) return -1;
    if (!checked) return 0;
    int bad = 0;   /* the host must know now: the error is the user's, at this line */
    cudaError_t e = cudaMemcpyAsync(&bad, cuda.flag, sizeof bad, cudaMemcpyDeviceToHost, cuda.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cuda.stream);
    if (e != cudaSuccess) return cuda_fail_rt(e, "astype", err, n);
    if (bad) {
        snprintf(err, n, "cannot convert %s to i64", bad == 1 ? "nan" : bad == 2 ? "inf" : "an out-of-range value");
        return -1;
    }
    return 0;
}

int cuda_reduce(const CudaReduce *job, char *err, size_t n) {
    static const char *const names[OP__COUNT] = {
        [OP_SUM] = "sum", [OP_MEAN] = "mean", [OP_MAX] = "max", [OP_MIN] = "min", [OP_PROD] = "prod",
        [OP_ARGMAX] = "argmax", [OP_ARGMIN] = "argmin", [OP_ALL] = "all", [OP_ANY] = "any",
    };
    if (!names[job->op]) {
        snprintf(err, n, "no GPU reduction for this op");
        return -1;
    }
    char name[64];
    gen_family_name(name, sizeof name, "reduce", names[job->op], gen_dtype_suffix(job->dt));
    CUfunction f = family(name, err, n);
    if (!f) return -1;
    GenReduceArgs a = { job->outer, job->len, job->inner, job->in, job->out };
    void *params[] = { &a };
    return cuda_launch_blocks(f, job->outer * job->inner, params, err, n);
}

int cuda_softmax(int op, int dt, const void *in, void *out, int64_t rows, int64_t len, char *err, size_t n) {
    char name[64];
    gen_family_name(name, sizeof name, op == OP_LOG_SOFTMAX ? "log_softmax" : "softmax", gen_dtype_suffix(dt), NULL);
    CUfunction f = family(name, err, n);
    if (!f) return -1;
    GenReduceArgs a = { rows, len, 1, in, out };
    void *params[] = { &a };
    return cuda_launch_blocks(f, rows, params, err, n);
}

/* The family kernel tsl_<kernel>_<esz> of 1-, 4- or 8-byte elements, for at most 32 axes;
 * otherwise "no GPU <what> ...". */
static CUfunction sized_family(const char *kernel, const char *what, int esz, int ndim, char *err, size_t n) {
    if ((esz != 1 && esz != 4 && esz != 8) || ndim < 0 || ndim > 32)
        return snprintf(err, n, "no GPU %s for %d-byte elements", what, esz), NULL;
    char name[32];
    snprintf(name, sizeof name, "tsl_%s_%d", kernel, esz);
    return family(name, err, n);
}

int cuda_gather_strided(int esz, int ndim, const int64_t *shape, const int64_t *stride, const void *in, void *out,
                        int64_t count, char *err, size_t n) {
    CUfunction f = sized_family("gather", "copy", esz, ndim, err, n);
    if (!f) return -1;
    GenGatherArgs a = { .n = count, .ndim = ndim, .in = in, .out = out };
    AXES(a.shape, shape, ndim);
    AXES(a.stride, stride, ndim);
    void *params[] = { &a };
    return cuda_launch(f, count, params, err, n);
}

int cuda_where(int esz, int ndim, const int64_t *shape, const int64_t (*stride)[TSL_CUDA_MAX_RANK], const void *cond,
               const void *a, const void *b, void *out, int64_t count, char *err, size_t n) {
    CUfunction f = sized_family("where", "where", esz, ndim, err, n);
    if (!f) return -1;
    GenWhereArgs w = { .n = count, .ndim = ndim, .cond = cond, .a = a, .b = b, .out = out };
    AXES(w.shape, shape, ndim);
    AXES(w.st0, stride[0], ndim);
    AXES(w.st1, stride[1], ndim);
    AXES(w.st2, stride[2], ndim);
    void *params[] = { &w };
    return cuda_launch(f, count, params, err, n);
}

int cuda_lines(int kind, int dt, int64_t outer, int64_t len, int64_t inner, int64_t step, const void *in, void *out,
               char *err, size_t n) {
    static const char *const kinds[] = { "cumsum", "cumprod", "trace" };
    if (kind < 0 || kind > 2 || dt < DT_BOOL || dt > DT_F64) return snprintf(err, n, "unknown line kernel"), -1;
    char name[64];
    gen_family_name(name, sizeof name, kinds[kind], gen_dtype_suffix(dt), NULL);
    CUfunction f = family(name, err, n);
    if (!f) return -1;
    GenLineArgs a = { outer, len, inner, step, in, out };
    void *params[] = { &a };
    return cuda_launch(f, kind == 2 ? inner : outer * inner, params, err, n);
}

/* Sets badk to "none" (all ones: atomicMin keeps the smallest bad position). */
static int badk_reset(char *err, size_t n) {
    cudaError_t e = cudaMemsetAsync(cuda.badk, 0xff, sizeof *cuda.badk, cuda.stream);
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "cudaMemset", err, n);
}

/* 0, or 1 with *bad_k when a kernel found a bad position; -1 on a CUDA error. */
static int badk_read(int64_t *bad_k, char *err, size_t n) {
    unsigned long long k = 0;
    cudaError_t e = cudaMemcpyAsync(&k, cuda.badk, sizeof k, cudaMemcpyDeviceToHost, cuda.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cuda.stream);
    if (e != cudaSuccess) return cuda_fail_rt(e, "a kernel", err, n);
    if (k == ~0ull) return 0;
    *bad_k = (int64_t)k;
    return 1;
}

int cuda_take(int esz, const void *t, int64_t nt, const int64_t *idx, void *out, int64_t count, int64_t *bad_k,
              char *err, size_t n) {
    CUfunction f = sized_family("take", "take", esz, 0, err, n);
    if (!f || badk_reset(err, n)) return -1;
    long long cnt = count, size = nt;
    void *params[] = { &t, &size, &idx, &out, &cnt, &cuda.badk };
    if (cuda_launch(f, count, params, err, n)) return -1;
    return badk_read(bad_k, err, n);
}

int cuda_scatter_add(int dt, void *y, int64_t ny, const int64_t *idx, const void *v, int64_t count, int one,
                     int64_t *bad_k, char *err, size_t n) {
    char name[64];
    gen_family_name(name, sizeof name, "scatter_add", gen_dtype_suffix(dt), NULL);
    CUfunction f = family(name, err, n);
    if (!f || badk_reset(err, n)) return -1;
    long long cnt = count, size = ny;
    void *params[] = { &y, &size, &idx, &v, &cnt, &one, &cuda.badk };
    if (cuda_launch(f, 1, params, err, n)) return -1;
    return badk_read(bad_k, err, n);
}

int cuda_remap(int esz, int ndim, const int64_t *shape, const int64_t *div, const int64_t *mod, const int64_t *stride,
               const void *in, void *out, int64_t count, char *err, size_t n) {
    CUfunction f = sized_family("remap", "remap", esz, ndim, err, n);
    if (!f) return -1;
    GenRemapArgs a = { .n = count, .ndim = ndim, .in = in, .out = out };
    AXES(a.shape, shape, ndim);
    AXES(a.div, div, ndim);
    AXES(a.mod, mod, ndim);
    AXES(a.stride, stride, ndim);
    void *params[] = { &a };
    return cuda_launch(f, count, params, err, n);
}

int cuda_one_hot(const int64_t *labels, int64_t count, int64_t n, float *out, int64_t *bad_k, char *err, size_t en) {
    CUfunction f = family("tsl_one_hot", err, en);
    if (!f || badk_reset(err, en)) return -1;
    long long cnt = count, width = n;
    void *params[] = { &labels, &cnt, &width, &out, &cuda.badk };
    if (cuda_launch(f, count, params, err, en)) return -1;
    return badk_read(bad_k, err, en);
}

int cuda_random(int kind, uint64_t key, uint64_t counter, int64_t lo, int64_t hi, void *out, int64_t count, char *err,
                size_t n) {
    static const char *const names[] = { "tsl_random_uniform", "tsl_random_normal", "tsl_random_int" };
    if (kind < 0 || kind > 2) return snprintf(err, n, "unknown random kind"), -1;
    CUfunction f = family(names[kind], err, n);
    if (!f) return -1;
    unsigned long long k = key, c = counter, range = (uint64_t)hi - (uint64_t)lo;
    long long cnt = count, low = lo;
    void *params[] = { &k, &c, &out, &cnt, &low, &range };
    return cuda_launch(f, count, params, err, n);
}

/* Row-major C = op(A) B is column-major C^T = B^T op(A)^T: cuBLAS computes with the
 * operands swapped and nothing is copied. */
int cuda_gemm(const CudaGemm *j, char *err, size_t n) {
    if (cuda.lost) return snprintf(err, n, "the GPU was lost after an earlier error"), -1;
    if (j->m > INT32_MAX || j->n > INT32_MAX || j->k > INT32_MAX || j->batch > INT32_MAX) {
        snprintf(err, n, "matmul: a dimension of 2^31 or more is not supported on the GPU");
        return -1;
    }
    int m = (int)j->m, nn = (int)j->n, k = (int)j->k, batch = (int)j->batch;
    cublasOperation_t ta = j->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    int lda = j->trans_a ? m : k;
    cublasStatus_t s;
    if (j->dt == DT_F32) {
        const float one = 1.0f, zero = 0.0f;
        s = cublasSgemmStridedBatched(cuda.blas, CUBLAS_OP_N, ta, nn, m, k, &one, j->b, nn, j->b_stride, j->a, lda,
                                      j->a_stride, &zero, j->c, nn, (long long)m * nn, batch);
    } else {
        const double one = 1.0, zero = 0.0;
        s = cublasDgemmStridedBatched(cuda.blas, CUBLAS_OP_N, ta, nn, m, k, &one, j->b, nn, j->b_stride, j->a, lda,
                                      j->a_stride, &zero, j->c, nn, (long long)m * nn, batch);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, n, "cuBLAS gemm failed (status %d)", (int)s);
        if (s == CUBLAS_STATUS_EXECUTION_FAILED) cuda.lost = 1;   /* a kernel of cuBLAS faulted */
        return -1;
    }
    return 0;
}
