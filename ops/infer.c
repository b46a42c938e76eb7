/* infer.c - shape and dtype inference: the shape rules (shape_*) and the infer_<impl>
 * function of each op family of ops.def that ops/ owns (infer_axis.c and infer_linalg.c
 * hold the others).
 *
 * op_run calls these before the kernel, and the static compiler calls them instead of
 * running anything, so both modes agree on every result shape, dtype and error message.
 * Each returns 0, or -1 with the message in op_error(). */
#include <math.h>
#include <string.h>
#include "infer.h"
#include "dist.h"
#include "mem.h"

/* What errors call an op: its operator symbol, else its name. */
const char *op_symbol(OpCode op) { return op_info[op].symbol ? op_info[op].symbol : op_info[op].name; }

/* NumPy matmul: a 1-D left operand is a row, a 1-D right one a column (both dropped from
 * the result); leading axes are batches that broadcast. No Shape is copied whole: this runs
 * for every eager `@`. */
int shape_matmul(const Shape *sa, DType da, const Shape *sb, DType db, Shape *out, DType *dt) {
    char s1[600], s2[600];
    if (sa->ndim == 0 || sb->ndim == 0) {
        op_failk(ERRK_SHAPE, "matmul: operands must have at least one dimension, got %s and %s", shape_str(sa, s1, sizeof s1),
                shape_str(sb, s2, sizeof s2));
        return -1;
    }
    int64_t m = sa->ndim > 1 ? sa->d[sa->ndim - 2] : 1, k = sa->d[sa->ndim - 1];
    int64_t k2 = sb->ndim > 1 ? sb->d[sb->ndim - 2] : sb->d[0], n = sb->ndim > 1 ? sb->d[sb->ndim - 1] : 1;
    Shape ba, bb;
    ba.ndim = sa->ndim > 2 ? sa->ndim - 2 : 0;
    bb.ndim = sb->ndim > 2 ? sb->ndim - 2 : 0;
    memcpy(ba.d, sa->d, sizeof(int64_t) * (size_t)ba.ndim);
    memcpy(bb.d, sb->d, sizeof(int64_t) * (size_t)bb.ndim);
    if (k != k2 || shape_broadcast(&ba, &bb, out, "@")) {
        op_failk(ERRK_SHAPE, "shape mismatch for '@': %s and %s", shape_str(sa, s1, sizeof s1), shape_str(sb, s2, sizeof s2));
        return -1;
    }
    if (sa->ndim > 1) out->d[out->ndim++] = m;
    if (sb->ndim > 1) out->d[out->ndim++] = n;
    *dt = da > db ? da : db;
    return 0;
}

/* NumPy lets axis 0 or -1 reduce a 0-d tensor, to itself (np.sum(np.float32(2), axis=0) is
 * 2.0, keepdims or not; PyTorch does the same, also for mean and in lists): such an axis
 * names no axis, and may be named once. */
static bool scalar_axis(int ndim, int axis) { return ndim == 0 && (axis == 0 || axis == -1); }

int axes_mask(int ndim, const int *axes, int n, const char *name, bool *mask) {
    bool scalar_seen = false;
    memset(mask, 0, sizeof(bool) * TSL_MAX_RANK);
    if (n < 0) {
        for (int i = 0; i < ndim; i++) mask[i] = true;
        return 0;
    }
    for (int k = 0; k < n; k++) {
        if (scalar_axis(ndim, axes[k])) {
            if (scalar_seen) {
                op_fail("%s: axis %d is repeated", name, axes[k]);
                return -1;
            }
            scalar_seen = true;
            continue;
        }
        int ax = axes[k] < 0 ? axes[k] + ndim : axes[k];
        if (ax < 0 || ax >= ndim) {
            op_failk(ERRK_INDEX, "%s: axis %d is out of range for a tensor of rank %d", name, axes[k], ndim);
            return -1;
        }
        if (mask[ax]) {
            op_fail("%s: axis %d is repeated", name, axes[k]);
            return -1;
        }
        mask[ax] = true;
    }
    return 0;
}

