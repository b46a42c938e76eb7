/* solver.c - dense linear algebra through cuSOLVER: solve, inv, det, cholesky, qr, svd and
 * eigh, with the LAPACK routines the CPU uses where cuSOLVER has them (getrf + getrs for
 * gesv, potrf, geqrf + orgqr, syevd) and gesvdj for svd (cuSOLVER's gesvd needs m >= n).
 * The host side (ops/gpu/gpu_linalg.c) hands over column-major copies, as ops/cpu/lapack.c hands
 * LAPACK, and reads back which matrix failed. Matrices of a batch go one by one; each
 * call's devInfo lands in an array read once at the end (the one wait: a singular matrix is
 * the user's error, at this line). */
#include <cusolverDn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "cuda_impl.h"
#include "gen.h"
#include "gen_linalg.h"

/* One handle for the process, on the plugin's stream, made on first use; calls are
 * serialised (the handle and its workspace are not shared between threads). */
static pthread_mutex_t solver_lock = PTHREAD_MUTEX_INITIALIZER;
static cusolverDnHandle_t solver;

static int solver_failed(cusolverStatus_t s, const char *what, char *err, size_t n) {
    snprintf(err, n, "cuSOLVER %s failed (status %d)", what, (int)s);
    if (s == CUSOLVER_STATUS_EXECUTION_FAILED) cuda.lost = 1;   /* a kernel of cuSOLVER faulted */
    return -1;
}

static int solver_start(char *err, size_t n) {
    if (solver) return 0;
    cusolverStatus_t s = cusolverDnCreate(&solver);
    if (s != CUSOLVER_STATUS_SUCCESS) {
        solver = NULL;
        return solver_failed(s, "cusolverDnCreate", err, n);
    }
    s = cusolverDnSetStream(solver, cuda.stream);
    if (s != CUSOLVER_STATUS_SUCCESS) {
        cusolverDnDestroy(solver);
        solver = NULL;
        return solver_failed(s, "cusolverDnSetStream", err, n);
    }
    return 0;
}

/* Everything one job allocates, freed together. */
typedef struct {
    void *p[6];
    size_t bytes[6];
    int n;
} Scratch;

static void *scratch(Scratch *s, size_t bytes, char *err, size_t n) {
    void *p = NULL;
    if (cuda_alloc(&p, bytes ? bytes : 8, err, n)) return NULL;
    s->p[s->n] = p;
    s->bytes[s->n++] = bytes ? bytes : 8;
    return p;
}

static int scratch_done(Scratch *s, int rc) {
    for (int i = 0; i < s->n; i++) cuda_free(s->p[i], s->bytes[i]);
    return rc;
}

static int ld(int64_t rows) { return rows > 1 ? (int)rows : 1; }

#define CHECK(call, what)                                                   \
    do {                                                                    \
        cusolverStatus_t st_ = (call);                                      \
        if (st_ != CUSOLVER_STATUS_SUCCESS) return solver_failed(st_, what, err, n); \
    } while (0)

/* the f32 or the f64 routine */
#define BY_DTYPE(dt, S_CALL, D_CALL) ((dt) == DT_F32 ? (S_CALL) : (D_CALL))

static CUfunction kernel_of(const char *what, int dt, char *err, size_t n) {
    char name[64];
    gen_family_name(name, sizeof name, what, gen_dtype_suffix(dt), NULL);
    return cuda_kernel(gen_linalg_source(), name, err, n);
}

/* The job's work, one matrix after another (batch b at element offsets b * size). */
typedef struct {
    const CudaSolve *j;
    size_t es;
    void *work;
    int lwork;
    int *info, *ipiv;
    void *tau;
} Run;

static void *at(void *base, int64_t b, int64_t size, size_t es) { return (char *)base + (size_t)(b * size) * es; }

/* getrf of every matrix (solve, inv, det): LU in place, pivots in r->ipiv[b * n] */
static int run_getrf(Run *r, char *err, size_t n) {
    const CudaSolve *j = r->j;
    int nn = (int)j->n;
    for (int64_t b = 0; b < j->batch; b++) {
        void *a = at(j->a, b, j->n * j->n, r->es);
        CHECK(BY_DTYPE(j->dt, cusolverDnSgetrf(solver, nn, nn, a, ld(j->n), r->work, r->ipiv + b * j->n, r->info + b),
                       cusolverDnDgetrf(solver, nn, nn, a, ld(j->n), r->work, r->ipiv + b * j->n, r->info + b)),
              "getrf");
    }
    return 0;
}

