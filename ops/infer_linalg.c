/* infer_linalg.c - shapes and dtypes of the LAPACK family (solve, inv, det, cholesky, qr,
 * svd, eigh) with numpy.linalg's rules: the last two axes hold the matrices and any leading
 * axes are a batch. Every error the shapes alone decide is raised here, so the static
 * compiler reports it exactly as eager code does; the kernels (ops/cpu/lapack.c) only meet
 * the errors that depend on values (singular, not positive definite, no convergence). */
#include <limits.h>
#include <stdbool.h>
#include "tops.h"

/* LAPACK works in f32 or f64; like the other float ops, bool and i64 compute in f32. */
static DType lapack_dtype(DType d) { return d == DT_F64 ? DT_F64 : DT_F32; }

static Shape operand_shape(const OpCall *c, int k) {
    Shape s = { 0, { 0 } };
    if (c->in[k].kind != ARG_TENSOR) return s;   /* a number is 0-d: the rank check rejects it */
    s.ndim = c->in[k].ndim;
    for (int i = 0; i < s.ndim; i++) s.d[i] = c->in[k].dims[i];
    return s;
}

/* A matrix (or a stack of them), square when asked, whose sides fit LAPACK's 32-bit ints. */
static int check_matrix(const OpCall *c, const Shape *s, bool square) {
    const char *name = op_info[c->op].name;
    char b[128];
    if (s->ndim < 2) {
        op_failk(ERRK_SHAPE, "%s needs a matrix or a stack of matrices (rank 2 or more), got shape %s", name, shape_str(s, b, sizeof b));
        return -1;
    }
    int64_t m = s->d[s->ndim - 2], n = s->d[s->ndim - 1];
    if (square && m != n) {
        op_failk(ERRK_SHAPE, "%s needs square matrices, got shape %s", name, shape_str(s, b, sizeof b));
        return -1;
    }
    if (m > INT_MAX || n > INT_MAX) {
        op_failk(ERRK_VALUE, "%s: matrix dimension %lld is too large for LAPACK", name, (long long)(m > n ? m : n));
        return -1;
    }
    return 0;
}

/* The batch axes of s (all but the last `keep`) followed by the given tail. */
static Shape batch_with(const Shape *s, int keep, int ntail, int64_t t0, int64_t t1) {
    Shape r = *s;
    r.ndim = s->ndim - keep;
    if (ntail > 0) r.d[r.ndim++] = t0;
    if (ntail > 1) r.d[r.ndim++] = t1;
    return r;
}

/* NumPy 2: b is a vector only when it is 1-D ((n,n),(n)->(n)); otherwise it is a stack of
 * [n, k] matrices whose batch axes broadcast with a's. */
static int infer_solve(const OpCall *c, Shape *out) {
    Shape a = operand_shape(c, 0), b = operand_shape(c, 1);
    if (check_matrix(c, &a, true)) return -1;
    int64_t n = a.d[a.ndim - 1];
    char s1[128], s2[128];
    bool vec = b.ndim == 1;
    if (b.ndim == 0 || b.d[vec ? 0 : b.ndim - 2] != n) {
        op_failk(ERRK_SHAPE, "shape mismatch for 'solve': %s and %s", shape_str(&a, s1, sizeof s1), shape_str(&b, s2, sizeof s2));
        return -1;
    }
    if (vec) { *out = batch_with(&a, 1, 0, 0, 0); return 0; }
    if (check_matrix(c, &b, false)) return -1;   /* b's k must fit LAPACK too */
    /* broadcast the batch axes, right-aligned */
    int na = a.ndim - 2, nb = b.ndim - 2, nd = na > nb ? na : nb;
    out->ndim = nd + 2;
    for (int i = 0; i < nd; i++) {
        int64_t da = i - (nd - na) >= 0 ? a.d[i - (nd - na)] : 1, db = i - (nd - nb) >= 0 ? b.d[i - (nd - nb)] : 1;
        if (da != db && da != 1 && db != 1) {
            op_failk(ERRK_SHAPE, "shape mismatch for 'solve': %s and %s", shape_str(&a, s1, sizeof s1), shape_str(&b, s2, sizeof s2));
            return -1;
        }
        out->d[i] = da == 1 ? db : da;
    }
    out->d[nd] = n;
    out->d[nd + 1] = b.d[b.ndim - 1];
    return 0;
}

int infer_lapack(const OpCall *c, Shape *out, DType *dt) {
    Shape a = operand_shape(c, 0);
    bool square = c->op != OP_QR && c->op != OP_SVD;
    DType ft = lapack_dtype(c->in[0].dtype);
    for (int k = 0; k < op_info[c->op].nout; k++) dt[k] = ft;
    if (c->op == OP_SOLVE) {
        dt[0] = ft > lapack_dtype(c->in[1].dtype) ? ft : lapack_dtype(c->in[1].dtype);
        return infer_solve(c, out) || shape_count(out) < 0 ? -1 : 0;
    }
    if (check_matrix(c, &a, square)) return -1;
    int64_t m = a.d[a.ndim - 2], n = a.d[a.ndim - 1], k = m < n ? m : n;
    switch (c->op) {
    case OP_DET: out[0] = batch_with(&a, 2, 0, 0, 0); break;
    case OP_QR:
        out[0] = batch_with(&a, 2, 2, m, k);
        out[1] = batch_with(&a, 2, 2, k, n);
        break;
    case OP_SVD:
        out[0] = batch_with(&a, 2, 2, m, k);
        out[1] = batch_with(&a, 2, 1, k, 0);
        out[2] = batch_with(&a, 2, 2, k, n);
        break;
    case OP_EIGH:
        out[0] = batch_with(&a, 2, 1, n, 0);
        out[1] = a;
        break;
    default: out[0] = a; break;   /* inv, cholesky */
    }
    return 0;
}
