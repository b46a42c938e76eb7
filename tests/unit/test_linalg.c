/* test_linalg.c - the LAPACK family (solve, inv, det, cholesky, qr, svd, eigh) called as
 * op_run calls it: infer_lapack for shapes and dtypes, then cpu_lapack. Expected values were
 * printed by NumPy 2.4.6 (numpy.linalg, pip wheel) and pasted here, never by TSL; LAPACK
 * builds may differ in the last bits, so values are compared with a tolerance, and the
 * factorizations are also checked for what they promise (a == q @ r, orthonormal columns,
 * a @ v == v * w). */
#include <math.h>
#include <string.h>
#include "suites.h"
#include "cpu/cpu.h"
#include "cpu/cpu.h"

#define F64_TOL 1e-12
#define F32_TOL 2e-6

/* A tensor of the given shape filled from v (row-major; NULL: left unset). */
static Tensor *make(DType dt, int ndim, const int64_t *dims, const double *v) {
    Shape s = { ndim, { 0 } };
    for (int i = 0; i < ndim; i++) s.d[i] = dims[i];
    Tensor *t = tensor_new(dt, &s);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; v && i < t->size; i++) tensor_set(t, i, v[i]);
    return t;
}

static Tensor *mat(DType dt, int64_t r, int64_t c, const double *v) { return make(dt, 2, (int64_t[]){ r, c }, v); }

/* What op_run does for a LAPACK op: infer, allocate the results, run the kernel. 0 with
 * out[0..nout), or -1 (message in op_error()) with nothing to release. */
static int call(OpCode op, const Tensor *a, const Tensor *b, Tensor **out) {
    OpArg in[2] = { op_arg_tensor(a), { 0 } };
    if (b) in[1] = op_arg_tensor(b);
    OpAttrs at;
    memset(&at, 0, sizeof at);
    OpCall c = { .op = op, .nin = b ? 2 : 1, .in = in, .at = &at };
    Shape s[OP_MAX_OUT];
    DType dt[OP_MAX_OUT];
    int nout = op_info[op].nout;
    if (infer_lapack(&c, s, dt)) return -1;
    for (int k = 0; k < nout; k++) ck_assert_ptr_nonnull(out[k] = tensor_new(dt[k], &s[k]));
    if (cpu_lapack(&c, out) == 0) return 0;
    for (int k = 0; k < nout; k++) tensor_release(out[k]);
    return -1;
}

/* Inference alone, as the static compiler runs it: shapes and dtypes, no data. */
static int infer_meta(OpCode op, DType da, Shape sa, DType db, Shape sb, Shape *out, DType *dt) {
    OpArg in[2] = { op_arg_meta(da, &sa), op_arg_meta(db, &sb) };
    OpAttrs at;
    memset(&at, 0, sizeof at);
    OpCall c = { .op = op, .nin = op == OP_SOLVE ? 2 : 1, .in = in, .at = &at };
    return infer_lapack(&c, out, dt);
}

static void release(Tensor **t, int n) {
    for (int i = 0; i < n; i++) tensor_release(t[i]);
}

static void expect_shape(const Tensor *t, DType dt, int ndim, const int64_t *dims) {
    ck_assert_int_eq(t->dtype, dt);
    ck_assert_int_eq(t->ndim, ndim);
    for (int i = 0; i < ndim; i++) ck_assert_int_eq(t->shape[i], dims[i]);
}

static void expect_values(const Tensor *t, int64_t n, const double *want, double tol) {
    ck_assert_int_eq(t->size, n);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(tensor_get(t, i) - want[i]) <= tol * (1 + fabs(want[i])), "element %lld: got %.17g want %.17g",
                      (long long)i, tensor_get(t, i), want[i]);
}

/* Element [i, j] of matrix `b` of a [..., rows, cols] tensor. */
static double at2(const Tensor *t, int64_t b, int64_t i, int64_t j) {
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    return tensor_get(t, b * r * c + i * c + j);
}

/* Matrix b of x @ diag(d) @ y equals matrix b of want (d NULL: no diagonal). */
static void expect_product(const Tensor *x, const Tensor *d, const Tensor *y, const Tensor *want, int64_t b, double tol) {
    int64_t m = x->shape[x->ndim - 2], k = x->shape[x->ndim - 1], n = y->shape[y->ndim - 1];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t p = 0; p < k; p++) s += at2(x, b, i, p) * (d ? tensor_get(d, b * k + p) : 1) * at2(y, b, p, j);
            double w = at2(want, b, i, j);
            ck_assert_msg(fabs(s - w) <= tol * (1 + fabs(w)), "[%lld, %lld]: got %.17g want %.17g", (long long)i,
                          (long long)j, s, w);
        }
}

