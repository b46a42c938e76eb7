/* test_axis.c - the ops along an axis (cumsum ... diff), trace and norm, called through
 * their infer_<impl> and cpu_<impl> functions directly (no binder, no op_run).
 *
 * Expected values were printed by NumPy 2.4 (pip, in a private venv) and pasted here, except
 * where NumPy has no such op: descending sort and topk follow torch.sort(descending=True,
 * stable=True) / torch.topk (NaN largest, ties by lower index); those expectations were
 * computed with Python's stable sorted() and say so. */
#include <math.h>
#include <string.h>
#include "suites.h"
#include "cpu/cpu.h"
#include "cpu/cpu.h"

/* ---------- building calls ---------- */

#define SH(...) ((Shape){ (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), { __VA_ARGS__ } })
#define SH0 ((Shape){ 0, { 0 } })
#define V(...) ((const double[]){ __VA_ARGS__ })

static Tensor *tens(DType dt, Shape s, const double *v) {
    Tensor *t = tensor_new(dt, &s);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < t->size; i++) tensor_set(t, i, v[i]);
    return t;
}

static OpAttrs attrs(void) {
    OpAttrs a;
    memset(&a, 0, sizeof a);
    a.naxes = -1;
    a.dtype = -1;
    return a;
}

/* Attributes with the axis parameter p given. */
static OpAttrs with_axis(int p, int axis) {
    OpAttrs a = attrs();
    a.axis = axis;
    a.given |= 1u << p;
    return a;
}

typedef int (*InferFn)(const OpCall *c, Shape *out, DType *dt);
typedef int (*KernelFn)(const OpCall *c, Tensor **out);

static void impl_of(OpCode op, InferFn *inf, KernelFn *run) {
    switch (op) {
    case OP_CUMSUM: case OP_CUMPROD: *inf = infer_cum; *run = cpu_cum; return;
    case OP_SORT: case OP_ARGSORT: *inf = infer_sort; *run = cpu_sort; return;
    case OP_TOPK: *inf = infer_topk; *run = cpu_topk; return;
    case OP_UNIQUE: *inf = infer_unique; *run = cpu_unique; return;
    case OP_ONE_HOT: *inf = infer_one_hot; *run = cpu_one_hot; return;
    case OP_TILE: *inf = infer_tile; *run = cpu_tile; return;
    case OP_REPEAT: *inf = infer_repeat; *run = cpu_repeat; return;
    case OP_PAD: *inf = infer_pad; *run = cpu_pad; return;
    case OP_DIFF: *inf = infer_diff; *run = cpu_diff; return;
    default: *inf = infer_trace; *run = cpu_trace; return;
    }
}

/* What op_run does: infer, allocate (an F_DYNAMIC kernel allocates itself), run. out[k] are
 * new references; 0, or -1 with the message in op_error(). */
static int call(OpCode op, const OpArg *in, int nin, const OpAttrs *at, Tensor **out) {
    InferFn inf;
    KernelFn run;
    impl_of(op, &inf, &run);
    OpCall c = { op, nin, in, at };
    Shape s[OP_MAX_OUT];
    DType dt[OP_MAX_OUT];
    int nout = op_info[op].nout;
    bool dynamic = op_info[op].flags & F_DYNAMIC;
    if (inf(&c, s, dt)) return -1;
    for (int k = 0; k < nout; k++) out[k] = dynamic ? NULL : tensor_new(dt[k], &s[k]);
    if (run(&c, out)) {
        for (int k = 0; k < nout; k++) tensor_release(out[k]);
        return -1;
    }
    for (int k = 0; k < nout; k++) {
        ck_assert_int_eq(out[k]->dtype, dt[k]);
        if (dynamic) ck_assert(out[k]->ndim == 1 && out[k]->shape[0] <= s[k].d[0]);
    }
    return 0;
}

/* One tensor operand, one result (NULL on error). */
static Tensor *run1(OpCode op, const Tensor *t, const OpAttrs *at) {
    OpArg in[1] = { op_arg_tensor(t) };
    Tensor *out[OP_MAX_OUT] = { NULL };
    return call(op, in, 1, at, out) ? NULL : out[0];
}

/* Inference alone on an operand with no data, as the static compiler calls it. */
static int infer_meta(OpCode op, DType dt, Shape s, const OpAttrs *at, Shape *out, DType *odt) {
    InferFn inf;
    KernelFn run;
    impl_of(op, &inf, &run);
    OpArg in[1] = { op_arg_meta(dt, &s) };
    OpCall c = { op, 1, in, at };
    return inf(&c, out, odt);
}

/* ---------- checking results ---------- */

/* dtype, shape, and every element exactly (a NaN in want matches any NaN); t is released. */
static void expect(Tensor *t, DType dt, Shape s, const double *want) {
    ck_assert_msg(t != NULL, "unexpected error: %s", op_error());
    ck_assert_int_eq(t->dtype, dt);
    ck_assert_int_eq(t->ndim, s.ndim);
    for (int i = 0; i < s.ndim; i++) ck_assert_int_eq(t->shape[i], s.d[i]);
    for (int64_t i = 0; i < t->size; i++) {
        double g = tensor_get(t, i);
        ck_assert_msg(isnan(want[i]) ? isnan(g) : g == want[i], "element %lld: got %.17g want %.17g", (long long)i, g,
                      want[i]);
    }
    tensor_release(t);
}

