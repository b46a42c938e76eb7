/* infer_axis.c - shapes and dtypes of the ops that work along an axis (cumsum ... diff)
 * and of trace.
 *
 * Like infer.c, each infer_<impl> reads operand dtypes and shapes only (c->in[k].t is NULL
 * while compiling) and raises every error that does not depend on the data, so eager and
 * static code reject the same calls with the same words. Value-dependent checks (one_hot's
 * labels, pad's value) are the kernels' (ops/cpu/axis.c). */
#include "opcall.h"

/* The parameter index of `axis` in each signature that has one (ops.def). */
enum { AXIS_PARAM_REPEAT = 2 };

static Shape in_shape(const OpCall *c, int k) {
    Shape s;
    op_arg_shape(&c->in[k], &s);
    return s;
}

static const char *name_of(const OpCall *c) { return op_info[c->op].name; }

/* Normalises axis for a tensor of rank ndim: negative counts from the end. */
static int axis_in_range(const OpCall *c, int axis, int ndim) {
    int ax = axis < 0 ? axis + ndim : axis;
    if (ax < 0 || ax >= ndim) {
        op_failk(ERRK_INDEX, "%s(): axis %d is out of range for a tensor of rank %d", name_of(c), axis, ndim);
        return -1;
    }
    return ax;
}

/* sum's rule: bool and i64 accumulate in i64; floats keep their dtype. */
static DType sum_dtype(DType dt) { return dt == DT_BOOL ? DT_I64 : dt; }

/* Checks the element count of a result shape (overflow, negative dims). */
static int checked(const Shape *s) { return shape_count(s) < 0 ? -1 : 0; }

/* dim * n without overflow; the error names the op. */
static int scaled_dim(const OpCall *c, int64_t dim, int64_t n, int64_t *out) {
    if (__builtin_mul_overflow(dim, n, out)) {
        op_fail("%s(): the result is too large (element count overflows)", name_of(c));
        return -1;
    }
    return 0;
}

int infer_cum(const OpCall *c, Shape *out, DType *dt) {
    out[0] = in_shape(c, 0);
    if (axis_in_range(c, c->at->axis, out[0].ndim) < 0) return -1;
    dt[0] = sum_dtype(c->in[0].dtype);
    return 0;
}

int infer_sort(const OpCall *c, Shape *out, DType *dt) {
    out[0] = in_shape(c, 0);
    if (axis_in_range(c, c->at->axis, out[0].ndim) < 0) return -1;
    dt[0] = c->op == OP_ARGSORT ? DT_I64 : c->in[0].dtype;
    return 0;
}

/* topk(t, k, axis): values and indices, each t's shape with k along axis. */
int infer_topk(const OpCall *c, Shape *out, DType *dt) {
    Shape s = in_shape(c, 0);
    int ax = axis_in_range(c, c->at->axis, s.ndim);
    if (ax < 0) return -1;
    int64_t k = c->at->i[0];
    if (k < 0 || k > s.d[ax]) {
        op_failk(ERRK_INDEX, "topk(): k = %lld is out of range for axis %d of length %lld", (long long)k, c->at->axis,
                (long long)s.d[ax]);
        return -1;
    }
    s.d[ax] = k;
    out[0] = out[1] = s;
    dt[0] = c->in[0].dtype;
    dt[1] = DT_I64;
    return 0;
}

/* The result's length depends on the data: [t.size] is an upper bound (F_DYNAMIC). */
int infer_unique(const OpCall *c, Shape *out, DType *dt) {
    Shape s = in_shape(c, 0);
    out[0] = (Shape){ 1, { shape_count(&s) } };
    dt[0] = c->in[0].dtype;
    return checked(&out[0]);
}

int infer_one_hot(const OpCall *c, Shape *out, DType *dt) {
    if (c->in[0].dtype != DT_I64) {
        op_failk(ERRK_TYPE, "one_hot(): labels must be i64, got %s (use astype(labels, \"i64\"))", dtype_name(c->in[0].dtype));
        return -1;
    }
    int64_t n = c->at->i[0];
    if (n < 0) {
        op_fail("one_hot(): n must be non-negative, got %lld", (long long)n);
        return -1;
    }
    Shape s = in_shape(c, 0);
    if (s.ndim + 1 > TSL_MAX_RANK) {
        op_failk(ERRK_SHAPE, "one_hot(): the result's rank would exceed %d", TSL_MAX_RANK);
        return -1;
    }
    s.d[s.ndim++] = n;
    out[0] = s;
    dt[0] = DT_F32;
    return checked(&out[0]);
}

/* NumPy tile: t and reps are aligned at their last axes, the shorter padded with 1s. */
int infer_tile(const OpCall *c, Shape *out, DType *dt) {
    Shape s = in_shape(c, 0);
    const Shape *reps = &c->at->shape;
    int nd = s.ndim > reps->ndim ? s.ndim : reps->ndim;
    if (nd > TSL_MAX_RANK) {
        op_failk(ERRK_SHAPE, "tile(): the result's rank would exceed %d", TSL_MAX_RANK);
        return -1;
    }
    out[0].ndim = nd;
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - s.ndim), ir = i - (nd - reps->ndim);
        int64_t d = ia >= 0 ? s.d[ia] : 1, r = ir >= 0 ? reps->d[ir] : 1;
        if (r < 0) {
            op_fail("tile(): reps must be non-negative, got %lld", (long long)r);
            return -1;
        }
        if (scaled_dim(c, d, r, &out[0].d[i])) return -1;
    }
    dt[0] = c->in[0].dtype;
    return checked(&out[0]);
}