DType reduce_dtype(OpCode op, DType in) {
    switch (op) {
    case OP_SUM: case OP_PROD: return dtype_is_float(in) ? in : DT_I64;
    case OP_MEAN: case OP_VAR: case OP_STD: case OP_LOGSUMEXP: case OP_NORM: return dtype_is_float(in) ? in : DT_F32;
    case OP_ARGMAX: case OP_ARGMIN: return DT_I64;
    case OP_ALL: case OP_ANY: return DT_BOOL;
    default: return in;
    }
}

int shape_reduce(OpCode op, const Shape *a, DType da, const int *axes, int n, bool keepdims, Shape *out, DType *dt) {
    bool mask[TSL_MAX_RANK];
    if ((op == OP_MAX || op == OP_MIN) && n == 1 && (axes[0] >= a->ndim || axes[0] < -a->ndim) &&
        !scalar_axis(a->ndim, axes[0])) {
        /* max(1, 2) is a Python habit: say what the second argument is, and what was meant */
        const char *name = op_info[op].name;
        op_failk(ERRK_INDEX, "%s: axis %d is out of range for a tensor of rank %d (%s's second argument is an axis; "
                "the %s of two values is %s(a, b))", name, axes[0], a->ndim, name, op == OP_MAX ? "larger" : "smaller",
                op == OP_MAX ? "maximum" : "minimum");
        return -1;
    }
    if (axes_mask(a->ndim, axes, n, op_info[op].name, mask)) return -1;
    out->ndim = 0;
    bool empty = false;   /* a reduced axis of length 0 */
    for (int i = 0; i < a->ndim; i++) {
        if (!mask[i]) { out->d[out->ndim++] = a->d[i]; }
        else {
            empty |= a->d[i] == 0;
            if (keepdims) out->d[out->ndim++] = 1;
        }
    }
    /* an empty axis has no largest element, even when the result itself is empty */
    if (empty && (op == OP_MAX || op == OP_MIN || op == OP_ARGMAX || op == OP_ARGMIN)) {
        op_failk(ERRK_SHAPE, "%s of an empty axis (zero-size reduction)", op_info[op].name);
        return -1;
    }
    *dt = reduce_dtype(op, da);
    return 0;
}

int shape_softmax(const Shape *a, DType da, int axis, bool log, int *ax, DType *dt) {
    const char *name = log ? "log_softmax" : "softmax";
    if (a->ndim == 0) {
        op_failk(ERRK_SHAPE, "%s needs a tensor of rank 1 or more", name);
        return -1;
    }
    *ax = axis < 0 ? axis + a->ndim : axis;
    if (*ax < 0 || *ax >= a->ndim) {
        op_failk(ERRK_INDEX, "%s: axis %d is out of range for a tensor of rank %d", name, axis, a->ndim);
        return -1;
    }
    *dt = dtype_is_float(da) ? da : DT_F32;
    return 0;
}

int norm_axis(int axis, int ndim, const char *name) {
    int ax = axis < 0 ? axis + ndim : axis;
    if (ax < 0 || ax >= ndim) {
        op_failk(ERRK_INDEX, "%s: axis %d is out of range for rank %d", name, axis, ndim);
        return -1;
    }
    return ax;
}