/* getrs after getrf: b (n x k per matrix) becomes the solution */
static int run_getrs(Run *r, void *rhs, int64_t k, char *err, size_t n) {
    const CudaSolve *j = r->j;
    int nn = (int)j->n, kk = (int)k;
    int *scratch_info = r->info + j->batch;   /* getrs's own info (argument checks only) */
    for (int64_t b = 0; b < j->batch; b++) {
        void *a = at(j->a, b, j->n * j->n, r->es), *x = at(rhs, b, j->n * k, r->es);
        CHECK(BY_DTYPE(j->dt,
                       cusolverDnSgetrs(solver, CUBLAS_OP_N, nn, kk, a, ld(j->n), r->ipiv + b * j->n, x, ld(j->n), scratch_info),
                       cusolverDnDgetrs(solver, CUBLAS_OP_N, nn, kk, a, ld(j->n), r->ipiv + b * j->n, x, ld(j->n), scratch_info)),
              "getrs");
    }
    return 0;
}

static int lwork_getrf(const CudaSolve *j, int *lw) {
    int nn = (int)j->n;
    return BY_DTYPE(j->dt, cusolverDnSgetrf_bufferSize(solver, nn, nn, j->a, ld(j->n), lw),
                    cusolverDnDgetrf_bufferSize(solver, nn, nn, j->a, ld(j->n), lw));
}

static int run_potrf(Run *r, char *err, size_t n) {
    const CudaSolve *j = r->j;
    int nn = (int)j->n;
    for (int64_t b = 0; b < j->batch; b++) {
        void *a = at(j->a, b, j->n * j->n, r->es);
        CHECK(BY_DTYPE(j->dt, cusolverDnSpotrf(solver, CUBLAS_FILL_MODE_LOWER, nn, a, ld(j->n), r->work, r->lwork, r->info + b),
                       cusolverDnDpotrf(solver, CUBLAS_FILL_MODE_LOWER, nn, a, ld(j->n), r->work, r->lwork, r->info + b)),
              "potrf");
    }
    return 0;
}

/* geqrf, r from its upper triangle (a kernel), then orgqr builds q's k columns in place */
static int run_qr(Run *r, char *err, size_t n) {
    const CudaSolve *j = r->j;
    int m = (int)j->m, nn = (int)j->n, k = (int)j->k;
    for (int64_t b = 0; b < j->batch; b++) {
        void *a = at(j->a, b, j->m * j->n, r->es);
        CHECK(BY_DTYPE(j->dt, cusolverDnSgeqrf(solver, m, nn, a, ld(j->m), r->tau, r->work, r->lwork, r->info + b),
                       cusolverDnDgeqrf(solver, m, nn, a, ld(j->m), r->tau, r->work, r->lwork, r->info + b)),
              "geqrf");
        CUfunction f = kernel_of("qr_r", j->dt, err, n);
        if (!f) return -1;
        long long mm = j->m, n2 = j->n, kk = j->k, one = 1;
        void *rb = at(j->out[0], b, j->k * j->n, r->es);
        void *params[] = { &a, &mm, &n2, &kk, &one, &rb };
        if (cuda_launch(f, j->k * j->n, params, err, n)) return -1;
        CHECK(BY_DTYPE(j->dt, cusolverDnSorgqr(solver, m, k, k, a, ld(j->m), r->tau, r->work, r->lwork, r->info + b),
                       cusolverDnDorgqr(solver, m, k, k, a, ld(j->m), r->tau, r->work, r->lwork, r->info + b)),
              "orgqr");
    }
    return 0;
}

static int lwork_qr(const CudaSolve *j, void *tau, int *lw) {
    int m = (int)j->m, nn = (int)j->n, k = (int)j->k, l1 = 0, l2 = 0;
    cusolverStatus_t s = BY_DTYPE(j->dt, cusolverDnSgeqrf_bufferSize(solver, m, nn, j->a, ld(j->m), &l1),
                                  cusolverDnDgeqrf_bufferSize(solver, m, nn, j->a, ld(j->m), &l1));
    if (s == CUSOLVER_STATUS_SUCCESS)
        s = BY_DTYPE(j->dt, cusolverDnSorgqr_bufferSize(solver, m, k, k, j->a, ld(j->m), tau, &l2),
                     cusolverDnDorgqr_bufferSize(solver, m, k, k, j->a, ld(j->m), tau, &l2));
    *lw = l1 > l2 ? l1 : l2;
    return s;
}

