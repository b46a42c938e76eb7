/* test_ops.c - the tensor library against values computed with NumPy 1.24 (Debian's
 * python3-numpy; each expected value below was printed by NumPy and pasted here, never
 * by TSL), plus shape rules, promotion, errors and I/O. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "cpu/cpu.h"
#include "cpu/cpu.h"
#include "mem.h"
#include "infer.h"

static Tensor *vec(DType dt, int n, const double *v) {
    Shape s = { 1, { n } };
    Tensor *t = tensor_new(dt, &s);
    for (int i = 0; i < n; i++) tensor_set(t, i, v[i]);
    return t;
}

static Tensor *mat(DType dt, int r, int c, const double *v) {
    Shape s = { 2, { r, c } };
    Tensor *t = tensor_new(dt, &s);
    for (int i = 0; i < r * c; i++) tensor_set(t, i, v[i]);
    return t;
}

static void expect_values(const Tensor *t, int n, const double *want, double tol) {
    ck_assert_int_eq(t->size, n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(fabs(tensor_get(t, i) - want[i]) <= tol * (1 + fabs(want[i])), "element %d: got %.9g want %.9g", i,
                      tensor_get(t, i), want[i]);
}

START_TEST(ops_broadcast_and_promotion) {
    Tensor *a = mat(DT_F32, 2, 3, (double[]){ 1, 2, 3, 4, 5, 6 });
    Tensor *b = vec(DT_F32, 3, (double[]){ 10, 20, 30 });
    Tensor *r = op_binary(OP_ADD, a, b);
    ck_assert_int_eq(r->ndim, 2);
    expect_values(r, 6, (double[]){ 11, 22, 33, 14, 25, 36 }, 0);
    tensor_release(r);
    /* column broadcast: [2,1] * [3] -> [2,3] */
    Tensor *c = mat(DT_F32, 2, 1, (double[]){ 2, 3 });
    r = op_binary(OP_MUL, c, b);
    expect_values(r, 6, (double[]){ 20, 40, 60, 30, 60, 90 }, 0);
    tensor_release(r);
    /* PyTorch promotion: i64 with a non-integral number -> f32; i64 / number -> f32 */
    Tensor *i = vec(DT_I64, 2, (double[]){ 1, 2 });
    r = op_binary_scalar(OP_ADD, i, 0.5, false);
    ck_assert_int_eq(r->dtype, DT_F32);
    tensor_release(r);
    r = op_binary_scalar(OP_ADD, i, 2, false);
    ck_assert_int_eq(r->dtype, DT_I64);
    tensor_release(r);
    r = op_binary_scalar(OP_DIV, i, 2, false);
    ck_assert_int_eq(r->dtype, DT_F32);
    expect_values(r, 2, (double[]){ 0.5, 1 }, 0);
    tensor_release(r);
    /* i64 >= 2.5 compares mathematically */
    r = op_binary_scalar(OP_GE, i, 1.5, false);
    ck_assert_int_eq(r->dtype, DT_BOOL);
    expect_values(r, 2, (double[]){ 0, 1 }, 0);
    tensor_release(r);
    Tensor *bo = vec(DT_BOOL, 2, (double[]){ 1, 0 });
    r = op_binary_scalar(OP_ADD, bo, 1, false);
    ck_assert_int_eq(r->dtype, DT_I64);
    tensor_release(r);
    r = op_binary(OP_ADD, i, a);   /* i64 [2] + f32 [2,3]: mismatch */
    ck_assert_ptr_null(r);
    ck_assert_str_eq(op_error(), "shape mismatch for '+': [2] and [2, 3]");
    Tensor *f64 = vec(DT_F64, 3, (double[]){ 1, 1, 1 });
    r = op_binary(OP_SUB, b, f64);
    ck_assert_int_eq(r->dtype, DT_F64);
    tensor_release(r);
    tensor_release(a); tensor_release(b); tensor_release(c); tensor_release(i); tensor_release(bo); tensor_release(f64);
}
END_TEST