static void expect_fail(Tensor *r, const char *msg) {
    ck_assert_ptr_null(r);
    ck_assert_str_eq(op_error(), msg);
}

/* The same error from inference with no data (compile time) and from a run. */
static void expect_fail_both(OpCode op, const Tensor *t, const OpAttrs *at, const char *msg) {
    Shape s, out[OP_MAX_OUT];
    DType dt[OP_MAX_OUT];
    shape_of(t, &s);
    ck_assert_int_eq(infer_meta(op, t->dtype, s, at, out, dt), -1);
    ck_assert_str_eq(op_error(), msg);
    expect_fail(run1(op, t, at), msg);
}

/* ---------- cumsum, cumprod ---------- */

START_TEST(cpu_cum_values) {
    Tensor *a = tens(DT_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    OpAttrs at = with_axis(1, -1);
    /* NumPy: np.cumsum(a, axis=1), np.cumsum(a, axis=0), np.cumprod(a, axis=1) */
    expect(run1(OP_CUMSUM, a, &at), DT_F32, SH(2, 3), V(1, 3, 6, 4, 9, 15));
    at = with_axis(1, -2);
    expect(run1(OP_CUMSUM, a, &at), DT_F32, SH(2, 3), V(1, 2, 3, 5, 7, 9));
    at = with_axis(1, 1);
    expect(run1(OP_CUMPROD, a, &at), DT_F32, SH(2, 3), V(1, 2, 6, 4, 20, 120));
    tensor_release(a);
    /* NumPy: np.cumsum(np.full(10, 0.1, np.float32)) accumulates in f32, in order */
    a = tens(DT_F32, SH(10), V(0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1));
    at = with_axis(1, 0);
    expect(run1(OP_CUMSUM, a, &at), DT_F32, SH(10),
           V(0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5, 0.6000000238418579,
             0.7000000476837158, 0.8000000715255737, 0.9000000953674316, 1.0000001192092896));
    tensor_release(a);
}
END_TEST

START_TEST(cpu_cum_integers) {
    OpAttrs at = with_axis(1, -1);
    /* NumPy: np.cumsum([True, False, True, True]) and np.cumprod([True, True, False, True]) (i64) */
    Tensor *b = tens(DT_BOOL, SH(4), V(1, 0, 1, 1));
    expect(run1(OP_CUMSUM, b, &at), DT_I64, SH(4), V(1, 1, 2, 3));
    tensor_release(b);
    b = tens(DT_BOOL, SH(4), V(1, 1, 0, 1));
    expect(run1(OP_CUMPROD, b, &at), DT_I64, SH(4), V(1, 1, 0, 0));
    tensor_release(b);
    /* NumPy: np.cumprod(np.array([3, 2**62, -1])) wraps */
    Tensor *i = tens(DT_I64, SH(3), V(3, 4611686018427387904.0, -1));
    expect(run1(OP_CUMPROD, i, &at), DT_I64, SH(3), V(3, -4611686018427387904.0, 4611686018427387904.0));
    tensor_release(i);
}
END_TEST

START_TEST(cpu_cum_empty_and_errors) {
    Tensor *e = tens(DT_F64, SH(2, 0), V(0));
    OpAttrs at = with_axis(1, 1);
    expect(run1(OP_CUMSUM, e, &at), DT_F64, SH(2, 0), V(0));
    at = with_axis(1, 0);
    expect(run1(OP_CUMPROD, e, &at), DT_F64, SH(2, 0), V(0));
    at = with_axis(1, 2);
    expect_fail_both(OP_CUMSUM, e, &at, "cumsum(): axis 2 is out of range for a tensor of rank 2");
    tensor_release(e);
    Tensor *s = tens(DT_F32, SH0, V(5));
    at = with_axis(1, -1);
    expect_fail_both(OP_CUMPROD, s, &at, "cumprod(): axis -1 is out of range for a tensor of rank 0");
    tensor_release(s);
}
END_TEST

/* ---------- sort, argsort ---------- */

START_TEST(cpu_sort_nan_and_zeros) {
    Tensor *x = tens(DT_F64, SH(9), V(3, NAN, 1, -0.0, 0.0, NAN, -INFINITY, 2, 1));
    OpAttrs at = with_axis(1, -1);
    /* NumPy: np.sort(x), np.argsort(x, kind='stable') */
    Tensor *r = run1(OP_SORT, x, &at);
    ck_assert(signbit(tensor_get(r, 1)) && !signbit(tensor_get(r, 2)));   /* -0 stays before 0 */
    expect(r, DT_F64, SH(9), V(-INFINITY, -0.0, 0.0, 1, 1, 2, 3, NAN, NAN));
    expect(run1(OP_ARGSORT, x, &at), DT_I64, SH(9), V(6, 3, 4, 2, 8, 7, 0, 1, 5));
    /* descending (torch, stable): NaN first, equal elements in input order (Python sorted()) */
    at.flag = true;
    at.given |= 1u << 2;
    expect(run1(OP_SORT, x, &at), DT_F64, SH(9), V(NAN, NAN, 3, 2, 1, 1, -0.0, 0.0, -INFINITY));
    expect(run1(OP_ARGSORT, x, &at), DT_I64, SH(9), V(1, 5, 0, 7, 2, 8, 3, 4, 6));
    tensor_release(x);
}
END_TEST

START_TEST(cpu_sort_axis0_ties) {
    Tensor *m = tens(DT_I64, SH(3, 3), V(3, 1, 2, 1, 1, 0, 3, 0, 2));
    OpAttrs at = with_axis(1, 0);
    /* NumPy: np.argsort(m, axis=0, kind='stable'), np.sort(m, axis=0) */
    expect(run1(OP_ARGSORT, m, &at), DT_I64, SH(3, 3), V(1, 2, 1, 0, 0, 0, 2, 1, 2));
    expect(run1(OP_SORT, m, &at), DT_I64, SH(3, 3), V(1, 0, 0, 3, 1, 2, 3, 1, 2));
    /* descending per column, ties in input order (torch stable; derived by hand) */
    at.flag = true;
    expect(run1(OP_ARGSORT, m, &at), DT_I64, SH(3, 3), V(0, 0, 0, 2, 1, 2, 1, 2, 1));
    expect(run1(OP_SORT, m, &at), DT_I64, SH(3, 3), V(3, 1, 2, 3, 1, 2, 1, 0, 0));
    tensor_release(m);
    Tensor *b = tens(DT_BOOL, SH(4), V(1, 0, 1, 0));
    at = with_axis(1, -1);
    expect(run1(OP_ARGSORT, b, &at), DT_I64, SH(4), V(1, 3, 0, 2));
    expect(run1(OP_SORT, b, &at), DT_BOOL, SH(4), V(0, 0, 1, 1));
    tensor_release(b);
}
END_TEST

/* 40 elements: longer than one insertion-sorted run, so the merges run too. */
static Tensor *forty(void) {
    double v[40];
    for (int j = 0; j < 40; j++) v[j] = j % 9 == 4 ? NAN : (j * 37) % 13;
    return tens(DT_F32, SH(40), v);
}

START_TEST(cpu_sort_long) {
    Tensor *y = forty();
    OpAttrs at = with_axis(1, -1);
    /* NumPy: np.argsort(y, kind='stable') */
    expect(run1(OP_ARGSORT, y, &at), DT_I64, SH(40),
           V(0, 26, 39, 6, 19, 32, 12, 25, 38, 5, 18, 11, 24, 37, 17, 30, 10, 23, 36, 3, 16, 29, 9, 35, 2, 15, 28, 8, 21,
             34, 1, 14, 27, 7, 20, 33, 4, 13, 22, 31));
    /* descending, stable (Python sorted()) */
    at.flag = true;
    expect(run1(OP_ARGSORT, y, &at), DT_I64, SH(40),
           V(4, 13, 22, 31, 7, 20, 33, 1, 14, 27, 8, 21, 34, 2, 15, 28, 9, 35, 3, 16, 29, 10, 23, 36, 17, 30, 11, 24, 37, 5,
             18, 12, 25, 38, 6, 19, 32, 0, 26, 39));
    tensor_release(y);
}
END_TEST

START_TEST(cpu_sort_empty_and_errors) {
    OpAttrs at = with_axis(1, -1);
    Tensor *e = tens(DT_F32, SH(2, 0), V(0));
    expect(run1(OP_SORT, e, &at), DT_F32, SH(2, 0), V(0));
    tensor_release(e);
    e = tens(DT_F32, SH(0, 3), V(0));
    expect(run1(OP_ARGSORT, e, &at), DT_I64, SH(0, 3), V(0));
    at = with_axis(1, -3);
    expect_fail_both(OP_SORT, e, &at, "sort(): axis -3 is out of range for a tensor of rank 2");
    tensor_release(e);
}
END_TEST

/* ---------- topk ---------- */

static OpAttrs topk_attrs(int64_t k, int axis) {
    OpAttrs a = with_axis(2, axis);
    a.i[0] = k;
    a.given |= 1u << 1;
    return a;
}

static void topk(const Tensor *t, const OpAttrs *at, Tensor **out) {
    OpArg in[1] = { op_arg_tensor(t) };
    ck_assert_msg(call(OP_TOPK, in, 1, at, out) == 0, "topk failed: %s", op_error());
}

START_TEST(cpu_topk_values) {
    Tensor *t = tens(DT_F32, SH(5), V(1, 3, NAN, 3, 2)), *out[2];
    OpAttrs at = topk_attrs(3, -1);
    /* torch.topk semantics: NaN largest, ties by lower index (Python sorted()) */
    topk(t, &at, out);
    expect(out[0], DT_F32, SH(3), V(NAN, 3, 3));
    expect(out[1], DT_I64, SH(3), V(2, 1, 3));
    tensor_release(t);
    Tensor *m = tens(DT_I64, SH(3, 3), V(3, 1, 2, 1, 1, 0, 3, 0, 2));
    at = topk_attrs(2, 0);
    topk(m, &at, out);
    expect(out[0], DT_I64, SH(2, 3), V(3, 1, 2, 3, 1, 2));
    expect(out[1], DT_I64, SH(2, 3), V(0, 0, 0, 2, 1, 2));
    tensor_release(m);
}
END_TEST

/* k at or below the selection window and above it (a full sort) agree on the prefix. */
START_TEST(cpu_topk_window_and_sort) {
    Tensor *y = forty(), *out[2];
    /* descending stable order of y (Python sorted()) */
    const double *order = V(4, 13, 22, 31, 7, 20, 33, 1, 14, 27, 8, 21, 34, 2, 15, 28, 9, 35, 3, 16, 29, 10, 23, 36, 17,
                            30, 11, 24, 37, 5, 18, 12, 25, 38, 6, 19, 32, 0, 26, 39);
    int64_t ks[] = { 1, 5, 32, 33, 40 };
    for (int q = 0; q < 5; q++) {
        OpAttrs at = topk_attrs(ks[q], 0);
        topk(y, &at, out);
        ck_assert_int_eq(out[1]->size, ks[q]);
        for (int64_t j = 0; j < ks[q]; j++) {
            ck_assert_int_eq(((int64_t *)out[1]->data)[j], (int64_t)order[j]);
            double v = ((float *)y->data)[(int64_t)order[j]], g = ((float *)out[0]->data)[j];
            ck_assert(isnan(v) ? isnan(g) : g == v);
        }
        tensor_release(out[0]);
        tensor_release(out[1]);
    }
    tensor_release(y);
}
END_TEST

START_TEST(cpu_topk_empty_and_errors) {
    Tensor *t = tens(DT_F64, SH(2, 5), V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)), *out[2];
    OpAttrs at = topk_attrs(0, -1);
    topk(t, &at, out);
    expect(out[0], DT_F64, SH(2, 0), V(0));
    expect(out[1], DT_I64, SH(2, 0), V(0));
    at = topk_attrs(6, -1);
    expect_fail_both(OP_TOPK, t, &at, "topk(): k = 6 is out of range for axis -1 of length 5");
    at = topk_attrs(-1, 1);
    expect_fail_both(OP_TOPK, t, &at, "topk(): k = -1 is out of range for axis 1 of length 5");
    at = topk_attrs(1, 2);
    expect_fail_both(OP_TOPK, t, &at, "topk(): axis 2 is out of range for a tensor of rank 2");
    tensor_release(t);
    Tensor *e = tens(DT_F32, SH(0, 3), V(0));
    at = topk_attrs(2, -1);
    topk(e, &at, out);
    expect(out[0], DT_F32, SH(0, 2), V(0));
    expect(out[1], DT_I64, SH(0, 2), V(0));
    tensor_release(e);
}
END_TEST