int shape_reshape(const Shape *a, const Shape *req, Shape *out) {
    Shape t = *req;
    int infer = -1;
    int64_t known = 1, size = shape_count(a);
    char b1[600], b2[600];
    if (t.ndim > TSL_MAX_RANK) { op_failk(ERRK_SHAPE, "reshape: rank %d is above the limit of %d", t.ndim, TSL_MAX_RANK); return -1; }
    for (int i = 0; i < t.ndim; i++) {
        if (t.d[i] == -1) {
            if (infer >= 0) { op_failk(ERRK_SHAPE, "reshape: only one dimension can be -1"); return -1; }
            infer = i;
        } else if (t.d[i] < 0) {
            op_failk(ERRK_SHAPE, "reshape: negative dimension %lld", (long long)t.d[i]);
            return -1;
        } else if (__builtin_mul_overflow(known, t.d[i], &known)) {
            op_failk(ERRK_SHAPE, "reshape: shape %s is too large (element count overflows)", shape_str(&t, b1, sizeof b1));
            return -1;
        }
    }
    if (infer >= 0) {
        if (known == 0 || size % known) {
            op_failk(ERRK_SHAPE, "cannot reshape a tensor of shape %s into %s", shape_str(a, b1, sizeof b1), shape_str(&t, b2, sizeof b2));
            return -1;
        }
        t.d[infer] = size / known;
        known = size;
    }
    if (known != size) {
        op_failk(ERRK_SHAPE, "cannot reshape a tensor of shape %s (%lld elements) into %s", shape_str(a, b1, sizeof b1),
                (long long)size, shape_str(&t, b2, sizeof b2));
        return -1;
    }
    if (shape_count(&t) < 0) return -1;   /* a 0 dim hid an overflow from `known`: [0, 2**40, 2**40] */
    *out = t;
    return 0;
}

int shape_transpose(const Shape *a, const int *perm_in, int n, int *perm, Shape *out) {
    bool seen[TSL_MAX_RANK] = { false };
    if (!perm_in) {
        for (int i = 0; i < a->ndim; i++) perm[i] = a->ndim - 1 - i;
    } else {
        if (n != a->ndim) { op_failk(ERRK_SHAPE, "transpose: axes has %d entries for a tensor of rank %d", n, a->ndim); return -1; }
        for (int i = 0; i < n; i++) {
            int ax = norm_axis(perm_in[i], a->ndim, "transpose");
            if (ax < 0) return -1;
            if (seen[ax]) { op_fail("transpose: axis %d is repeated", perm_in[i]); return -1; }
            seen[ax] = true;
            perm[i] = ax;
        }
    }
    out->ndim = a->ndim;
    for (int i = 0; i < a->ndim; i++) out->d[i] = a->d[perm[i]];
    return 0;
}

int shape_expand_dims(const Shape *a, int axis, Shape *out) {
    int ax = norm_axis(axis, a->ndim + 1, "expand_dims");
    if (ax < 0) return -1;
    if (a->ndim + 1 > TSL_MAX_RANK) { op_failk(ERRK_SHAPE, "expand_dims: rank would exceed %d", TSL_MAX_RANK); return -1; }
    out->ndim = a->ndim + 1;
    for (int i = 0, k = 0; i < out->ndim; i++) out->d[i] = i == ax ? 1 : a->d[k++];
    return 0;
}

int shape_squeeze(const Shape *a, const int *axes, int n, Shape *out) {
    bool drop[TSL_MAX_RANK] = { false };
    if (n < 0) {
        for (int i = 0; i < a->ndim; i++) drop[i] = a->d[i] == 1;
    } else {
        for (int k = 0; k < n; k++) {
            if (scalar_axis(a->ndim, axes[k])) continue;   /* NumPy, PyTorch: squeeze(0-d, 0) is itself */
            int ax = norm_axis(axes[k], a->ndim, "squeeze");
            if (ax < 0) return -1;
            if (a->d[ax] != 1) {
                op_fail("squeeze: axis %d has size %lld, not 1", axes[k], (long long)a->d[ax]);
                return -1;
            }
            drop[ax] = true;
        }
    }
    out->ndim = 0;
    for (int i = 0; i < a->ndim; i++)
        if (!drop[i]) out->d[out->ndim++] = a->d[i];
    return 0;
}