/* The columns (rows when `rows`) of matrix b of t are orthonormal. */
static void expect_orthonormal(const Tensor *t, int64_t b, bool rows, double tol) {
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    int64_t nv = rows ? r : c, len = rows ? c : r;
    for (int64_t u = 0; u < nv; u++)
        for (int64_t v = 0; v < nv; v++) {
            double s = 0;
            for (int64_t p = 0; p < len; p++) s += rows ? at2(t, b, u, p) * at2(t, b, v, p) : at2(t, b, p, u) * at2(t, b, p, v);
            ck_assert_msg(fabs(s - (u == v)) <= tol, "vectors %lld, %lld: dot %.17g", (long long)u, (long long)v, s);
        }
}

/* Matrix b of t, transposed when asked, as a new 2-D tensor. */
static Tensor *matrix_of(const Tensor *t, int64_t b, bool transposed) {
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    Tensor *m = transposed ? mat(t->dtype, c, r, NULL) : mat(t->dtype, r, c, NULL);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) tensor_set(m, transposed ? j * r + i : i * c + j, at2(t, b, i, j));
    return m;
}

/* The test matrices (NumPy names in the comments of the expected values). */
static const double A3[] = { 4, 1, 2, 1, 5, -1, 2, -1, 6 };             /* symmetric positive definite */
static const double AU[] = { 4, 99, -7, 1, 5, 5, 2, -1, 6 };            /* A3's lower triangle, junk above */
static const double G[] = { 2, 1, 0, 1, 3, 1, -1, 2, 4 };               /* general, det 15 */
static const double B3[] = { 1, 2, 0, -1, 3, 4 };                       /* 3 x 2 */
static const double AB[] = { 2, 1, 1, 3, 1, 2, 3, 4 };                  /* two 2 x 2 */
static const double SING[] = { 1, 2, 2, 4 };
static const double T32[] = { 1, 2, 3, 4, 5, 6 };                       /* T 3 x 2, W 2 x 3 */