START_TEST(ops_modulo_and_integer_rules) {
    /* NumPy: [-7, 7, -7, 7] % [3, 3, -3, -3] = [2, 1, -1, -2]; [-7.5, 7.5] % 2 = [0.5, 1.5] */
    Tensor *a = vec(DT_I64, 4, (double[]){ -7, 7, -7, 7 });
    Tensor *b = vec(DT_I64, 4, (double[]){ 3, 3, -3, -3 });
    Tensor *r = op_binary(OP_MOD, a, b);
    expect_values(r, 4, (double[]){ 2, 1, -1, -2 }, 0);
    tensor_release(r);
    Tensor *f = vec(DT_F32, 2, (double[]){ -7.5, 7.5 });
    r = op_binary_scalar(OP_MOD, f, 2, false);
    expect_values(r, 2, (double[]){ 0.5, 1.5 }, 0);
    tensor_release(r);
    r = op_binary_scalar(OP_MOD, a, 0, false);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(op_error(), "integer modulo by zero");
    r = op_binary_scalar(OP_MOD, f, 0, false);   /* float % 0 is nan */
    ck_assert(isnan(tensor_get(r, 0)));
    tensor_release(r);
    /* i64 overflow wraps */
    Tensor *big = vec(DT_I64, 1, (double[]){ 9.2233720368547748e18 });
    r = op_binary(OP_MUL, big, big);
    ck_assert_ptr_nonnull(r);
    tensor_release(r);
    tensor_release(a); tensor_release(b); tensor_release(f); tensor_release(big);
}
END_TEST

START_TEST(ops_unary_math) {
    /* NumPy float32: exp([-1, 0, 0.5, 2]), tanh(...), sigmoid([-3, 0, 3]), round half-even */
    Tensor *x = vec(DT_F32, 4, (double[]){ -1, 0, 0.5, 2 });
    Tensor *r = op_unary(OP_EXP, x);
    expect_values(r, 4, (double[]){ 0.3678794205188751, 1.0, 1.6487212181091309, 7.3890557289123535 }, 1e-6);
    tensor_release(r);
    r = op_unary(OP_TANH, x);
    expect_values(r, 4, (double[]){ -0.7615941762924194, 0.0, 0.46211719512939453, 0.9640275835990906 }, 1e-6);
    tensor_release(r);
    Tensor *s = vec(DT_F32, 3, (double[]){ -3, 0, 3 });
    r = op_unary(OP_SIGMOID, s);
    expect_values(r, 3, (double[]){ 0.04742587357759476, 0.5, 0.9525741338729858 }, 1e-6);
    tensor_release(r);
    Tensor *h = vec(DT_F32, 5, (double[]){ 0.5, 1.5, 2.5, -0.5, -1.5 });
    r = op_unary(OP_ROUND, h);
    expect_values(r, 5, (double[]){ 0, 2, 2, -0.0, -2 }, 0);
    tensor_release(r);
    Tensor *i = vec(DT_I64, 2, (double[]){ 1, 4 });
    r = op_unary(OP_SQRT, i);   /* int input computes in f32 */
    ck_assert_int_eq(r->dtype, DT_F32);
    expect_values(r, 2, (double[]){ 1, 2 }, 0);
    tensor_release(r);
    /* a chunk gives the same bits as the whole (tails go through the same vector code) */
    Shape s13 = { 1, { 13 } };
    Tensor *big = tensor_new(DT_F32, &s13);
    for (int k = 0; k < 13; k++) tensor_set(big, k, 0.37 * k - 2);
    Tensor *whole = op_unary(OP_TANH, big);
    for (int k = 0; k < 13; k++) {
        Tensor *one = vec(DT_F32, 1, (double[]){ tensor_get(big, k) });
        Tensor *o = op_unary(OP_TANH, one);
        ck_assert(((float *)o->data)[0] == ((float *)whole->data)[k]);
        tensor_release(o);
        tensor_release(one);
    }
    tensor_release(whole); tensor_release(big);
    tensor_release(x); tensor_release(s); tensor_release(h); tensor_release(i);
}
END_TEST