int shape_concat(const Shape *const *s, const DType *dts, int n, int axis, Shape *out, DType *dt) {
    if (n == 0) { op_fail("concat needs at least one tensor"); return -1; }
    if (s[0]->ndim == 0) { op_failk(ERRK_SHAPE, "concat: zero-dimensional tensors cannot be concatenated"); return -1; }
    int ax = norm_axis(axis, s[0]->ndim, "concat");
    if (ax < 0) return -1;
    *out = *s[0];
    out->d[ax] = 0;
    *dt = dts[0];
    for (int k = 0; k < n; k++) {
        if (s[k]->ndim != s[0]->ndim) {
            op_failk(ERRK_SHAPE, "concat: all tensors must have the same rank (got %d and %d)", s[0]->ndim, s[k]->ndim);
            return -1;
        }
        for (int i = 0; i < s[0]->ndim; i++)
            if (i != ax && s[k]->d[i] != s[0]->d[i]) {
                char b1[600], b2[600];
                op_failk(ERRK_SHAPE, "concat: shapes %s and %s differ outside axis %d", shape_str(s[0], b1, sizeof b1),
                        shape_str(s[k], b2, sizeof b2), axis);
                return -1;
            }
        if (dts[k] > *dt) *dt = dts[k];
        if (__builtin_add_overflow(out->d[ax], s[k]->d[ax], &out->d[ax])) {   /* zero-size parts can be huge */
            op_fail("concat: the result is too large (axis %d overflows)", axis);
            return -1;
        }
    }
    return shape_count(out) < 0 ? -1 : 0;
}

int shape_stack(const Shape *const *s, const DType *dts, int n, int axis, Shape *out, DType *dt) {
    if (n == 0) { op_fail("stack needs at least one tensor"); return -1; }
    for (int k = 1; k < n; k++)
        if (!shape_equal(s[0], s[k])) {
            char b1[600], b2[600];
            op_failk(ERRK_SHAPE, "stack: all tensors must have the same shape (got %s and %s)", shape_str(s[0], b1, sizeof b1),
                    shape_str(s[k], b2, sizeof b2));
            return -1;
        }
    Shape ex;
    if (shape_expand_dims(s[0], axis, &ex)) {
        op_failk(ERRK_INDEX, "stack: axis %d is out of range for rank %d", axis, s[0]->ndim + 1);
        return -1;
    }
    int ax = axis < 0 ? axis + s[0]->ndim + 1 : axis;
    *out = ex;
    out->d[ax] = n;
    *dt = dts[0];
    for (int k = 1; k < n; k++)
        if (dts[k] > *dt) *dt = dts[k];
    return 0;
}

int shape_broadcast_to(const Shape *a, const Shape *s) {
    Shape so;
    char b1[600], b2[600];
    if (shape_broadcast(a, s, &so, "broadcast_to") || !shape_equal(&so, s) || a->ndim > s->ndim) {
        op_failk(ERRK_SHAPE, "cannot broadcast a tensor of shape %s to %s", shape_str(a, b1, sizeof b1), shape_str(s, b2, sizeof b2));
        return -1;
    }
    return 0;
}

Shape shape_assigned_value(const Shape *v, int ndim) {
    Shape r = *v;
    int drop = 0;
    while (r.ndim - drop > ndim && r.d[drop] == 1) drop++;
    r.ndim -= drop;
    memmove(r.d, r.d + drop, sizeof(int64_t) * (size_t)r.ndim);
    return r;
}

/* ---------- op families (the impl column of ops.def) ----------
 * Each infer_<impl> reads only operand dtypes and shapes (c->in[k].t may be NULL). */

/* Operand k's shape into *s (inference runs for every eager op: no Shape is copied by value). */
static void arg_shape(const OpCall *c, int k, Shape *s) { op_arg_shape(&c->in[k], s); }

/* The dtype an elementwise op computes in (*ct) and returns (*rt), from its operands:
 * promotion first (spec section 5), then the op's dtype rule. */