/* svd by gesvdj, economy size: u m x k, s, v n x k (column-major: vt row-major) */
static int run_svd(Run *r, gesvdjInfo_t p, char *err, size_t n) {
    const CudaSolve *j = r->j;
    int m = (int)j->m, nn = (int)j->n;
    for (int64_t b = 0; b < j->batch; b++) {
        void *a = at(j->a, b, j->m * j->n, r->es), *u = at(j->out[0], b, j->m * j->k, r->es);
        void *s = at(j->out[1], b, j->k, r->es), *v = at(j->out[2], b, j->n * j->k, r->es);
        CHECK(BY_DTYPE(j->dt,
                       cusolverDnSgesvdj(solver, CUSOLVER_EIG_MODE_VECTOR, 1, m, nn, a, ld(j->m), s, u, ld(j->m), v,
                                         ld(j->n), r->work, r->lwork, r->info + b, p),
                       cusolverDnDgesvdj(solver, CUSOLVER_EIG_MODE_VECTOR, 1, m, nn, a, ld(j->m), s, u, ld(j->m), v,
                                         ld(j->n), r->work, r->lwork, r->info + b, p)),
              "gesvdj");
    }
    return 0;
}

static int lwork_svd(const CudaSolve *j, gesvdjInfo_t p, int *lw) {
    int m = (int)j->m, nn = (int)j->n;
    return BY_DTYPE(j->dt,
                    cusolverDnSgesvdj_bufferSize(solver, CUSOLVER_EIG_MODE_VECTOR, 1, m, nn, j->a, ld(j->m), j->out[1],
                                                 j->out[0], ld(j->m), j->out[2], ld(j->n), lw, p),
                    cusolverDnDgesvdj_bufferSize(solver, CUSOLVER_EIG_MODE_VECTOR, 1, m, nn, j->a, ld(j->m), j->out[1],
                                                 j->out[0], ld(j->m), j->out[2], ld(j->n), lw, p));
}

/* syevd on the lower triangle: values ascending into out[0], vectors in place */
static int run_syevd(Run *r, char *err, size_t n) {
    const CudaSolve *j = r->j;
    int nn = (int)j->n;
    for (int64_t b = 0; b < j->batch; b++) {
        void *a = at(j->a, b, j->n * j->n, r->es), *w = at(j->out[0], b, j->n, r->es);
        CHECK(BY_DTYPE(j->dt,
                       cusolverDnSsyevd(solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, nn, a, ld(j->n), w,
                                        r->work, r->lwork, r->info + b),
                       cusolverDnDsyevd(solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, nn, a, ld(j->n), w,
                                        r->work, r->lwork, r->info + b)),
              "syevd");
    }
    return 0;
}

static int lwork_other(const CudaSolve *j, int *lw) {
    int nn = (int)j->n;
    switch (j->op) {
    case OP_CHOLESKY:
        return BY_DTYPE(j->dt, cusolverDnSpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, nn, j->a, ld(j->n), lw),
                        cusolverDnDpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, nn, j->a, ld(j->n), lw));
    case OP_EIGH:
        return BY_DTYPE(j->dt,
                        cusolverDnSsyevd_bufferSize(solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, nn, j->a,
                                                    ld(j->n), j->out[0], lw),
                        cusolverDnDsyevd_bufferSize(solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, nn, j->a,
                                                    ld(j->n), j->out[0], lw));
    default: return lwork_getrf(j, lw);
    }
}

/* A kernel over count elements of x (eye, tril) with (x, n, count). */
static int fill_kernel(const char *what, const CudaSolve *j, void *x, char *err, size_t n) {
    CUfunction f = kernel_of(what, j->dt, err, n);
    if (!f) return -1;
    long long nn = j->n, total = j->batch * j->n * j->n;
    void *params[] = { &x, &nn, &total };
    return cuda_launch(f, total, params, err, n);
}

/* The work of the job's op, after the workspace is there. */
static int run_op(Run *r, gesvdjInfo_t p, char *err, size_t n) {
    const CudaSolve *j = r->j;
    switch (j->op) {
    case OP_SOLVE: return run_getrf(r, err, n) || run_getrs(r, j->b, j->k, err, n) ? -1 : 0;
    case OP_INV:
        return fill_kernel("eye", j, j->out[0], err, n) || run_getrf(r, err, n) || run_getrs(r, j->out[0], j->n, err, n)
                   ? -1 : 0;
    case OP_DET: {
        if (j->n > 0 && run_getrf(r, err, n)) return -1;
        CUfunction f = kernel_of("det", j->dt, err, n);
        if (!f) return -1;
        long long nn = j->n, batch = j->batch;
        void *lu = j->a, *out = j->out[0];
        void *params[] = { &lu, &r->ipiv, &r->info, &nn, &batch, &out };
        return cuda_launch(f, j->batch, params, err, n);
    }
    case OP_CHOLESKY: return run_potrf(r, err, n) || fill_kernel("tril", j, j->a, err, n) ? -1 : 0;
    case OP_QR: return run_qr(r, err, n);
    case OP_SVD: return run_svd(r, p, err, n);
    case OP_EIGH: return run_syevd(r, err, n);
    default: snprintf(err, n, "no cuSOLVER routine for this op"); return -1;
    }
}