START_TEST(ops_reductions) {
    /* x = arange(12, f32).reshape(3, 4) / 7 */
    Shape s = { 2, { 3, 4 } };
    Tensor *x = tensor_new(DT_F32, &s);
    for (int i = 0; i < 12; i++) ((float *)x->data)[i] = (float)i / 7.0f;
    Tensor *r = op_reduce(OP_SUM, x, NULL, -1, false);
    ck_assert_int_eq(r->ndim, 0);
    expect_values(r, 1, (double[]){ 9.428571 }, 1e-6);
    tensor_release(r);
    int ax0 = 0, ax1 = 1;
    r = op_reduce(OP_SUM, x, &ax0, 1, false);
    expect_values(r, 4, (double[]){ 1.7142858505249023, 2.142857074737549, 2.5714287757873535, 3.0 }, 1e-6);
    tensor_release(r);
    r = op_reduce(OP_MEAN, x, &ax1, 1, true);
    ck_assert_int_eq(r->ndim, 2);
    ck_assert_int_eq(r->shape[1], 1);
    expect_values(r, 3, (double[]){ 0.2142857313156128, 0.785714328289032, 1.3571429252624512 }, 1e-6);
    tensor_release(r);
    r = op_reduce(OP_VAR, x, NULL, -1, false);
    expect_values(r, 1, (double[]){ 0.24319726 }, 1e-6);
    tensor_release(r);
    r = op_reduce(OP_STD, x, &ax1, 1, false);
    expect_values(r, 3, (double[]){ 0.15971913933753967, 0.15971913933753967, 0.15971910953521729 }, 1e-5);
    tensor_release(r);
    /* argmax: first occurrence; NaN wins (NumPy) */
    Tensor *m = mat(DT_I64, 2, 3, (double[]){ 1, 5, 5, 7, 2, 7 });
    r = op_reduce(OP_ARGMAX, m, &ax1, 1, false);
    ck_assert_int_eq(r->dtype, DT_I64);
    expect_values(r, 2, (double[]){ 1, 0 }, 0);
    tensor_release(r);
    Tensor *n = vec(DT_F64, 3, (double[]){ 3, NAN, 1 });
    r = op_reduce(OP_ARGMAX, n, NULL, -1, false);
    expect_values(r, 1, (double[]){ 1 }, 0);
    tensor_release(r);
    r = op_reduce(OP_PROD, m, &ax0, 1, false);
    expect_values(r, 3, (double[]){ 7, 10, 35 }, 0);
    tensor_release(r);
    /* empty: sum is 0, max is an error; sum of bool is i64 */
    Shape e = { 2, { 0, 3 } };
    Tensor *empty = tensor_new(DT_F32, &e);
    r = op_reduce(OP_SUM, empty, &ax0, 1, false);
    expect_values(r, 3, (double[]){ 0, 0, 0 }, 0);
    tensor_release(r);
    ck_assert_ptr_null(op_reduce(OP_MAX, empty, &ax0, 1, false));
    ck_assert_str_eq(op_error(), "max of an empty axis (zero-size reduction)");
    int bad = 2;
    ck_assert_ptr_null(op_reduce(OP_SUM, x, &bad, 1, false));
    ck_assert_str_eq(op_error(), "sum: axis 2 is out of range for a tensor of rank 2");
    Tensor *b = vec(DT_BOOL, 3, (double[]){ 1, 0, 1 });
    r = op_reduce(OP_SUM, b, NULL, -1, false);
    ck_assert_int_eq(r->dtype, DT_I64);
    expect_values(r, 1, (double[]){ 2 }, 0);
    tensor_release(r);
    /* NumPy: sum(arange(1000, f32) * f32(0.1)) = 49950.0 (pairwise) */
    Shape sk = { 1, { 1000 } };
    Tensor *k = tensor_new(DT_F32, &sk);
    for (int i = 0; i < 1000; i++) ((float *)k->data)[i] = (float)i * 0.1f;
    r = op_reduce(OP_SUM, k, NULL, -1, false);
    ck_assert(((float *)r->data)[0] == 49950.0f);
    tensor_release(r);
    tensor_release(k); tensor_release(x); tensor_release(m); tensor_release(n); tensor_release(empty); tensor_release(b);
}
END_TEST