START_TEST(linalg_infer_shapes_and_errors) {
    Shape out[3];
    DType dt[3];
    /* NumPy 2: b is a vector only when 1-D; batch axes broadcast */
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_F32, (Shape){ 3, { 2, 3, 3 } }, DT_F32, (Shape){ 1, { 3 } }, out, dt), 0);
    ck_assert_int_eq(out[0].ndim, 2);
    ck_assert_int_eq(out[0].d[0], 2);
    ck_assert_int_eq(out[0].d[1], 3);
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_F32, (Shape){ 3, { 2, 3, 3 } }, DT_F32, (Shape){ 2, { 3, 2 } }, out, dt), 0);
    ck_assert_int_eq(out[0].ndim, 3);
    ck_assert_int_eq(out[0].d[2], 2);
    /* numpy: solve(eye(3)[None], ones((4, 3, 1))).shape == (4, 3, 1) */
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_I64, (Shape){ 3, { 1, 3, 3 } }, DT_F64, (Shape){ 3, { 4, 3, 1 } }, out, dt), 0);
    ck_assert_int_eq(out[0].d[0], 4);
    ck_assert_int_eq(dt[0], DT_F64);
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_I64, (Shape){ 2, { 2, 2 } }, DT_BOOL, (Shape){ 1, { 2 } }, out, dt), 0);
    ck_assert_int_eq(dt[0], DT_F32);
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_F32, (Shape){ 3, { 2, 3, 3 } }, DT_F32, (Shape){ 2, { 2, 3 } }, out, dt), -1);
    ck_assert_str_eq(op_error(), "shape mismatch for 'solve': [2, 3, 3] and [2, 3]");
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_F32, (Shape){ 3, { 3, 2, 2 } }, DT_F32, (Shape){ 3, { 2, 2, 1 } }, out, dt), -1);
    ck_assert_str_eq(op_error(), "shape mismatch for 'solve': [3, 2, 2] and [2, 2, 1]");
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_F32, (Shape){ 2, { 2, 3 } }, DT_F32, (Shape){ 1, { 2 } }, out, dt), -1);
    ck_assert_str_eq(op_error(), "solve needs square matrices, got shape [2, 3]");
    ck_assert_int_eq(infer_meta(OP_SOLVE, DT_F32, (Shape){ 2, { 2, 2 } }, DT_F32, (Shape){ 0, { 0 } }, out, dt), -1);
    ck_assert_str_eq(op_error(), "shape mismatch for 'solve': [2, 2] and []");

    ck_assert_int_eq(infer_meta(OP_DET, DT_I64, (Shape){ 4, { 5, 2, 3, 3 } }, 0, (Shape){ 0 }, out, dt), 0);
    ck_assert_int_eq(out[0].ndim, 2);
    ck_assert_int_eq(dt[0], DT_F32);
    ck_assert_int_eq(infer_meta(OP_QR, DT_F64, (Shape){ 3, { 2, 5, 3 } }, 0, (Shape){ 0 }, out, dt), 0);
    ck_assert(out[0].ndim == 3 && out[0].d[0] == 2 && out[0].d[1] == 5 && out[0].d[2] == 3);   /* q */
    ck_assert(out[1].ndim == 3 && out[1].d[1] == 3 && out[1].d[2] == 3);                       /* r */
    ck_assert(dt[0] == DT_F64 && dt[1] == DT_F64);
    ck_assert_int_eq(infer_meta(OP_SVD, DT_F32, (Shape){ 2, { 2, 5 } }, 0, (Shape){ 0 }, out, dt), 0);
    ck_assert(out[0].ndim == 2 && out[0].d[0] == 2 && out[0].d[1] == 2);   /* u */
    ck_assert(out[1].ndim == 1 && out[1].d[0] == 2);                       /* s */
    ck_assert(out[2].ndim == 2 && out[2].d[0] == 2 && out[2].d[1] == 5);   /* vt */
    ck_assert_int_eq(infer_meta(OP_EIGH, DT_BOOL, (Shape){ 3, { 7, 4, 4 } }, 0, (Shape){ 0 }, out, dt), 0);
    ck_assert(out[0].ndim == 2 && out[0].d[0] == 7 && out[0].d[1] == 4);
    ck_assert(out[1].ndim == 3 && out[1].d[2] == 4 && dt[0] == DT_F32 && dt[1] == DT_F32);

    ck_assert_int_eq(infer_meta(OP_INV, DT_F32, (Shape){ 1, { 3 } }, 0, (Shape){ 0 }, out, dt), -1);
    ck_assert_str_eq(op_error(), "inv needs a matrix or a stack of matrices (rank 2 or more), got shape [3]");
    ck_assert_int_eq(infer_meta(OP_CHOLESKY, DT_F32, (Shape){ 3, { 4, 2, 3 } }, 0, (Shape){ 0 }, out, dt), -1);
    ck_assert_str_eq(op_error(), "cholesky needs square matrices, got shape [4, 2, 3]");
    ck_assert_int_eq(infer_meta(OP_EIGH, DT_F32, (Shape){ 2, { 3, 2 } }, 0, (Shape){ 0 }, out, dt), -1);
    ck_assert_str_eq(op_error(), "eigh needs square matrices, got shape [3, 2]");
    ck_assert_int_eq(infer_meta(OP_SVD, DT_F32, (Shape){ 2, { 3, 4294967296LL } }, 0, (Shape){ 0 }, out, dt), -1);
    ck_assert_str_eq(op_error(), "svd: matrix dimension 4294967296 is too large for LAPACK");
    /* a number operand is 0-d */
    OpArg num = op_arg_num(2, false);
    OpAttrs at;
    memset(&at, 0, sizeof at);
    OpCall c = { .op = OP_DET, .nin = 1, .in = &num, .at = &at };
    ck_assert_int_eq(infer_lapack(&c, out, dt), -1);
    ck_assert_str_eq(op_error(), "det needs a matrix or a stack of matrices (rank 2 or more), got shape []");
}
END_TEST