/* ---------- unique ---------- */

START_TEST(cpu_unique_values) {
    OpAttrs at = attrs();
    /* NumPy: np.unique([2, nan, 1, 2, nan, -0.0, 0.0, 1]) -> [0, 1, 2, nan] (one NaN, last).
     * Which zero survives is unspecified in NumPy (its sort is not stable); TSL keeps the
     * first one, so only the value is checked here. */
    Tensor *x = tens(DT_F64, SH(8), V(2, NAN, 1, 2, NAN, -0.0, 0.0, 1));
    expect(run1(OP_UNIQUE, x, &at), DT_F64, SH(4), V(0, 1, 2, NAN));
    tensor_release(x);
    /* NumPy: np.unique of i64 [5, -3, 5, 0, -3, 7], bool [T, F, T], f32 [[3, 1], [1, 3]] */
    x = tens(DT_I64, SH(6), V(5, -3, 5, 0, -3, 7));
    expect(run1(OP_UNIQUE, x, &at), DT_I64, SH(4), V(-3, 0, 5, 7));
    tensor_release(x);
    x = tens(DT_BOOL, SH(3), V(1, 0, 1));
    expect(run1(OP_UNIQUE, x, &at), DT_BOOL, SH(2), V(0, 1));
    tensor_release(x);
    x = tens(DT_F32, SH(2, 2), V(3, 1, 1, 3));
    expect(run1(OP_UNIQUE, x, &at), DT_F32, SH(2), V(1, 3));
    tensor_release(x);
    x = tens(DT_F32, SH(0, 4), V(0));
    expect(run1(OP_UNIQUE, x, &at), DT_F32, SH(0), V(0));
    tensor_release(x);
    x = tens(DT_F32, SH0, V(7));
    expect(run1(OP_UNIQUE, x, &at), DT_F32, SH(1), V(7));
    tensor_release(x);
    /* inference gives the upper bound [size] */
    Shape s;
    DType dt;
    ck_assert_int_eq(infer_meta(OP_UNIQUE, DT_I64, SH(3, 4), &at, &s, &dt), 0);
    ck_assert(s.ndim == 1 && s.d[0] == 12 && dt == DT_I64);
}
END_TEST