START_TEST(ops_softmax_family) {
    Tensor *a = mat(DT_F32, 2, 3, (double[]){ 1, 2, 3, 4, 5, 6 });
    Tensor *r = op_softmax(a, -1, false);
    expect_values(r, 6, (double[]){ 0.09003057330846786, 0.2447284609079361, 0.6652409434318542, 0.09003057330846786,
                                    0.2447284609079361, 0.6652409434318542 }, 1e-6);
    tensor_release(r);
    Tensor *v = vec(DT_F32, 3, (double[]){ 1, 2, 3 });
    r = op_softmax(v, 0, true);
    expect_values(r, 3, (double[]){ -2.4076058864593506, -1.4076058864593506, -0.4076058864593506 }, 1e-6);
    tensor_release(r);
    Tensor *d = mat(DT_F64, 2, 3, (double[]){ 1, 2, 3, 4, 5, 6 });
    r = op_reduce(OP_LOGSUMEXP, d, NULL, -1, false);
    expect_values(r, 1, (double[]){ 6.456193316018122 }, 1e-12);
    tensor_release(r);
    /* stable for large inputs */
    Tensor *big = vec(DT_F32, 2, (double[]){ 1000, 1000 });
    r = op_softmax(big, 0, false);
    expect_values(r, 2, (double[]){ 0.5, 0.5 }, 0);
    tensor_release(r);
    tensor_release(a); tensor_release(v); tensor_release(d); tensor_release(big);
}
END_TEST

START_TEST(ops_matmul) {
    Tensor *a = mat(DT_F32, 2, 3, (double[]){ 1, 2, 3, 4, 5, 6 });
    Tensor *b = mat(DT_F32, 3, 2, (double[]){ 1, 0, 0, 1, 2, -1 });
    Tensor *r = op_matmul(a, b);
    expect_values(r, 4, (double[]){ 7, -1, 16, -1 }, 0);
    tensor_release(r);
    /* 1-D @ 2-D: [1,2,3] @ arange(6).reshape(3,2) = [16, 22] */
    Tensor *v = vec(DT_F32, 3, (double[]){ 1, 2, 3 });
    Tensor *w = mat(DT_F32, 3, 2, (double[]){ 0, 1, 2, 3, 4, 5 });
    r = op_matmul(v, w);
    ck_assert_int_eq(r->ndim, 1);
    expect_values(r, 2, (double[]){ 16, 22 }, 0);
    tensor_release(r);
    /* batched: arange(12).reshape(2,2,3) @ arange(6).reshape(3,2) */
    Shape s3 = { 3, { 2, 2, 3 } };
    Tensor *bt = tensor_new(DT_F32, &s3);
    for (int i = 0; i < 12; i++) tensor_set(bt, i, i);
    r = op_matmul(bt, w);
    ck_assert_int_eq(r->ndim, 3);
    expect_values(r, 8, (double[]){ 10, 13, 28, 40, 46, 67, 64, 94 }, 0);
    tensor_release(r);
    ck_assert_ptr_null(op_matmul(a, a));
    ck_assert_str_eq(op_error(), "shape mismatch for '@': [2, 3] and [2, 3]");
    /* NumPy: outer([1, 2], [3, 4, 5]) = [[3, 4, 5], [6, 8, 10]] */
    Tensor *p = vec(DT_I64, 2, (double[]){ 1, 2 }), *q = vec(DT_I64, 3, (double[]){ 3, 4, 5 });
    Tensor *o = op_binary(OP_OUTER, p, q);
    expect_values(o, 6, (double[]){ 3, 4, 5, 6, 8, 10 }, 0);
    tensor_release(o);
    tensor_release(p);
    tensor_release(q);
    tensor_release(a); tensor_release(b); tensor_release(v); tensor_release(w); tensor_release(bt);
}
END_TEST