/* Sizes its workspace, runs, and reads back the first matrix whose info is not 0. */
static int solve_locked(const CudaSolve *j, int64_t *failed, char *err, size_t n) {
    Scratch s = { { 0 }, { 0 }, 0 };
    Run r = { .j = j, .es = j->dt == DT_F32 ? sizeof(float) : sizeof(double) };
    gesvdjInfo_t p = NULL;
    int rc = -1;
    r.info = scratch(&s, sizeof(int) * (size_t)(j->batch + 1), err, n);
    r.ipiv = r.info ? scratch(&s, sizeof(int) * (size_t)(j->batch * j->n + 1), err, n) : NULL;
    r.tau = r.ipiv ? scratch(&s, r.es * (size_t)(j->k + 1), err, n) : NULL;
    if (!r.tau) return scratch_done(&s, -1);
    cudaError_t e = cudaMemsetAsync(r.info, 0, sizeof(int) * (size_t)(j->batch + 1), cuda.stream);
    if (e != cudaSuccess) return scratch_done(&s, cuda_fail_rt(e, "cudaMemset", err, n));
    cusolverStatus_t st = CUSOLVER_STATUS_SUCCESS;
    if (j->op == OP_SVD) {
        st = cusolverDnCreateGesvdjInfo(&p);
        if (st != CUSOLVER_STATUS_SUCCESS) return scratch_done(&s, solver_failed(st, "gesvdj info", err, n));
        st = lwork_svd(j, p, &r.lwork);
    } else if (j->op == OP_QR) st = lwork_qr(j, r.tau, &r.lwork);
    else if (j->n > 0) st = lwork_other(j, &r.lwork);
    if (st != CUSOLVER_STATUS_SUCCESS) rc = solver_failed(st, "workspace query", err, n);
    else if ((r.work = scratch(&s, r.es * (size_t)(r.lwork > 0 ? r.lwork : 1), err, n))) rc = run_op(&r, p, err, n);
    if (p) cusolverDnDestroyGesvdjInfo(p);
    /* the infos: the first failing matrix, or none */
    static int infos[4096];
    for (int64_t b0 = 0; rc == 0 && b0 < j->batch && *failed < 0; b0 += 4096) {
        int64_t cnt = j->batch - b0 < 4096 ? j->batch - b0 : 4096;
        e = cudaMemcpyAsync(infos, r.info + b0, sizeof(int) * (size_t)cnt, cudaMemcpyDeviceToHost, cuda.stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(cuda.stream);
        if (e != cudaSuccess) rc = cuda_fail_rt(e, "cuSOLVER", err, n);
        for (int64_t b = 0; rc == 0 && b < cnt && *failed < 0; b++) {
            if (infos[b] < 0) rc = (snprintf(err, n, "cuSOLVER rejected argument %d (internal error)", -infos[b]), -1);
            else if (infos[b] > 0 && j->op != OP_DET) *failed = b0 + b;
        }
    }
    return scratch_done(&s, rc);
}

int cuda_solve(const CudaSolve *j, int64_t *failed, char *err, size_t n) {
    *failed = -1;
    if (cuda.lost) return snprintf(err, n, "the GPU was lost after an earlier error"), -1;
    if ((j->dt != DT_F32 && j->dt != DT_F64) || j->m > INT32_MAX || j->n > INT32_MAX || j->k > INT32_MAX ||
        j->batch < 0) {
        snprintf(err, n, "%s: a matrix of 2^31 rows or more is not supported on the GPU", j->op == OP_SOLVE ? "solve" : "linalg");
        return -1;
    }
    if (j->batch == 0) return 0;
    pthread_mutex_lock(&solver_lock);
    int rc = solver_start(err, n);
    if (rc == 0) rc = solve_locked(j, failed, err, n);
    pthread_mutex_unlock(&solver_lock);
    return rc;
}