/* ---------- one_hot ---------- */

static OpAttrs n_attrs(int64_t n) {
    OpAttrs a = attrs();
    a.i[0] = n;
    a.given |= 1u << 1;
    return a;
}

START_TEST(cpu_one_hot_values) {
    Tensor *l = tens(DT_I64, SH(3), V(0, 2, 1));
    OpAttrs at = n_attrs(3);
    /* NumPy: np.eye(3, dtype=np.float32)[[0, 2, 1]] */
    expect(run1(OP_ONE_HOT, l, &at), DT_F32, SH(3, 3), V(1, 0, 0, 0, 0, 1, 0, 1, 0));
    tensor_release(l);
    l = tens(DT_I64, SH(2, 2), V(1, 0, 0, 1));
    at = n_attrs(2);
    expect(run1(OP_ONE_HOT, l, &at), DT_F32, SH(2, 2, 2), V(0, 1, 1, 0, 1, 0, 0, 1));
    tensor_release(l);
    l = tens(DT_I64, SH(0), V(0));
    at = n_attrs(0);
    expect(run1(OP_ONE_HOT, l, &at), DT_F32, SH(0, 0), V(0));
    tensor_release(l);
}
END_TEST

START_TEST(cpu_one_hot_errors) {
    Tensor *l = tens(DT_I64, SH(3), V(0, 3, 1));
    OpAttrs at = n_attrs(3);
    expect_fail(run1(OP_ONE_HOT, l, &at),
                "one_hot(): label 3 is out of range for n = 3 (labels must be in [0, n))");
    tensor_release(l);
    l = tens(DT_I64, SH(2), V(-1, 0));
    expect_fail(run1(OP_ONE_HOT, l, &at),
                "one_hot(): label -1 is out of range for n = 3 (labels must be in [0, n))");
    at = n_attrs(-1);
    expect_fail_both(OP_ONE_HOT, l, &at, "one_hot(): n must be non-negative, got -1");
    tensor_release(l);
    Tensor *f = tens(DT_F32, SH(2), V(0, 1));
    at = n_attrs(2);
    expect_fail_both(OP_ONE_HOT, f, &at,
                     "one_hot(): labels must be i64, got f32 (use astype(labels, \"i64\"))");
    tensor_release(f);
}
END_TEST