int ew_types(const OpCall *c, DType *ct, DType *rt) {
    OpCode op = c->op;
    const OpDef *d = &op_info[op];
    DType p = op_promote(c->in, c->nin);
    char name[32];
    switch (d->dtype_rule) {
    case DR_FLOAT: *ct = *rt = dtype_is_float(p) ? p : DT_F32; return 0;
    case DR_BOOL: *ct = c->nin == 2 ? DT_BOOL : p; *rt = DT_BOOL; return 0;
    case DR_CMP: *ct = p; *rt = DT_BOOL; return 0;
    case DR_INT:
        if (dtype_is_float(p)) {
            op_failk(ERRK_TYPE, "%s is not supported for %s tensors (it needs i64 or bool)", op_display(op, name, sizeof name), dtype_name(p));
            return -1;
        }
        *ct = *rt = p;
        return 0;
    default: break;
    }
    if (p == DT_BOOL && (op == OP_NEG || op == OP_SUB)) {
        op_failk(ERRK_TYPE, op == OP_NEG ? "unary '-' is not supported for bool tensors; use 'not' or '==' false"
                             : "'-' is not supported for bool tensors; use 'xor' logic with '!=' instead");
        return -1;
    }
    if (p == DT_BOOL && (op == OP_MOD || op == OP_POW || op == OP_FLOOR_DIVIDE)) p = DT_I64;
    *ct = *rt = p;
    return 0;
}

int infer_ew1(const OpCall *c, Shape *out, DType *dt) {
    DType ct;
    arg_shape(c, 0, &out[0]);
    return ew_types(c, &ct, dt);
}

int infer_ew2(const OpCall *c, Shape *out, DType *dt) {
    Shape a, b;
    arg_shape(c, 0, &a);
    arg_shape(c, 1, &b);
    if (shape_broadcast(&a, &b, out, op_symbol(c->op))) return -1;
    DType ct;
    return ew_types(c, &ct, dt);
}

/* Broadcast every present operand's shape together (errors name the op and the shapes met so
 * far before the operand that does not fit: left operand first, as spec 5 words it). */
static int broadcast_all(const OpCall *c, int from, Shape *out) {
    out->ndim = 0;
    for (int k = from; k < c->nin; k++) {
        if (c->in[k].kind == ARG_NONE) continue;
        Shape s, r;
        arg_shape(c, k, &s);
        if (shape_broadcast(out, &s, &r, op_info[c->op].name)) return -1;
        *out = r;
    }
    return 0;
}

int infer_clip(const OpCall *c, Shape *out, DType *dt) {
    *dt = op_promote(c->in, c->nin);
    return broadcast_all(c, 0, out);
}

int infer_where(const OpCall *c, Shape *out, DType *dt) {
    *dt = op_promote(c->in + 1, 2);
    Shape s0, s1, s2, s3;
    arg_shape(c, 0, &s0);
    arg_shape(c, 1, &s2);
    arg_shape(c, 2, &s3);
    return shape_broadcast(&s2, &s3, &s1, "where") || shape_broadcast(&s0, &s1, out, "where") ? -1 : 0;
}

int infer_astype(const OpCall *c, Shape *out, DType *dt) {
    arg_shape(c, 0, &out[0]);
    *dt = (DType)c->at->dtype;
    return 0;
}

int infer_reduce(const OpCall *c, Shape *out, DType *dt) {
    OpCode op = c->op;
    if ((op == OP_ARGMAX || op == OP_ARGMIN) && c->at->naxes > 1) {
        op_fail("%s(): axis must be a single number or nil", op_info[op].name);
        return -1;
    }
    Shape a;
    arg_shape(c, 0, &a);
    return shape_reduce(op, &a, c->in[0].dtype, c->at->axes, c->at->naxes, c->at->flag, out, dt);
}

int infer_softmax(const OpCall *c, Shape *out, DType *dt) {
    int ax;
    arg_shape(c, 0, &out[0]);
    return shape_softmax(&out[0], c->in[0].dtype, c->at->axis, c->op == OP_LOG_SOFTMAX, &ax, dt);
}

/* A matrix's last two axes swapped (a vector's one axis left alone). */
static void swap_last(Shape *s) {
    if (s->ndim < 2) return;
    int64_t t = s->d[s->ndim - 1];
    s->d[s->ndim - 1] = s->d[s->ndim - 2];
    s->d[s->ndim - 2] = t;
}