START_TEST(ops_shapes_and_overflow) {
    Shape s = { 1, { 6 } };
    Tensor *t = tensor_new(DT_F32, &s);
    Shape bad = { 6, { 2, 13, 419, 691, 823, 2977518503LL } };
    ck_assert_ptr_null(op_reshape(t, &bad));
    ck_assert_msg(strstr(op_error(), "too large") != NULL, "%s", op_error());
    ck_assert_ptr_null(tensor_new(DT_F32, &bad));
    Shape neg = { 2, { 3, -2 } };
    ck_assert_ptr_null(tensor_new(DT_F32, &neg));
    ck_assert_str_eq(op_error(), "negative dimension -2 in shape");
    Shape inf = { 2, { -1, 2 } };
    Tensor *r = op_reshape(t, &inf);
    ck_assert_int_eq(r->shape[0], 3);
    tensor_release(r);
    Shape wrong = { 2, { 4, 2 } };
    ck_assert_ptr_null(op_reshape(t, &wrong));
    Shape huge = { 1, { (int64_t)1 << 40 } };
    ck_assert_ptr_null(tensor_new(DT_F32, &huge));
    ck_assert_msg(strstr(op_error(), "--max-tensor-bytes") != NULL, "%s", op_error());
    Shape z = { 3, { 2, 0, 3 } };
    Tensor *zt = tensor_new(DT_F32, &z);
    ck_assert_int_eq(zt->size, 0);
    int perm[3] = { 2, 0, 1 };
    Tensor *tz = op_transpose(zt, perm, 3);
    ck_assert_int_eq(tz->shape[0], 3);
    tensor_release(tz);
    tensor_release(zt);
    tensor_release(t);
}
END_TEST