/* ---------- tile ---------- */

static OpAttrs reps_attrs(Shape reps) {
    OpAttrs a = attrs();
    a.shape = reps;
    a.given |= 1u << 1;
    return a;
}

START_TEST(cpu_tile_values) {
    Tensor *v = tens(DT_F32, SH(3), V(1, 2, 3)), *m = tens(DT_F32, SH(2, 2), V(1, 2, 3, 4));
    /* NumPy: np.tile(v, 2); np.tile(m, 2); np.tile(m, (2, 1, 2)); np.tile(m, (3, 1)); np.tile(m, (0, 2)) */
    OpAttrs at = reps_attrs(SH(2));
    expect(run1(OP_TILE, v, &at), DT_F32, SH(6), V(1, 2, 3, 1, 2, 3));
    expect(run1(OP_TILE, m, &at), DT_F32, SH(2, 4), V(1, 2, 1, 2, 3, 4, 3, 4));
    at = reps_attrs(SH(2, 1, 2));
    expect(run1(OP_TILE, m, &at), DT_F32, SH(2, 2, 4), V(1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4));
    at = reps_attrs(SH(3, 1));
    expect(run1(OP_TILE, m, &at), DT_F32, SH(6, 2), V(1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4));
    at = reps_attrs(SH(0, 2));
    expect(run1(OP_TILE, m, &at), DT_F32, SH(0, 4), V(0));
    at = reps_attrs(SH0);
    expect(run1(OP_TILE, m, &at), DT_F32, SH(2, 2), V(1, 2, 3, 4));
    tensor_release(v);
    tensor_release(m);
    /* NumPy: np.tile(np.float32(7), (2, 3)); np.tile of an i64 [0, 2] by 2 */
    Tensor *s = tens(DT_F32, SH0, V(7));
    at = reps_attrs(SH(2, 3));
    expect(run1(OP_TILE, s, &at), DT_F32, SH(2, 3), V(7, 7, 7, 7, 7, 7));
    tensor_release(s);
    Tensor *e = tens(DT_I64, SH(0, 2), V(0));
    at = reps_attrs(SH(2));
    expect(run1(OP_TILE, e, &at), DT_I64, SH(0, 4), V(0));
    tensor_release(e);
}
END_TEST

START_TEST(cpu_tile_errors) {
    Tensor *m = tens(DT_F32, SH(2, 2), V(1, 2, 3, 4));
    OpAttrs at = reps_attrs(SH(2, -1));
    expect_fail_both(OP_TILE, m, &at, "tile(): reps must be non-negative, got -1");
    tensor_release(m);
    Shape out;
    DType dt;
    at = reps_attrs(SH((int64_t)1 << 40));
    ck_assert_int_eq(infer_meta(OP_TILE, DT_F32, SH((int64_t)1 << 40), &at, &out, &dt), -1);
    ck_assert_str_eq(op_error(), "tile(): the result is too large (element count overflows)");
}
END_TEST

/* ---------- repeat ---------- */

static OpAttrs repeat_attrs(int64_t n, bool has_axis, int axis) {
    OpAttrs a = has_axis ? with_axis(2, axis) : attrs();
    a.i[0] = n;
    a.given |= 1u << 1;
    return a;
}