START_TEST(linalg_solve) {
    Tensor *a = mat(DT_F32, 3, 3, A3), *b = make(DT_F32, 1, (int64_t[]){ 3 }, (double[]){ 1, 2, 3 }), *x[1];
    ck_assert_int_eq(call(OP_SOLVE, a, b, x), 0);
    expect_shape(x[0], DT_F32, 1, (int64_t[]){ 3 });
    /* numpy: solve(A3.astype(float32), [1, 2, 3]) */
    expect_values(x[0], 3, (double[]){ -0.23255814611911774, 0.5813953280448914, 0.6744186282157898 }, F32_TOL);
    release(x, 1);
    tensor_release(a);
    tensor_release(b);

    /* i64 a with f64 b: both go to f64 */
    a = mat(DT_I64, 3, 3, G);
    b = mat(DT_F64, 3, 2, B3);
    Tensor *a_before = tensor_copy(a), *b_before = tensor_copy(b);
    ck_assert_int_eq(call(OP_SOLVE, a, b, x), 0);
    expect_shape(x[0], DT_F64, 2, (int64_t[]){ 3, 2 });
    /* numpy: solve(G, B3) */
    expect_values(x[0], 6, (double[]){ 0.8666666666666667, 1.8666666666666667, -0.7333333333333334, -1.7333333333333334,
                                       1.3333333333333333, 2.333333333333333 }, F64_TOL);
    ck_assert(tensor_equal(a, a_before) && tensor_equal(b, b_before));   /* operands untouched */
    release(x, 1);
    tensor_release(a); tensor_release(a_before); tensor_release(b); tensor_release(b_before);

    /* a batch of two with b broadcast, as a [2, 1] matrix and as a vector */
    a = make(DT_F64, 3, (int64_t[]){ 2, 2, 2 }, AB);
    b = mat(DT_F64, 2, 1, (double[]){ 1, 2 });
    ck_assert_int_eq(call(OP_SOLVE, a, b, x), 0);
    expect_shape(x[0], DT_F64, 3, (int64_t[]){ 2, 2, 1 });
    expect_values(x[0], 4, (double[]){ 0.2, 0.6, 0.0, 0.5 }, F64_TOL);   /* numpy: solve(Ab, [[1], [2]]) */
    release(x, 1);
    tensor_release(b);
    b = make(DT_F64, 1, (int64_t[]){ 2 }, (double[]){ 1, 2 });
    ck_assert_int_eq(call(OP_SOLVE, a, b, x), 0);
    expect_shape(x[0], DT_F64, 2, (int64_t[]){ 2, 2 });
    expect_values(x[0], 4, (double[]){ 0.2, 0.6, 0.0, 0.5 }, F64_TOL);   /* numpy: solve(Ab, [1, 2]) */
    release(x, 1);
    tensor_release(a);

    /* numpy: LinAlgError: Singular matrix */
    a = mat(DT_F64, 2, 2, SING);
    ck_assert_int_eq(call(OP_SOLVE, a, b, x), -1);
    ck_assert_str_eq(op_error(), "solve: singular matrix");
    tensor_release(a);
    tensor_release(b);
}
END_TEST

START_TEST(linalg_inv) {
    Tensor *a = mat(DT_F64, 3, 3, G), *x[1];
    ck_assert_int_eq(call(OP_INV, a, NULL, x), 0);
    expect_shape(x[0], DT_F64, 2, (int64_t[]){ 3, 3 });
    /* numpy: inv(G) */
    expect_values(x[0], 9, (double[]){ 0.6666666666666666, -0.26666666666666666, 0.06666666666666667, -0.3333333333333333,
                                       0.5333333333333333, -0.13333333333333333, 0.3333333333333333, -0.3333333333333333,
                                       0.3333333333333333 }, F64_TOL);
    Tensor *eye = mat(DT_F64, 3, 3, (double[]){ 1, 0, 0, 0, 1, 0, 0, 0, 1 });
    expect_product(a, NULL, x[0], eye, 0, 1e-12);
    tensor_release(eye);
    release(x, 1);
    tensor_release(a);

    a = mat(DT_F32, 3, 3, G);
    ck_assert_int_eq(call(OP_INV, a, NULL, x), 0);
    ck_assert_int_eq(x[0]->dtype, DT_F32);
    /* numpy: inv(G.astype(float32)) */
    expect_values(x[0], 9, (double[]){ 0.6666666865348816, -0.2666666805744171, 0.06666667014360428, -0.3333333432674408,
                                       0.5333333611488342, -0.13333334028720856, 0.3333333432674408, -0.3333333432674408,
                                       0.3333333432674408 }, F32_TOL);
    release(x, 1);
    tensor_release(a);

    a = make(DT_F64, 3, (int64_t[]){ 2, 2, 2 }, AB);
    ck_assert_int_eq(call(OP_INV, a, NULL, x), 0);
    expect_shape(x[0], DT_F64, 3, (int64_t[]){ 2, 2, 2 });
    /* numpy: inv(Ab) */
    expect_values(x[0], 8, (double[]){ 0.6, -0.2, -0.2, 0.4, -1.9999999999999996, 0.9999999999999998, 1.4999999999999998,
                                       -0.4999999999999999 }, F64_TOL);
    release(x, 1);
    tensor_release(a);

    a = mat(DT_F32, 2, 2, SING);
    ck_assert_int_eq(call(OP_INV, a, NULL, x), -1);
    ck_assert_str_eq(op_error(), "inv: singular matrix");   /* numpy: LinAlgError: Singular matrix */
    tensor_release(a);
}
END_TEST

