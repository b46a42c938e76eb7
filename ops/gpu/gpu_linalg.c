/* gpu_linalg.c - the LAPACK family on the GPU through cuSOLVER (ops/gpu/cuda/solver.c): solve,
 * inv, det, cholesky, qr, svd and eigh with the CPU's dtypes, batches and errors
 * (ops/cpu/lapack.c, the reference). As the CPU hands LAPACK column-major copies, the host
 * here gathers each operand into column-major matrices (one strided copy, which also
 * broadcasts solve's batches) and gathers the results back row-major. eigh computes in f64
 * for f32 too, as the CPU does. The routines are the CPU's where cuSOLVER has them
 * (getrf + getrs, potrf, geqrf + orgqr, syevd) and gesvdj for svd; their summation orders
 * are not LAPACK's, so results agree within a tolerance, and neither side normalizes signs:
 * the columns of q, u, v and the eigenvectors may differ in sign between the devices. */
#include <string.h>
#include "gpu_impl.h"

bool gpu_linalg_op(OpCode op) {
    switch (op) {
    case OP_SOLVE: case OP_INV: case OP_DET: case OP_CHOLESKY: case OP_QR: case OP_SVD: case OP_EIGH: return true;
    default: return false;
    }
}

/* A NEW GPU tensor [bshape.., cols, rows]: t's matrices ([.., rows, cols], batch axes
 * right-aligned with bshape and broadcast to it) each column-major, one after another. */
static Tensor *colmajor(const Tensor *t, int nbd, const int64_t *bshape) {
    int64_t rows = t->shape[t->ndim - 2], cols = t->shape[t->ndim - 1], st[TSL_MAX_RANK], s = 1;
    for (int e = t->ndim - 1; e >= 0; e--) { st[e] = s; s *= t->shape[e]; }
    Shape cs = { nbd + 2, { 0 } };
    int64_t stride[TSL_MAX_RANK];
    int tb = t->ndim - 2;
    for (int d = 0; d < nbd; d++) {
        int e = d - (nbd - tb);
        cs.d[d] = bshape[d];
        stride[d] = e >= 0 && t->shape[e] == bshape[d] && bshape[d] != 1 ? st[e] : 0;
    }
    cs.d[nbd] = cols;
    cs.d[nbd + 1] = rows;
    stride[nbd] = 1;
    stride[nbd + 1] = cols;
    Tensor *r = gpu_alloc(t->dtype, &cs);
    if (r && gpu_gather(t, stride, r)) {
        tensor_release(r);
        r = NULL;
    }
    return r;
}

/* out ([B.., rows, cols], row-major) from cm's column-major matrices (ld rows), mat
 * elements apart; converted when out's dtype is not cm's. */
static int rowmajor_into(const Tensor *cm, int64_t rows, int64_t cols, int64_t mat, Tensor *out) {
    int64_t stride[TSL_MAX_RANK], s = mat;
    int nd = out->ndim;
    for (int d = nd - 3; d >= 0; d--) { stride[d] = s; s *= out->shape[d]; }
    stride[nd - 2] = 1;
    stride[nd - 1] = rows;
    (void)cols;
    if (cm->dtype == out->dtype) return gpu_gather(cm, stride, out);
    Shape os;
    shape_of(out, &os);
    Tensor *tmp = gpu_alloc(cm->dtype, &os);
    char err[400];
    int rc = tmp && gpu_gather(cm, stride, tmp) == 0 ? GPU_CALL(astype, cm->dtype, out->dtype, tmp->data, out->data, out->size) : -1;
    tensor_release(tmp);
    return rc;
}

/* The plugin's job; the CPU's message when a matrix fails. */
static int solve_job(const CudaSolve *j, const char *why) {
    char err[400];
    int64_t failed = -1;
    if (GPU_CALL(solve, j, &failed)) return -1;
    if (failed >= 0) {
        op_fail("%s: %s", op_info[j->op].name, why);
        return -1;
    }
    return 0;
}

static int64_t batch_of(const Tensor *t, int keep) {
    int64_t b = 1;
    for (int d = 0; d < t->ndim - keep; d++) b *= t->shape[d];
    return b;
}

/* x with a @ x == b: b a vector when 1-D, else [.., n, k]; batches broadcast to out's. */
static int run_solve(const Tensor *a, Tensor *b, Tensor *out) {
    bool vec = b->ndim == 1;
    int64_t n = a->shape[a->ndim - 1], k = vec ? 1 : b->shape[b->ndim - 1];
    int nbd = out->ndim - (vec ? 1 : 2);
    CudaSolve j = { .op = OP_SOLVE, .dt = out->dtype, .batch = batch_of(out, vec ? 1 : 2), .m = n, .n = n, .k = k };
    if (n == 0 || j.batch == 0) return 0;
    Shape col = { 2, { n, 1 } };
    Tensor *bv = vec ? tensor_view(b, &col) : tensor_retain(b);
    Tensor *acm = bv ? colmajor(a, nbd, out->shape) : NULL, *bcm = acm ? colmajor(bv, nbd, out->shape) : NULL;
    int rc = -1;
    if (bcm) {
        j.a = acm->data;
        j.b = bcm->data;
        rc = solve_job(&j, "singular matrix");
    }
    char err[400];
    if (rc == 0) rc = vec ? GPU_CALL(copy, out->data, bcm->data, gpu_nbytes(out)) : rowmajor_into(bcm, n, k, n * k, out);
    tensor_release(bcm);
    tensor_release(acm);
    tensor_release(bv);
    return rc;
}