START_TEST(cpu_repeat_values) {
    Tensor *m = tens(DT_F32, SH(2, 2), V(1, 2, 3, 4));
    /* NumPy: np.repeat(m, 2); np.repeat(m, 2, axis=0); np.repeat(m, 3, axis=-1); np.repeat(m, 0, axis=1) */
    OpAttrs at = repeat_attrs(2, false, 0);
    expect(run1(OP_REPEAT, m, &at), DT_F32, SH(8), V(1, 1, 2, 2, 3, 3, 4, 4));
    at = repeat_attrs(2, true, 0);
    expect(run1(OP_REPEAT, m, &at), DT_F32, SH(4, 2), V(1, 2, 1, 2, 3, 4, 3, 4));
    at = repeat_attrs(3, true, -1);
    expect(run1(OP_REPEAT, m, &at), DT_F32, SH(2, 6), V(1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4));
    at = repeat_attrs(0, true, 1);
    expect(run1(OP_REPEAT, m, &at), DT_F32, SH(2, 0), V(0));
    tensor_release(m);
    /* NumPy: np.repeat(np.int64(5), 3) */
    Tensor *s = tens(DT_I64, SH0, V(5));
    at = repeat_attrs(3, false, 0);
    expect(run1(OP_REPEAT, s, &at), DT_I64, SH(3), V(5, 5, 5));
    at = repeat_attrs(3, true, 0);
    expect_fail_both(OP_REPEAT, s, &at, "repeat(): axis 0 is out of range for a tensor of rank 0");
    tensor_release(s);
    Tensor *e = tens(DT_BOOL, SH(0, 2), V(0));
    at = repeat_attrs(3, false, 0);
    expect(run1(OP_REPEAT, e, &at), DT_BOOL, SH(0), V(0));
    at = repeat_attrs(3, true, 1);
    expect(run1(OP_REPEAT, e, &at), DT_BOOL, SH(0, 6), V(0));
    at = repeat_attrs(-2, true, 1);
    expect_fail_both(OP_REPEAT, e, &at, "repeat(): n must be non-negative, got -2");
    at = repeat_attrs(1, true, 2);
    expect_fail_both(OP_REPEAT, e, &at, "repeat(): axis 2 is out of range for a tensor of rank 2");
    tensor_release(e);
}
END_TEST

/* ---------- pad ---------- */

static OpAttrs pad_attrs(int npairs, const int64_t (*pairs)[2]) {
    OpAttrs a = attrs();
    a.npairs = npairs;
    memcpy(a.pairs, pairs, sizeof(int64_t) * 2 * (size_t)npairs);
    a.given |= 1u << 1;
    return a;
}

static Tensor *pad(const Tensor *t, const OpAttrs *at, OpArg value) {
    OpArg in[2] = { op_arg_tensor(t), value };
    Tensor *out[OP_MAX_OUT] = { NULL };
    return call(OP_PAD, in, value.kind == ARG_NONE ? 1 : 2, at, out) ? NULL : out[0];
}

START_TEST(cpu_pad_values) {
    /* NumPy: np.pad(np.array([[1, 2], [3, 4]]), [[1, 0], [0, 2]], constant_values=9) */
    Tensor *m = tens(DT_I64, SH(2, 2), V(1, 2, 3, 4));
    OpAttrs at = pad_attrs(2, (const int64_t[][2]){ { 1, 0 }, { 0, 2 } });
    expect(pad(m, &at, op_arg_num(9, false)), DT_I64, SH(3, 4), V(9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9));
    /* the default value is 0 */
    expect(pad(m, &at, (OpArg){ .kind = ARG_NONE }), DT_I64, SH(3, 4), V(0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0));
    tensor_release(m);
    /* NumPy: np.pad(f32 [[1, 2], [3, 4]], [[1, 1]], constant_values=np.nan): one pair for every axis */
    Tensor *f = tens(DT_F32, SH(2, 2), V(1, 2, 3, 4));
    at = pad_attrs(1, (const int64_t[][2]){ { 1, 1 } });
    expect(pad(f, &at, op_arg_num(NAN, false)), DT_F32, SH(4, 4),
           V(NAN, NAN, NAN, NAN, NAN, 1, 2, NAN, NAN, 3, 4, NAN, NAN, NAN, NAN, NAN));
    tensor_release(f);
    /* NumPy: np.pad(np.zeros((0, 2), np.float32), 1, constant_values=5) */
    Tensor *e = tens(DT_F32, SH(0, 2), V(0));
    expect(pad(e, &at, op_arg_num(5, false)), DT_F32, SH(2, 4), V(5, 5, 5, 5, 5, 5, 5, 5));
    tensor_release(e);
    /* NumPy: np.pad([False], [[2, 1]], constant_values=2) */
    Tensor *b = tens(DT_BOOL, SH(1), V(0));
    at = pad_attrs(1, (const int64_t[][2]){ { 2, 1 } });
    expect(pad(b, &at, op_arg_num(2, false)), DT_BOOL, SH(4), V(1, 1, 0, 1));
    tensor_release(b);
    /* NumPy: np.pad(np.arange(8.).reshape(2, 2, 2), [[0, 1], [1, 0], [1, 1]], constant_values=-1),
     * the value given as a 0-d tensor */
    Tensor *c = tens(DT_F64, SH(2, 2, 2), V(0, 1, 2, 3, 4, 5, 6, 7)), *val = tens(DT_I64, SH0, V(-1));
    at = pad_attrs(3, (const int64_t[][2]){ { 0, 1 }, { 1, 0 }, { 1, 1 } });
    expect(pad(c, &at, op_arg_tensor(val)), DT_F64, SH(3, 3, 4),
           V(-1, -1, -1, -1, -1, 0, 1, -1, -1, 2, 3, -1, -1, -1, -1, -1, -1, 4, 5, -1, -1, 6, 7, -1, -1, -1, -1, -1, -1, -1,
             -1, -1, -1, -1, -1, -1));
    tensor_release(c);
    tensor_release(val);
    /* NumPy: np.pad(np.array(5), 1) is array(5) */
    Tensor *s = tens(DT_F32, SH0, V(5));
    at = pad_attrs(1, (const int64_t[][2]){ { 1, 1 } });
    expect(pad(s, &at, op_arg_num(0, false)), DT_F32, SH0, V(5));
    tensor_release(s);
}
END_TEST