START_TEST(ops_indexing) {
    Shape s = { 3, { 2, 3, 4 } };
    Tensor *t = tensor_new(DT_I64, &s);
    for (int i = 0; i < 24; i++) tensor_set(t, i, i);
    /* NumPy: arange(24).reshape(2,3,4)[[0,1], :, [1,2]] = [[1,5,9],[14,18,22]] */
    Tensor *i01 = vec(DT_I64, 2, (double[]){ 0, 1 }), *i12 = vec(DT_I64, 2, (double[]){ 1, 2 });
    IndexItem adv[3] = { { .kind = IDX_TENSOR, .t = i01 }, { .kind = IDX_SLICE, .step = 1 }, { .kind = IDX_TENSOR, .t = i12 } };
    Tensor *r = op_index(t, adv, 3);
    ck_assert_int_eq(r->ndim, 2);
    ck_assert_int_eq(r->shape[0], 2);
    ck_assert_int_eq(r->shape[1], 3);
    expect_values(r, 6, (double[]){ 1, 5, 9, 14, 18, 22 }, 0);
    tensor_release(r);
    /* a new axis between the advanced indices separates them (NumPy: their block goes first):
     * t[[0, 1], None, :, [1, 2]] has shape (2, 1, 3) and adv's values; infer_index agrees */
    IndexItem sep[4] = { { .kind = IDX_TENSOR, .t = i01 }, { .kind = IDX_NEWAXIS }, { .kind = IDX_SLICE, .step = 1 },
                         { .kind = IDX_TENSOR, .t = i12 } };
    r = op_index(t, sep, 4);
    ck_assert_int_eq(r->ndim, 3);
    ck_assert_int_eq(r->shape[0], 2);
    ck_assert_int_eq(r->shape[1], 1);
    ck_assert_int_eq(r->shape[2], 3);
    expect_values(r, 6, (double[]){ 1, 5, 9, 14, 18, 22 }, 0);
    Shape inferred;
    ck_assert_int_eq(infer_index(&s, sep, 4, &inferred), 0);
    ck_assert_int_eq(inferred.ndim, 3);
    ck_assert_int_eq(inferred.d[1], 1);
    tensor_release(r);
    /* [:, [0, 2], 1] = [[1, 9], [13, 21]] */
    Tensor *i02 = vec(DT_I64, 2, (double[]){ 0, 2 });
    IndexItem adj[3] = { { .kind = IDX_SLICE, .step = 1 }, { .kind = IDX_TENSOR, .t = i02 }, { .kind = IDX_INT, .i = 1 } };
    r = op_index(t, adj, 3);
    expect_values(r, 4, (double[]){ 1, 9, 13, 21 }, 0);
    tensor_release(r);
    /* negative step slice with defaults: t[1, ::-1, -1] = [23, 19, 15] */
    IndexItem neg[3] = { { .kind = IDX_INT, .i = 1 }, { .kind = IDX_SLICE, .step = -1 }, { .kind = IDX_INT, .i = -1 } };
    r = op_index(t, neg, 3);
    expect_values(r, 3, (double[]){ 23, 19, 15 }, 0);
    tensor_release(r);
    IndexItem oob[1] = { { .kind = IDX_INT, .i = INT64_MIN } };
    ck_assert_ptr_null(op_index(t, oob, 1));
    ck_assert_msg(strstr(op_error(), "out of bounds for axis 0 with size 2") != NULL, "%s", op_error());
    IndexItem zero[1] = { { .kind = IDX_SLICE, .step = 0 } };
    ck_assert_ptr_null(op_index(t, zero, 1));
    ck_assert_str_eq(op_error(), "slice step cannot be zero");
    IndexItem many[4] = { { .kind = IDX_INT }, { .kind = IDX_INT }, { .kind = IDX_INT }, { .kind = IDX_INT } };
    ck_assert_ptr_null(op_index(t, many, 4));
    /* set through a bool mask */
    Tensor *v = vec(DT_F32, 4, (double[]){ 1, -2, 3, -4 });
    Tensor *mask = op_binary_scalar(OP_LT, v, 0, false);
    Tensor *zero_t = tensor_scalar(DT_F32, 0);
    IndexItem mi[1] = { { .kind = IDX_TENSOR, .t = mask } };
    r = op_index_set(v, mi, 1, zero_t);
    expect_values(r, 4, (double[]){ 1, 0, 3, 0 }, 0);
    expect_values(v, 4, (double[]){ 1, -2, 3, -4 }, 0);   /* the input is unchanged */
    tensor_release(r);
    tensor_release(v); tensor_release(mask); tensor_release(zero_t);
    tensor_release(t); tensor_release(i01); tensor_release(i12); tensor_release(i02);
}
END_TEST

START_TEST(ops_astype_and_compare) {
    Tensor *f = vec(DT_F32, 3, (double[]){ 1.9, -1.9, NAN });
    ck_assert_ptr_null(op_astype(f, DT_I64));
    ck_assert_str_eq(op_error(), "cannot convert nan to i64");
    Tensor *g = vec(DT_F32, 2, (double[]){ 1.9, -1.9 });
    Tensor *r = op_astype(g, DT_I64);
    expect_values(r, 2, (double[]){ 1, -1 }, 0);
    ck_assert(!tensor_equal(r, g));
    tensor_release(r);
    Tensor *h = vec(DT_F32, 2, (double[]){ 1.9, -1.9 });
    ck_assert(tensor_equal(g, h));
    Tensor *k = vec(DT_F32, 2, (double[]){ 1.9000001, -1.9 });
    ck_assert_int_eq(op_allclose(g, k, 1e-5, 1e-8), 1);
    ck_assert_int_eq(op_allclose(f, f, 1e-5, 1e-8), 0);   /* NaN is never close */
    tensor_release(f); tensor_release(g); tensor_release(h); tensor_release(k);
}
END_TEST