/* repeat(t, n, axis): n copies of each element along axis, or of the flattened tensor. */
int infer_repeat(const OpCall *c, Shape *out, DType *dt) {
    Shape s = in_shape(c, 0);
    int64_t n = c->at->i[0];
    if (n < 0) {
        op_fail("repeat(): n must be non-negative, got %lld", (long long)n);
        return -1;
    }
    dt[0] = c->in[0].dtype;
    if (!op_given(c, AXIS_PARAM_REPEAT)) {
        int64_t size = shape_count(&s);
        if (size < 0) return -1;
        out[0].ndim = 1;
        if (scaled_dim(c, size, n, &out[0].d[0])) return -1;
        return checked(&out[0]);
    }
    int ax = axis_in_range(c, c->at->axis, s.ndim);
    if (ax < 0) return -1;
    out[0] = s;
    if (scaled_dim(c, s.d[ax], n, &out[0].d[ax])) return -1;
    return checked(&out[0]);
}

/* The [before, after] widths of axis i: one pair per axis, or one pair for every axis. */
static const int64_t *pad_pair(const OpAttrs *at, int i) { return at->pairs[at->npairs == 1 ? 0 : i]; }

static int pad_value_shape(const OpCall *c) {
    if (c->nin < 2 || c->in[1].kind != ARG_TENSOR) return 0;
    Shape v = in_shape(c, 1);
    if (shape_count(&v) != 1) {
        char buf[600];
        op_failk(ERRK_TYPE, "pad(): value must be a number or a one-element tensor, got a tensor of shape %s",
                shape_str(&v, buf, sizeof buf));
        return -1;
    }
    return 0;
}

int infer_pad(const OpCall *c, Shape *out, DType *dt) {
    Shape s = in_shape(c, 0);
    const OpAttrs *at = c->at;
    if (at->npairs != s.ndim && at->npairs != 1) {
        op_failk(ERRK_SHAPE, "pad(): widths has %d pair%s for a tensor of rank %d "
                "(give one [before, after] per axis, or one for all)",
                at->npairs, at->npairs == 1 ? "" : "s", s.ndim);
        return -1;
    }
    for (int k = 0; k < at->npairs; k++)
        for (int j = 0; j < 2; j++)
            if (at->pairs[k][j] < 0) {
                op_fail("pad(): widths must be non-negative, got %lld", (long long)at->pairs[k][j]);
                return -1;
            }
    out[0] = s;
    for (int i = 0; i < s.ndim; i++) {
        const int64_t *p = pad_pair(at, i);
        if (__builtin_add_overflow(s.d[i], p[0], &out[0].d[i]) ||
            __builtin_add_overflow(out[0].d[i], p[1], &out[0].d[i])) {
            op_fail("pad(): the result is too large (element count overflows)");
            return -1;
        }
    }
    dt[0] = c->in[0].dtype;
    return pad_value_shape(c) || checked(&out[0]) ? -1 : 0;
}

/* diff: n - 1 along axis (none left of an empty axis); bool compares with != (NumPy). */
int infer_diff(const OpCall *c, Shape *out, DType *dt) {
    Shape s = in_shape(c, 0);
    if (s.ndim == 0) {
        op_failk(ERRK_SHAPE, "diff(): needs a tensor of rank 1 or more, got a 0-d tensor");
        return -1;
    }
    int ax = axis_in_range(c, c->at->axis, s.ndim);
    if (ax < 0) return -1;
    if (s.d[ax] > 0) s.d[ax]--;
    out[0] = s;
    dt[0] = c->in[0].dtype;
    return 0;
}

/* trace: the diagonal of the first two axes summed; the other axes remain. */
int infer_trace(const OpCall *c, Shape *out, DType *dt) {
    Shape s = in_shape(c, 0);
    if (s.ndim < 2) {
        op_failk(ERRK_SHAPE, "trace(): needs a tensor of rank 2 or more, got rank %d", s.ndim);
        return -1;
    }
    out[0].ndim = s.ndim - 2;
    for (int i = 2; i < s.ndim; i++) out[0].d[i - 2] = s.d[i];
    dt[0] = sum_dtype(c->in[0].dtype);
    return 0;
}

/* take / scatter_add: positions into the flattened t (the gradient of indexing, whose
 * backward adds the incoming gradient back at the positions it read). */
int infer_gather(const OpCall *c, Shape *out, DType *dt) {
    char b1[600], b2[600];
    if (c->in[1].kind != ARG_TENSOR || c->in[1].dtype != DT_I64) {
        op_failk(ERRK_TYPE, "%s(): indices must be an i64 tensor, got %s", name_of(c),
                c->in[1].kind == ARG_TENSOR ? dtype_name((DType)c->in[1].dtype) : "a number");
        return -1;
    }
    Shape s = in_shape(c, 0), idx = in_shape(c, 1);
    if (c->op == OP_TAKE) {
        out[0] = idx;
        dt[0] = c->in[0].dtype;
        return 0;
    }
    Shape v = in_shape(c, 2);
    if (shape_count(&v) != 1 && shape_count(&v) != shape_count(&idx)) {
        op_failk(ERRK_SHAPE, "scatter_add(): v of shape %s does not match indices of shape %s (give one value per index, or one)",
                shape_str(&v, b1, sizeof b1), shape_str(&idx, b2, sizeof b2));
        return -1;
    }
    OpArg tv[2] = { c->in[0], c->in[2] };
    out[0] = s;
    dt[0] = op_promote(tv, 2);
    return 0;
}