/* Whether a holds a NaN (1), or not (0); -1 on an error. svd: LAPACK's gesdd refuses a NaN
 * and the CPU reports "did not converge"; gesvdj would return NaNs without a word. */
static int has_nan(const Tensor *a) {
    Shape s, one = { 0, { 0 } };
    shape_of(a, &s);
    Tensor *mask = gpu_alloc(DT_BOOL, &s), *any = mask ? gpu_alloc(DT_BOOL, &one) : NULL;
    double num[1] = { 0 };
    char err[400];
    unsigned char found = 0;
    int rc = any ? gpu_ew_launch(OP_ISNAN, a->dtype, 1, (Tensor *[]){ (Tensor *)a }, num, mask, 0) : -1;
    CudaReduce j = { .op = OP_ANY, .dt = DT_BOOL, .out_dt = DT_BOOL, .outer = 1, .len = a->size, .inner = 1,
                     .in = mask ? mask->data : NULL, .out = any ? any->data : NULL };
    if (rc == 0) rc = GPU_CALL(reduce, &j);
    if (rc == 0) rc = GPU_CALL(to_host, &found, any->data, 1);
    tensor_release(any);
    tensor_release(mask);
    return rc ? -1 : found != 0;
}

/* inv, det, cholesky, qr, svd, eigh of a's matrices (a in the compute dtype). */
static int run_single(OpCode op, const Tensor *a, Tensor **out) {
    int nbd = a->ndim - 2;
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n;
    CudaSolve j = { .op = op, .dt = a->dtype, .batch = batch_of(a, 2), .m = m, .n = n, .k = k };
    bool empty = op == OP_QR || op == OP_SVD ? k == 0 : n == 0;
    if (j.batch == 0 || (empty && op != OP_DET)) return 0;
    if (op == OP_SVD) {
        int nan = has_nan(a);
        if (nan) {
            if (nan > 0) op_fail("svd: did not converge");
            return -1;
        }
    }
    Tensor *acm = colmajor(a, nbd, a->shape), *extra = NULL;
    if (!acm) return -1;
    j.a = acm->data;
    Shape es = { 1, { j.batch * (op == OP_SVD ? m * k : op == OP_EIGH ? n : n * n) } };
    if ((op == OP_INV || op == OP_SVD || op == OP_EIGH) && !(extra = gpu_alloc(a->dtype, &es))) {
        tensor_release(acm);
        return -1;
    }
    j.out[0] = op == OP_DET ? out[0]->data : op == OP_QR ? out[1]->data : extra ? extra->data : NULL;
    if (op == OP_SVD) {
        j.out[1] = out[1]->data;
        j.out[2] = out[2]->data;
    }
    const char *why = op == OP_INV ? "singular matrix" : op == OP_CHOLESKY ? "matrix is not positive definite"
                                                                            : "did not converge";
    int rc = solve_job(&j, why);
    char err[400];
    if (rc == 0) switch (op) {
        case OP_INV: rc = rowmajor_into(extra, n, n, n * n, out[0]); break;
        case OP_CHOLESKY: rc = rowmajor_into(acm, n, n, n * n, out[0]); break;
        case OP_QR: rc = rowmajor_into(acm, m, k, m * n, out[0]); break;
        case OP_SVD: rc = rowmajor_into(extra, m, k, m * k, out[0]); break;
        case OP_EIGH:
            rc = GPU_CALL(astype, DT_F64, out[0]->dtype, extra->data, out[0]->data, out[0]->size);
            if (rc == 0) rc = rowmajor_into(acm, n, n, n * n, out[1]);
            break;
        default: break;
        }
    tensor_release(extra);
    tensor_release(acm);
    return rc;
}

int gpu_run_linalg(const OpCall *c, Tensor **out) {
    DType ct = c->op == OP_EIGH ? DT_F64 : out[0]->dtype;   /* eigh in f64, as the CPU */
    Tensor *a = gpu_as_dtype(c->in[0].t, ct);
    if (!a) return -1;
    int rc;
    if (c->op == OP_SOLVE) {
        Tensor *b = gpu_as_dtype(c->in[1].t, ct);
        rc = b ? run_solve(a, b, out[0]) : -1;
        tensor_release(b);
    } else {
        rc = run_single(c->op, a, out);
    }
    tensor_release(a);
    return rc;
}