START_TEST(linalg_det) {
    Tensor *a = mat(DT_F64, 3, 3, G), *d[1];
    ck_assert_int_eq(call(OP_DET, a, NULL, d), 0);
    expect_shape(d[0], DT_F64, 0, NULL);
    expect_values(d[0], 1, (double[]){ 15.000000000000007 }, F64_TOL);   /* numpy: det(G) */
    release(d, 1);
    tensor_release(a);

    a = mat(DT_I64, 3, 3, G);   /* i64 computes in f32 */
    ck_assert_int_eq(call(OP_DET, a, NULL, d), 0);
    expect_shape(d[0], DT_F32, 0, NULL);
    expect_values(d[0], 1, (double[]){ 15.0 }, F32_TOL);   /* numpy: det(G.astype(float32)) */
    release(d, 1);
    tensor_release(a);

    /* row exchanges flip the sign; numpy: det([[0, 1, 2], [1, 0, 3], [4, -3, 8]]) */
    a = mat(DT_F64, 3, 3, (double[]){ 0, 1, 2, 1, 0, 3, 4, -3, 8 });
    ck_assert_int_eq(call(OP_DET, a, NULL, d), 0);
    expect_values(d[0], 1, (double[]){ -2.0 }, F64_TOL);
    release(d, 1);
    tensor_release(a);

    a = make(DT_F64, 3, (int64_t[]){ 2, 2, 2 }, AB);
    ck_assert_int_eq(call(OP_DET, a, NULL, d), 0);
    expect_shape(d[0], DT_F64, 1, (int64_t[]){ 2 });
    expect_values(d[0], 2, (double[]){ 5.000000000000001, -2.0000000000000004 }, F64_TOL);   /* numpy: det(Ab) */
    release(d, 1);
    tensor_release(a);

    a = mat(DT_F64, 2, 2, SING);   /* singular: 0, no error (numpy: 0.0) */
    ck_assert_int_eq(call(OP_DET, a, NULL, d), 0);
    ck_assert(tensor_get(d[0], 0) == 0);
    release(d, 1);
    tensor_release(a);
}
END_TEST

START_TEST(linalg_cholesky) {
    /* numpy: cholesky(A3); only the lower triangle is read, so AU gives the same */
    const double want[] = { 2.0, 0.0, 0.0, 0.5, 2.179449471770337, 0.0, 1.0, -0.6882472016116852, 2.127513992779762 };
    Tensor *a = mat(DT_F64, 3, 3, A3), *au = mat(DT_F64, 3, 3, AU), *l[1];
    ck_assert_int_eq(call(OP_CHOLESKY, a, NULL, l), 0);
    expect_shape(l[0], DT_F64, 2, (int64_t[]){ 3, 3 });
    expect_values(l[0], 9, want, F64_TOL);
    ck_assert(tensor_get(l[0], 1) == 0 && tensor_get(l[0], 2) == 0 && tensor_get(l[0], 5) == 0);
    release(l, 1);
    ck_assert_int_eq(call(OP_CHOLESKY, au, NULL, l), 0);
    expect_values(l[0], 9, want, F64_TOL);
    release(l, 1);
    tensor_release(au);
    tensor_release(a);

    a = mat(DT_F32, 3, 3, A3);
    ck_assert_int_eq(call(OP_CHOLESKY, a, NULL, l), 0);
    ck_assert_int_eq(l[0]->dtype, DT_F32);
    /* numpy: cholesky(A3.astype(float32)) */
    expect_values(l[0], 9, (double[]){ 2.0, 0.0, 0.0, 0.5, 2.1794495582580566, 0.0, 1.0, -0.6882472038269043, 2.127513885498047 },
                  F32_TOL);
    release(l, 1);
    tensor_release(a);

    /* numpy: LinAlgError: Matrix is not positive definite */
    a = make(DT_F64, 3, (int64_t[]){ 2, 2, 2 }, (double[]){ 4, 2, 2, 3, 1, 2, 2, 1 });
    ck_assert_int_eq(call(OP_CHOLESKY, a, NULL, l), -1);
    ck_assert_str_eq(op_error(), "cholesky: matrix is not positive definite");
    tensor_release(a);
}
END_TEST