START_TEST(ops_random_is_counter_based) {
    Shape s = { 1, { 5 } };
    rng_seed(7);
    Tensor *a = op_randn(&s);
    uint64_t seed, ctr;
    rng_get_state(&seed, &ctr);
    ck_assert_int_eq((int)ctr, 5);
    rng_set_state(7, 2);
    Shape s3 = { 1, { 3 } };
    Tensor *b = op_randn(&s3);
    for (int i = 0; i < 3; i++) ck_assert(((float *)a->data)[i + 2] == ((float *)b->data)[i]);
    Shape big = { 1, { 10000 } };
    Tensor *u = op_rand(&big);
    double sum = 0;
    for (int i = 0; i < 10000; i++) {
        float x = ((float *)u->data)[i];
        ck_assert(x >= 0 && x < 1);
        sum += x;
    }
    ck_assert(fabs(sum / 10000 - 0.5) < 0.02);
    Tensor *ri = op_randint(-3, 3, &big);
    for (int i = 0; i < 10000; i++) ck_assert(((int64_t *)ri->data)[i] >= -3 && ((int64_t *)ri->data)[i] < 3);
    ck_assert_ptr_null(op_randint(3, 3, &s));
    tensor_release(a); tensor_release(b); tensor_release(u); tensor_release(ri);
}
END_TEST

START_TEST(ops_npy_round_trip_and_hostile_files) {
    char path[] = "/tmp/tsl-npy-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    Tensor *t = mat(DT_F64, 2, 3, (double[]){ 1, 2, 3, 4, 5, 6.5 });
    ck_assert_int_eq(npy_save(path, t), 0);
    Tensor *u = npy_load(path);
    ck_assert(tensor_equal(t, u));
    tensor_release(u);
    /* truncate: the header promises 48 bytes */
    FILE *fp = fopen(path, "r+b");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    ck_assert_int_eq(truncate(path, size - 8), 0);
    ck_assert_ptr_null(npy_load(path));
    ck_assert_msg(strstr(op_error(), "truncated") != NULL, "%s", op_error());
    /* a header claiming an enormous shape */
    fp = fopen(path, "wb");
    const char hdr[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (4000000000, 4000000000, 4000000000), }";
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(sizeof hdr - 1), 0 };
    fwrite(pre, 1, 10, fp);
    fwrite(hdr, 1, sizeof hdr - 1, fp);
    fclose(fp);
    ck_assert_ptr_null(npy_load(path));
    fp = fopen(path, "wb");
    fputs("not a npy file", fp);
    fclose(fp);
    ck_assert_ptr_null(npy_load(path));
    ck_assert_msg(strstr(op_error(), "not a .npy file") != NULL, "%s", op_error());
    unlink(path);
    tensor_release(t);
}
END_TEST

/* Expected texts from NumPy 1.24: "tensor(" + np.array2string(a, separator=', ',
 * prefix='tensor(') + the dtype suffix, with float32 arrays for f32. */
static void expect_format(Tensor *t, const char *want) {
    char *s = tensor_format(t);
    ck_assert_str_eq(s, want);
    mem_free(s);
    tensor_release(t);
}

START_TEST(ops_format) {
    expect_format(mat(DT_F32, 2, 2, (double[]){ 1, 2, 3, 4 }), "tensor([[1., 2.],\n        [3., 4.]])");
    expect_format(vec(DT_I64, 2, (double[]){ 1, -2 }), "tensor([ 1, -2], dtype=i64)");
    expect_format(vec(DT_F32, 2, (double[]){ 0.1, 2.5 }), "tensor([0.1, 2.5])");
    Shape big = { 1, { 2000 } };
    expect_format(op_full(&big, 0, DT_F32), "tensor([0., 0., 0., ..., 0., 0., 0.])");
    /* the f64 rule is NumPy's too: 0.1 + 0.2 is 0.3, not 0.30000000 */
    expect_format(vec(DT_F64, 1, (double[]){ 0.1 + 0.2 }), "tensor([0.3], dtype=f64)");
    expect_format(vec(DT_F64, 2, (double[]){ 0.1 + 0.2, 1.0 / 3 }), "tensor([0.3       , 0.33333333], dtype=f64)");
    /* scientific mantissas pad with more digits of the value, not zeros */
    expect_format(vec(DT_F32, 3, (double[]){ 0.005524179432541132, 0.06431002914905548, -38.875423431396484 }),
                  "tensor([ 5.5241794e-03,  6.4310029e-02, -3.8875423e+01])");
    /* every digit before the point: the f32 is exactly 71727512 */
    expect_format(vec(DT_F32, 1, (double[]){ 71727512.0 }), "tensor([71727512.])");
    expect_format(vec(DT_F32, 3, (double[]){ NAN, -INFINITY, 1e-5 }), "tensor([   nan,   -inf, 1.e-05])");
    expect_format(tensor_scalar(DT_F32, 0.5), "tensor(0.5)");
    PrintOptions saved = tensor_print_options();
    tensor_set_print_options((PrintOptions){ 3, 10, 2, 20 });
    double thirds[30];
    for (int i = 0; i < 30; i++) thirds[i] = (float)i / 3.0f;
    expect_format(vec(DT_F32, 30, thirds), "tensor([0.   ,\n        0.333, ...,\n        9.333,\n        9.667])");
    tensor_set_print_options(saved);
}
END_TEST