START_TEST(cpu_pad_errors) {
    Tensor *m = tens(DT_I64, SH(2, 2), V(1, 2, 3, 4));
    OpAttrs at = pad_attrs(1, (const int64_t[][2]){ { 1, 1 } });
    expect_fail(pad(m, &at, op_arg_num(1.5, false)),
                "pad(): cannot convert 1.5 to i64 (the value must be an integer for an i64 tensor)");
    expect_fail(pad(m, &at, op_arg_num(NAN, false)), "pad(): cannot convert nan to i64");
    expect_fail(pad(m, &at, op_arg_num(-INFINITY, false)), "pad(): cannot convert -inf to i64");
    Tensor *two = tens(DT_F32, SH(2), V(1, 2));
    expect_fail(pad(m, &at, op_arg_tensor(two)),
                "pad(): value must be a number or a one-element tensor, got a tensor of shape [2]");
    tensor_release(two);
    at = pad_attrs(3, (const int64_t[][2]){ { 1, 1 }, { 1, 1 }, { 1, 1 } });
    expect_fail_both(OP_PAD, m, &at,
                     "pad(): widths has 3 pairs for a tensor of rank 2 (give one [before, after] per axis, or one for all)");
    at = pad_attrs(2, (const int64_t[][2]){ { 1, 1 }, { 0, -1 } });
    expect_fail_both(OP_PAD, m, &at, "pad(): widths must be non-negative, got -1");
    tensor_release(m);
}
END_TEST

/* ---------- diff ---------- */

START_TEST(cpu_diff_values) {
    OpAttrs at = with_axis(1, -1);
    /* NumPy: np.diff(f32 [1, 4, 9, 16]); np.diff(i64 3x3, axis=0); np.diff(bool); np.diff(i64 extremes) */
    Tensor *x = tens(DT_F32, SH(4), V(1, 4, 9, 16));
    expect(run1(OP_DIFF, x, &at), DT_F32, SH(3), V(3, 5, 7));
    tensor_release(x);
    x = tens(DT_I64, SH(3, 3), V(1, 2, 4, 7, 11, 16, 22, 29, 37));
    at = with_axis(1, 0);
    expect(run1(OP_DIFF, x, &at), DT_I64, SH(2, 3), V(6, 9, 12, 15, 18, 21));
    tensor_release(x);
    at = with_axis(1, -1);
    x = tens(DT_BOOL, SH(4), V(1, 0, 0, 1));
    expect(run1(OP_DIFF, x, &at), DT_BOOL, SH(3), V(1, 0, 1));
    tensor_release(x);
    x = tens(DT_I64, SH(2), V(0, 0));
    ((int64_t *)x->data)[0] = INT64_MIN;
    ((int64_t *)x->data)[1] = INT64_MAX;
    expect(run1(OP_DIFF, x, &at), DT_I64, SH(1), V(-1));
    tensor_release(x);
    /* NumPy: np.diff of shape (2, 1) along -1 is (2, 0); of an empty axis stays empty */
    x = tens(DT_F64, SH(2, 1), V(1, 2));
    expect(run1(OP_DIFF, x, &at), DT_F64, SH(2, 0), V(0));
    tensor_release(x);
    x = tens(DT_F64, SH(0, 3), V(0));
    at = with_axis(1, 0);
    expect(run1(OP_DIFF, x, &at), DT_F64, SH(0, 3), V(0));
    at = with_axis(1, 3);
    expect_fail_both(OP_DIFF, x, &at, "diff(): axis 3 is out of range for a tensor of rank 2");
    tensor_release(x);
    x = tens(DT_F64, SH0, V(1));
    at = with_axis(1, -1);
    expect_fail_both(OP_DIFF, x, &at, "diff(): needs a tensor of rank 1 or more, got a 0-d tensor");
    tensor_release(x);
}
END_TEST

/* ---------- trace ---------- */