/* qr of a: q and r against NumPy, a == q @ r, q's columns orthonormal, r upper triangular. */
static void check_qr(DType dt, int64_t m, int64_t n, const double *av, const double *wq, const double *wr, double tol) {
    Tensor *a = mat(dt, m, n, av), *qr[2];
    int64_t k = m < n ? m : n;
    ck_assert_int_eq(call(OP_QR, a, NULL, qr), 0);
    expect_shape(qr[0], dt, 2, (int64_t[]){ m, k });
    expect_shape(qr[1], dt, 2, (int64_t[]){ k, n });
    expect_values(qr[0], m * k, wq, tol);
    expect_values(qr[1], k * n, wr, tol);
    expect_product(qr[0], NULL, qr[1], a, 0, 4 * tol);
    expect_orthonormal(qr[0], 0, false, 4 * tol);
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < i; j++) ck_assert(at2(qr[1], 0, i, j) == 0);
    release(qr, 2);
    tensor_release(a);
}

START_TEST(linalg_qr) {
    /* numpy: qr(T) with T = [[1, 2], [3, 4], [5, 6]] */
    check_qr(DT_F64, 3, 2, T32,
             (double[]){ -0.16903085094570325, 0.8970852271450607, -0.50709255283711, 0.27602622373694136, -0.8451542547285166,
                         -0.345032779671177 },
             (double[]){ -5.916079783099616, -7.437357441610946, 0.0, 0.8280786712108248 }, F64_TOL);
    /* numpy: qr(W) with W = [[1, 2, 3], [4, 5, 6]] */
    check_qr(DT_F64, 2, 3, T32, (double[]){ -0.24253562503633308, -0.970142500145332, -0.970142500145332, 0.24253562503633289 },
             (double[]){ -4.123105625617661, -5.335783750799326, -6.5484618759809905, 0.0, -0.7276068751089995,
                         -1.455213750217998 },
             F64_TOL);
    /* numpy: qr(G.astype(float32)) */
    check_qr(DT_F32, 3, 3, G,
             (double[]){ -0.8164966106414795, -5.430037470862007e-18, 0.5773502588272095, -0.40824830532073975,
                         -0.7071067690849304, -0.5773502588272095, 0.40824830532073975, -0.7071067690849304, 0.5773502588272095 },
             (double[]){ -2.4494898319244385, -1.2247449159622192, 1.2247449159622192, 0.0, -3.535533905029297, -3.535533905029297,
                         0.0, 0.0, 1.7320507764816284 },
             F32_TOL);
}
END_TEST

/* svd of a: u, s, vt against NumPy, a == u @ diag(s) @ vt, orthonormal u columns, vt rows. */
static void check_svd(DType dt, int64_t m, int64_t n, const double *av, const double *wu, const double *ws, const double *wv,
                      double tol) {
    Tensor *a = mat(dt, m, n, av), *r[3];
    int64_t k = m < n ? m : n;
    ck_assert_int_eq(call(OP_SVD, a, NULL, r), 0);
    expect_shape(r[0], dt, 2, (int64_t[]){ m, k });
    expect_shape(r[1], dt, 1, (int64_t[]){ k });
    expect_shape(r[2], dt, 2, (int64_t[]){ k, n });
    expect_values(r[0], m * k, wu, tol);
    expect_values(r[1], k, ws, tol);
    expect_values(r[2], k * n, wv, tol);
    expect_product(r[0], r[1], r[2], a, 0, 8 * tol);
    expect_orthonormal(r[0], 0, false, 4 * tol);
    expect_orthonormal(r[2], 0, true, 4 * tol);
    release(r, 3);
    tensor_release(a);
}

START_TEST(linalg_svd) {
    /* numpy: svd(T, full_matrices=False) */
    check_svd(DT_F64, 3, 2, T32,
              (double[]){ -0.2298476964000714, 0.8834610176985254, -0.5247448187602937, 0.24078249213254635, -0.8196419411205158,
                          -0.4018960334334318 },
              (double[]){ 9.52551809156511, 0.5143005806586441 },
              (double[]){ -0.6196294838293405, -0.7848944532670524, -0.7848944532670524, 0.6196294838293405 }, F64_TOL);
    /* numpy: svd(W, full_matrices=False) */
    check_svd(DT_F64, 2, 3, T32, (double[]){ -0.38631770311861147, -0.9223657800770585, -0.9223657800770585, 0.38631770311861147 },
              (double[]){ 9.508032000695724, 0.7728696356734844 },
              (double[]){ -0.4286671335486262, -0.5663069188480352, -0.7039467041474442, 0.8059639085892978, 0.11238241409659352,
                          -0.5811990803961099 },
              F64_TOL);
    /* numpy: svd(G.astype(float32), full_matrices=False) */
    check_svd(DT_F32, 3, 3, G,
              (double[]){ 0.12144657224416733, 0.6581031084060669, -0.7430686950683594, 0.5247942209243774, 0.5928512811660767,
                          0.6108341813087463, 0.842521071434021, -0.464141845703125, -0.2733689248561859 },
              (double[]){ 5.158097743988037, 3.082895278930664, 0.9432849884033203 },
              (double[]){ -0.01450800895690918, 0.6554492712020874, 0.7550998330116272, 0.7697956562042236, 0.4892716705799103,
                          -0.409912109375, -0.6381255388259888, 0.5753255486488342, -0.5116603374481201 },
              4 * F32_TOL);
}
END_TEST