int infer_matmul(const OpCall *c, Shape *out, DType *dt) {
    Shape a, b;
    arg_shape(c, 0, &a);
    arg_shape(c, 1, &b);
    if (c->op == OP_DOT && (a.ndim == 0 || b.ndim == 0)) {
        *dt = op_promote(c->in, 2);
        return shape_broadcast(&a, &b, out, "*");
    }
    if (c->op == OP_DOT && (a.ndim > 2 || b.ndim > 2)) {
        op_failk(ERRK_SHAPE, "dot: operands of rank above 2 are not supported; use matmul");
        return -1;
    }
    if (c->op == OP_MATMUL && c->at->flag) swap_last(&a);    /* transpose_a */
    if (c->op == OP_MATMUL && c->at->flag2) swap_last(&b);   /* transpose_b */
    if (shape_matmul(&a, c->in[0].dtype, &b, c->in[1].dtype, out, dt)) return -1;
    *dt = op_promote(c->in, 2);
    return 0;
}

int infer_outer(const OpCall *c, Shape *out, DType *dt) {
    Shape a, b;
    arg_shape(c, 0, &a);
    arg_shape(c, 1, &b);
    *out = (Shape){ 2, { shape_count(&a), shape_count(&b) } };
    *dt = op_promote(c->in, 2);
    return 0;
}

int infer_reshape(const OpCall *c, Shape *out, DType *dt) {
    Shape a;
    arg_shape(c, 0, &a);
    *dt = c->in[0].dtype;
    switch (c->op) {
    case OP_RESHAPE: return shape_reshape(&a, &c->at->shape, out);
    case OP_FLATTEN: *out = (Shape){ 1, { shape_count(&a) } }; return 0;
    case OP_EXPAND_DIMS: return shape_expand_dims(&a, c->at->axis, out);
    default: return shape_squeeze(&a, c->at->axes, c->at->naxes, out);
    }
}

int infer_transpose(const OpCall *c, Shape *out, DType *dt) {
    Shape a;
    arg_shape(c, 0, &a);
    int perm[TSL_MAX_RANK];
    *dt = c->in[0].dtype;
    return shape_transpose(&a, c->at->naxes < 0 ? NULL : c->at->axes, c->at->naxes, perm, out);
}

int infer_broadcast_to(const OpCall *c, Shape *out, DType *dt) {
    Shape a;
    arg_shape(c, 0, &a);
    *dt = c->in[0].dtype;
    *out = c->at->shape;
    return shape_broadcast_to(&a, &c->at->shape);
}

int infer_join(const OpCall *c, Shape *out, DType *dt) {
    Shape *shapes = mem_alloc(sizeof(Shape) * (size_t)(c->nin + 1));
    const Shape **ptrs = mem_alloc(sizeof(Shape *) * (size_t)(c->nin + 1));
    DType *dts = mem_alloc(sizeof(DType) * (size_t)(c->nin + 1));
    for (int k = 0; k < c->nin; k++) {
        arg_shape(c, k, &shapes[k]);
        ptrs[k] = &shapes[k];
        dts[k] = c->in[k].dtype;
    }
    int rc = c->op == OP_STACK ? shape_stack(ptrs, dts, c->nin, c->at->axis, out, dt)
                               : shape_concat(ptrs, dts, c->nin, c->at->axis, out, dt);
    mem_free(shapes);
    mem_free(ptrs);
    mem_free(dts);
    return rc;
}

int infer_full(const OpCall *c, Shape *out, DType *dt) {
    *out = c->at->shape;
    if (c->at->dtype >= 0) *dt = (DType)c->at->dtype;
    else *dt = c->op == OP_FULL && c->in[0].kind == ARG_NUM && c->in[0].is_bool ? DT_BOOL : DT_F32;
    return shape_count(out) < 0 ? -1 : 0;
}