START_TEST(cpu_trace_values) {
    OpAttrs at = attrs();
    /* NumPy: np.trace(np.arange(9, dtype=np.float32).reshape(3, 3)) etc. */
    Tensor *x = tens(DT_F32, SH(3, 3), V(0, 1, 2, 3, 4, 5, 6, 7, 8));
    expect(run1(OP_TRACE, x, &at), DT_F32, SH0, V(12));
    tensor_release(x);
    x = tens(DT_F64, SH(2, 3, 2), V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
    expect(run1(OP_TRACE, x, &at), DT_F64, SH(2), V(8, 10));
    tensor_release(x);
    x = tens(DT_I64, SH(3, 2), V(0, 1, 2, 3, 4, 5));
    expect(run1(OP_TRACE, x, &at), DT_I64, SH0, V(3));
    tensor_release(x);
    x = tens(DT_BOOL, SH(2, 2), V(1, 0, 1, 1));
    expect(run1(OP_TRACE, x, &at), DT_I64, SH0, V(2));
    tensor_release(x);
    x = tens(DT_F32, SH(0, 3), V(0));
    expect(run1(OP_TRACE, x, &at), DT_F32, SH0, V(0));
    tensor_release(x);
    x = tens(DT_F32, SH(3), V(1, 2, 3));
    expect_fail_both(OP_TRACE, x, &at, "trace(): needs a tensor of rank 2 or more, got rank 1");
    tensor_release(x);
}
END_TEST

/* ---------- norm (a reduction) ---------- */

START_TEST(op_reduce_norm) {
    /* NumPy: np.sqrt(np.sum(z * z)) for z = np.arange(200, dtype=np.float32) * np.float32(0.37):
     * the same pairwise sum, so the same f32 bits */
    double v[300];
    for (int i = 0; i < 200; i++) v[i] = (float)((float)i * 0.37f);
    Tensor *z = tens(DT_F32, SH(200), v), *r = op_reduce(OP_NORM, z, NULL, -1, false);
    expect(r, DT_F32, SH0, V(601.9412231445312));
    tensor_release(z);
    /* NumPy: np.sqrt(np.sum(z64 * z64)) for z64 = np.arange(300) * 0.1 - 7 (np.linalg.norm,
     * through BLAS dot, gives ...308: one ulp) */
    for (int i = 0; i < 300; i++) v[i] = i * 0.1 - 7;
    z = tens(DT_F64, SH(300), v);
    r = op_reduce(OP_NORM, z, NULL, -1, false);
    ck_assert_int_eq(r->dtype, DT_F64);
    ck_assert(fabs(tensor_get(r, 0) - 203.61851585747306) <= 4e-14 * 203.61851585747306);
    tensor_release(r);
    tensor_release(z);
    /* NumPy: np.linalg.norm(f32 [[1, 2, 3], [4, 5, 6]], axis=0) */
    z = tens(DT_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    r = op_reduce(OP_NORM, z, (int[]){ 0 }, 1, false);
    expect(r, DT_F32, SH(3), V(4.123105525970459, 5.385164737701416, 6.7082037925720215));
    tensor_release(z);
    /* i64 gives f32 (as mean): np.linalg.norm([[3, 4], [5, 12]], axis=1) = [5, 13] */
    z = tens(DT_I64, SH(2, 2), V(3, 4, 5, 12));
    expect(op_reduce(OP_NORM, z, (int[]){ -1 }, 1, true), DT_F32, SH(2, 1), V(5, 13));
    tensor_release(z);
    z = tens(DT_BOOL, SH(4), V(1, 0, 1, 1));
    expect(op_reduce(OP_NORM, z, NULL, -1, false), DT_F32, SH0, V(1.7320508075688772f));
    tensor_release(z);
    /* an empty axis: np.linalg.norm(np.zeros((2, 0)), axis=1) = [0, 0] */
    z = tens(DT_F64, SH(2, 0), V(0));
    expect(op_reduce(OP_NORM, z, (int[]){ 1 }, 1, false), DT_F64, SH(2), V(0, 0));
    tensor_release(z);
}
END_TEST

Suite *axis_suite(void) {
    Suite *s = suite_create("axis");
    TCase *tc = tcase_create("axis");
    tcase_add_test(tc, cpu_cum_values);
    tcase_add_test(tc, cpu_cum_integers);
    tcase_add_test(tc, cpu_cum_empty_and_errors);
    tcase_add_test(tc, cpu_sort_nan_and_zeros);
    tcase_add_test(tc, cpu_sort_axis0_ties);
    tcase_add_test(tc, cpu_sort_long);
    tcase_add_test(tc, cpu_sort_empty_and_errors);
    tcase_add_test(tc, cpu_topk_values);
    tcase_add_test(tc, cpu_topk_window_and_sort);
    tcase_add_test(tc, cpu_topk_empty_and_errors);
    tcase_add_test(tc, cpu_unique_values);
    tcase_add_test(tc, cpu_one_hot_values);
    tcase_add_test(tc, cpu_one_hot_errors);
    tcase_add_test(tc, cpu_tile_values);
    tcase_add_test(tc, cpu_tile_errors);
    tcase_add_test(tc, cpu_repeat_values);
    tcase_add_test(tc, cpu_pad_values);
    tcase_add_test(tc, cpu_pad_errors);
    tcase_add_test(tc, cpu_diff_values);
    tcase_add_test(tc, cpu_trace_values);
    tcase_add_test(tc, op_reduce_norm);
    suite_add_tcase(s, tc);
    return s;
}