START_TEST(linalg_eigh) {
    /* numpy: eigh(A3); AU has A3's lower triangle, so the same (UPLO='L') */
    const double ww[] = { 2.104893484072468, 5.602704930702909, 7.292401585224621 };
    const double wv[] = { 0.7525758324465758, 0.45794385298172985, 0.47319873619187913, -0.43170413283652276, 0.8857356387827167,
                          -0.17059871008316296, -0.4972536154812847, -0.07589338381190522, 0.8642794896237964 };
    Tensor *a = mat(DT_F64, 3, 3, A3), *au = mat(DT_F64, 3, 3, AU), *r[2];
    ck_assert_int_eq(call(OP_EIGH, a, NULL, r), 0);
    expect_shape(r[0], DT_F64, 1, (int64_t[]){ 3 });
    expect_shape(r[1], DT_F64, 2, (int64_t[]){ 3, 3 });
    expect_values(r[0], 3, ww, F64_TOL);
    expect_values(r[1], 9, wv, F64_TOL);
    expect_orthonormal(r[1], 0, false, 1e-12);
    /* a == v @ diag(w) @ v.T */
    Tensor *vt = matrix_of(r[1], 0, true);
    expect_product(r[1], r[0], vt, a, 0, 1e-12);
    tensor_release(vt);
    release(r, 2);
    ck_assert_int_eq(call(OP_EIGH, au, NULL, r), 0);
    expect_values(r[0], 3, ww, F64_TOL);
    expect_values(r[1], 9, wv, F64_TOL);
    release(r, 2);
    tensor_release(au);
    tensor_release(a);

    a = mat(DT_F32, 3, 3, A3);
    ck_assert_int_eq(call(OP_EIGH, a, NULL, r), 0);
    ck_assert(r[0]->dtype == DT_F32 && r[1]->dtype == DT_F32);
    /* numpy: eigh(A3.astype(float32)) */
    expect_values(r[0], 3, (double[]){ 2.104893445968628, 5.602705001831055, 7.2924017906188965 }, F32_TOL);
    expect_values(r[1], 9, (double[]){ 0.7525758147239685, 0.457943856716156, 0.4731987416744232, -0.4317041337490082,
                                       0.8857356309890747, -0.17059871554374695, -0.4972536265850067, -0.07589338719844818,
                                       0.8642795085906982 }, 4 * F32_TOL);
    release(r, 2);
    tensor_release(a);
}
END_TEST

/* Each matrix of a batch gives exactly what it gives alone (same routine, same input). */
static void expect_batch_matches(OpCode op, const Tensor *a) {
    int nout = op_info[op].nout;
    Tensor *all[3], *one[3];
    ck_assert_int_eq(call(op, a, NULL, all), 0);
    for (int64_t b = 0; b < a->shape[0]; b++) {
        Tensor *m = matrix_of(a, b, false);
        ck_assert_int_eq(call(op, m, NULL, one), 0);
        for (int k = 0; k < nout; k++) {
            ck_assert_int_eq(all[k]->ndim, one[k]->ndim + 1);
            int64_t n = one[k]->size;
            size_t es = dtype_size(one[k]->dtype);
            ck_assert(!memcmp((char *)all[k]->data + (size_t)(b * n) * es, one[k]->data, (size_t)n * es));
        }
        release(one, nout);
        tensor_release(m);
    }
    release(all, nout);
}