/* arange(n) / arange(a, b, step); linspace(a, b, n); eye(n). */
int infer_arange(const OpCall *c, Shape *out, DType *dt) {
    const OpAttrs *at = c->at;
    *dt = DT_F32;
    if (c->op == OP_EYE || c->op == OP_LINSPACE) {
        int64_t n = at->i[0];
        if (n < 0) {
            op_fail(c->op == OP_EYE ? "eye: size %lld must be non-negative" : "linspace: number of samples %lld must be non-negative",
                    (long long)n);
            return -1;
        }
        *out = c->op == OP_EYE ? (Shape){ 2, { n, n } } : (Shape){ 1, { n } };
        return shape_count(out) < 0 ? -1 : 0;
    }
    double start = 0, stop = at->f[0], step = at->f[2];
    if (op_given(c, 1)) { start = at->f[0]; stop = at->f[1]; }
    if (step == 0 || isnan(step) || isnan(start) || isnan(stop)) { op_fail("arange: step must be a non-zero number"); return -1; }
    double count = ceil((stop - start) / step);   /* nan for arange(inf, inf) */
    if (count < 0) count = 0;
    int64_t n;
    if (isnan(count)) { op_fail("arange: cannot compute the length from %g to %g", start, stop); return -1; }
    if (count > 9e15 || !num_to_i64(count, &n)) { op_fail("arange: %g elements is too many", count); return -1; }
    *out = (Shape){ 1, { n } };
    if (at->dtype >= 0) *dt = (DType)at->dtype;
    else *dt = start == floor(start) && stop == floor(stop) && step == floor(step) ? DT_I64 : DT_F32;
    return shape_count(out) < 0 ? -1 : 0;
}

int infer_random(const OpCall *c, Shape *out, DType *dt) {
    *out = c->at->shape;
    *dt = c->op == OP_RANDINT ? DT_I64 : DT_F32;
    if (c->op == OP_RANDINT && c->at->i[1] <= c->at->i[0]) {
        op_fail("randint: high (%lld) must be greater than low (%lld)", (long long)c->at->i[1], (long long)c->at->i[0]);
        return -1;
    }
    return shape_count(out) < 0 ? -1 : 0;
}

/* equal() and allclose(): one bool. allclose broadcasts its operands (equal does not: other
 * shapes are simply not equal). */
int infer_equal(const OpCall *c, Shape *out, DType *dt) {
    *out = (Shape){ 0, { 0 } };
    *dt = DT_BOOL;
    if (c->op != OP_ALLCLOSE) return 0;
    Shape a, b, s;
    arg_shape(c, 0, &a);
    arg_shape(c, 1, &b);
    return shape_broadcast(&a, &b, &s, "allclose");
}

/* allreduce, broadcast, allgather (ops/dist.h): the operand's dtype and shape, one more axis
 * for allgather. What depends on the other ranks (their shapes) is checked when it runs. */
int infer_dist(const OpCall *c, Shape *out, DType *dt) {
    arg_shape(c, 0, out);
    *dt = (DType)c->in[0].dtype;
    if (c->op == OP_ALLREDUCE) {
        RedOp r = (RedOp)c->at->i[0];
        if (*dt == DT_BOOL || (r == REDOP_MEAN && !dtype_is_float(*dt))) {
            op_failk(ERRK_TYPE, "allreduce(): op \"%s\" is not supported for %s tensors", redop_names[r], dtype_name(*dt));
            return -1;
        }
        return 0;
    }
    int size = dist_size();
    if (dist_start()) return -1;
    if (c->op == OP_BROADCAST && (c->at->i[0] < 0 || c->at->i[0] >= size)) {
        op_failk(ERRK_VALUE, "broadcast(): root %lld is not a rank of this world of %d", (long long)c->at->i[0], size);
        return -1;
    }
    if (c->op == OP_ALLGATHER) {
        if (out->ndim == TSL_MAX_RANK) {
            op_fail("allgather(): the result would have more than %d axes", TSL_MAX_RANK);
            return -1;
        }
        memmove(out->d + 1, out->d, sizeof(int64_t) * (size_t)out->ndim);
        out->d[0] = size;
        out->ndim++;
    }
    return 0;
}