/* The AVX-512 and AVX2 paths compute the same bits (eager and static may not differ by
 * machine path), and vector max/min agree with a scalar scan, NaN included. */
START_TEST(ops_simd_paths_agree) {
    Shape s = { 1, { 1037 } };
    Tensor *x = tensor_new(DT_F32, &s);
    for (int i = 0; i < 1037; i++) ((float *)x->data)[i] = (float)((i * 7919) % 2001) / 250.0f - 4.0f;
    OpCode fns[] = { OP_EXP, OP_LOG, OP_TANH, OP_SIN, OP_COS, OP_SQRT, OP_SIGMOID };
    for (int f = 0; f < 7; f++) {
        vm_force_avx2(0);
        Tensor *a = op_unary(fns[f], x);
        vm_force_avx2(1);
        Tensor *b = op_unary(fns[f], x);
        vm_force_avx2(0);
        for (int i = 0; i < 1037; i++) {
            float u = ((float *)a->data)[i], v = ((float *)b->data)[i];
            /* NaN payloads may differ between paths; every number must match exactly */
            ck_assert_msg(memcmp(&u, &v, sizeof u) == 0 || (isnan(u) && isnan(v)), "%s differs at %d: %a vs %a",
                          op_info[fns[f]].name, i, u, v);
        }
        tensor_release(a);
        tensor_release(b);
    }
    float mx = -INFINITY, mn = INFINITY;
    for (int i = 0; i < 1037; i++) {
        float v = ((float *)x->data)[i];
        mx = v > mx ? v : mx;
        mn = v < mn ? v : mn;
    }
    Tensor *r = op_reduce(OP_MAX, x, NULL, -1, false);
    ck_assert(((float *)r->data)[0] == mx);
    tensor_release(r);
    r = op_reduce(OP_MIN, x, NULL, -1, false);
    ck_assert(((float *)r->data)[0] == mn);
    tensor_release(r);
    ((float *)x->data)[1000] = NAN;
    r = op_reduce(OP_MAX, x, NULL, -1, false);
    ck_assert(isnan(((float *)r->data)[0]));
    tensor_release(r);
    tensor_release(x);
}
END_TEST

Suite *ops_suite(void) {
    Suite *s = suite_create("ops");
    TCase *tc = tcase_create("cpu");
    tcase_add_test(tc, ops_broadcast_and_promotion);
    tcase_add_test(tc, ops_modulo_and_integer_rules);
    tcase_add_test(tc, ops_unary_math);
    tcase_add_test(tc, ops_reductions);
    tcase_add_test(tc, ops_softmax_family);
    tcase_add_test(tc, ops_matmul);
    tcase_add_test(tc, ops_shapes_and_overflow);
    tcase_add_test(tc, ops_indexing);
    tcase_add_test(tc, ops_astype_and_compare);
    tcase_add_test(tc, ops_random_is_counter_based);
    tcase_add_test(tc, ops_npy_round_trip_and_hostile_files);
    tcase_add_test(tc, ops_format);
    tcase_add_test(tc, ops_simd_paths_agree);
    suite_add_tcase(s, tc);
    return s;
}