START_TEST(linalg_batched) {
    /* two 3 x 2 and two 3 x 3 matrices */
    double t2[12], g2[18], s2[18];
    for (int i = 0; i < 6; i++) { t2[i] = T32[i]; t2[6 + i] = T32[i] * T32[i] - 3; }
    for (int i = 0; i < 9; i++) {
        g2[i] = G[i];
        g2[9 + i] = G[8 - i] + (i % 4 == 0);
        s2[i] = A3[i];
        s2[9 + i] = 2 * A3[i] + (i % 4 == 0);   /* still positive definite */
    }
    Tensor *t = make(DT_F64, 3, (int64_t[]){ 2, 3, 2 }, t2), *g = make(DT_F32, 3, (int64_t[]){ 2, 3, 3 }, g2);
    Tensor *s = make(DT_F64, 3, (int64_t[]){ 2, 3, 3 }, s2);
    expect_batch_matches(OP_QR, t);
    expect_batch_matches(OP_SVD, t);
    expect_batch_matches(OP_QR, g);
    expect_batch_matches(OP_SVD, g);
    expect_batch_matches(OP_INV, g);
    expect_batch_matches(OP_DET, g);
    expect_batch_matches(OP_CHOLESKY, s);
    expect_batch_matches(OP_EIGH, s);
    tensor_release(t);
    tensor_release(g);
    tensor_release(s);
}
END_TEST

/* NaN: NumPy raises for svd and eigh only ("SVD did not converge", "Eigenvalues did not
 * converge"); solve, inv, det, cholesky and qr return whatever LAPACK gives. */
START_TEST(linalg_nan) {
    Tensor *a = mat(DT_F64, 3, 3, (double[]){ 3, 1, 1, 1, NAN, 1, 1, 1, 3 }), *r[3];
    ck_assert_int_eq(call(OP_SVD, a, NULL, r), -1);
    ck_assert_str_eq(op_error(), "svd: did not converge");
    ck_assert_int_eq(call(OP_EIGH, a, NULL, r), -1);
    ck_assert_str_eq(op_error(), "eigh: did not converge");
    ck_assert_int_eq(call(OP_DET, a, NULL, r), 0);
    ck_assert(isnan(tensor_get(r[0], 0)));
    release(r, 1);
    tensor_release(a);
}
END_TEST

/* Size-0 matrices as NumPy: det of 0 x 0 is 1, the rest are empty. */
START_TEST(linalg_empty) {
    Tensor *a = make(DT_F64, 3, (int64_t[]){ 2, 0, 0 }, NULL), *r[3];
    ck_assert_int_eq(call(OP_DET, a, NULL, r), 0);
    expect_shape(r[0], DT_F64, 1, (int64_t[]){ 2 });
    expect_values(r[0], 2, (double[]){ 1, 1 }, 0);
    release(r, 1);
    ck_assert_int_eq(call(OP_INV, a, NULL, r), 0);
    expect_shape(r[0], DT_F64, 3, (int64_t[]){ 2, 0, 0 });
    release(r, 1);
    ck_assert_int_eq(call(OP_EIGH, a, NULL, r), 0);
    expect_shape(r[0], DT_F64, 2, (int64_t[]){ 2, 0 });
    release(r, 2);
    Tensor *b = make(DT_F64, 1, (int64_t[]){ 0 }, NULL);   /* numpy: solve(zeros((2, 0, 0)), zeros(0)).shape == (2, 0) */
    ck_assert_int_eq(call(OP_SOLVE, a, b, r), 0);
    expect_shape(r[0], DT_F64, 2, (int64_t[]){ 2, 0 });
    release(r, 1);
    tensor_release(b);
    tensor_release(a);
    a = make(DT_F32, 2, (int64_t[]){ 3, 0 }, NULL);
    ck_assert_int_eq(call(OP_QR, a, NULL, r), 0);
    expect_shape(r[0], DT_F32, 2, (int64_t[]){ 3, 0 });
    expect_shape(r[1], DT_F32, 2, (int64_t[]){ 0, 0 });
    release(r, 2);
    ck_assert_int_eq(call(OP_SVD, a, NULL, r), 0);
    expect_shape(r[1], DT_F32, 1, (int64_t[]){ 0 });
    expect_shape(r[2], DT_F32, 2, (int64_t[]){ 0, 0 });
    release(r, 3);
    tensor_release(a);
}
END_TEST

Suite *linalg_suite(void) {
    Suite *s = suite_create("linalg");
    TCase *tc = tcase_create("lapack");
    tcase_add_test(tc, linalg_infer_shapes_and_errors);
    tcase_add_test(tc, linalg_solve);
    tcase_add_test(tc, linalg_inv);
    tcase_add_test(tc, linalg_det);
    tcase_add_test(tc, linalg_cholesky);
    tcase_add_test(tc, linalg_qr);
    tcase_add_test(tc, linalg_svd);
    tcase_add_test(tc, linalg_eigh);
    tcase_add_test(tc, linalg_batched);
    tcase_add_test(tc, linalg_nan);
    tcase_add_test(tc, linalg_empty);
    suite_add_tcase(s, tc);
    return s;
}
