/* tbuiltins.c - the tensor built-ins of spec section 5: argument handling only; all
 * arithmetic is in ops/. Ops declared in ops.def get their built-in through one generic
 * wrapper per op kind, so adding an elementwise op or a reduction to the table makes it
 * callable from TSL with no code here. */
#include <math.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "tops.h"
#include "builtins.h"
#include "infer.h"

/* ---------- conversions ---------- */

static Value tresult(Interp *I, Tensor *t) {
    if (!t) return interp_error(I, "%s", op_error());
    return TENSOR_VAL(t);
}

/* Shape of a nested list of numbers/bools/tensors; false on a ragged list. */
static bool nested_shape(Interp *I, Value v, Shape *s, int depth, bool *all_bool) {
    if (depth > TSL_MAX_RANK || (depth == TSL_MAX_RANK && v.type == VAL_LIST))
        return interp_error(I, "tensor(): nesting deeper than rank %d", TSL_MAX_RANK), false;
    if (v.type == VAL_NUM) { *all_bool = false; s->ndim = depth; return true; }
    if (v.type == VAL_BOOL) { s->ndim = depth; return true; }
    if (v.type == VAL_TENSOR) {
        Tensor *t = v.as.t;
        if (depth + t->ndim > TSL_MAX_RANK) return interp_error(I, "tensor(): rank above %d", TSL_MAX_RANK), false;
        if (t->dtype != DT_BOOL) *all_bool = false;
        for (int i = 0; i < t->ndim; i++) s->d[depth + i] = t->shape[i];
        s->ndim = depth + t->ndim;
        return true;
    }
    if (v.type != VAL_LIST) {
        interp_error(I, "tensor(): cannot make a tensor from a %s", val_type_name(v));
        return false;
    }
    ObjList *l = AS_LIST(v);
    s->d[depth] = l->len;
    if (l->len == 0) { s->ndim = depth + 1; *all_bool = false; return true; }
    Shape first;
    if (!nested_shape(I, l->items[0], &first, depth + 1, all_bool)) return false;
    for (int i = 1; i < l->len; i++) {
        Shape other;
        if (!nested_shape(I, l->items[i], &other, depth + 1, all_bool)) return false;
        if (other.ndim != first.ndim || memcmp(other.d + depth + 1, first.d + depth + 1,
                                               sizeof(int64_t) * (size_t)(first.ndim - depth - 1))) {
            interp_error(I, "tensor(): ragged nested list (sub-lists of different shapes)");
            return false;
        }
    }
    *s = first;
    s->d[depth] = l->len;
    return true;
}

static void nested_fill(Value v, Tensor *t, int64_t *pos) {
    if (v.type == VAL_NUM) tensor_set(t, (*pos)++, v.as.n);
    else if (v.type == VAL_BOOL) tensor_set(t, (*pos)++, v.as.b);
    else if (v.type == VAL_TENSOR)
        for (int64_t i = 0; i < v.as.t->size; i++) tensor_set(t, (*pos)++, tensor_get(v.as.t, i));
    else
        for (int i = 0; i < AS_LIST(v)->len; i++) nested_fill(AS_LIST(v)->items[i], t, pos);
}

/* Any value that can be a tensor: numbers, bools, nested lists, tensors (retained).
 * dtype -1: bool if every element is a bool, else f32 (a tensor keeps its dtype). */
Value interp_to_tensor(Interp *I, Value v, int dtype) {
    if (v.type == VAL_TENSOR) {
        if (dtype < 0 || v.as.t->dtype == (DType)dtype) return val_retain(v);
        return tresult(I, op_astype(v.as.t, (DType)dtype));
    }
    Shape s;
    bool all_bool = true;
    if (!nested_shape(I, v, &s, 0, &all_bool)) return ERR_VAL;
    DType dt = dtype >= 0 ? (DType)dtype : all_bool ? DT_BOOL : DT_F32;
    Tensor *t = tensor_new(dt, &s);
    if (!t) return interp_error(I, "%s", op_error());
    int64_t pos = 0;
    nested_fill(v, t, &pos);
    return TENSOR_VAL(t);
}

static bool arg_dtype(Interp *I, const char *fname, Value v, int *out) {
    if (v.type == VAL_UNDEF || v.type == VAL_NIL) { *out = -1; return true; }
    DType d;
    if (v.type != VAL_STR || dtype_parse(AS_STR(v)->chars, &d)) {
        interp_error(I, "%s(): dtype must be one of \"f32\", \"f64\", \"i64\", \"bool\"", fname);
        return false;
    }
    *out = (int)d;
    return true;
}

/* A shape is a list of numbers or a single number. */
static bool arg_shape(Interp *I, const char *fname, Value v, Shape *s, bool allow_minus1) {
    if (v.type == VAL_NUM) {
        s->ndim = 1;
        if (!arg_int(I, fname, "shape", v, &s->d[0])) return false;
    } else if (v.type == VAL_LIST) {
        ObjList *l = AS_LIST(v);
        if (l->len > TSL_MAX_RANK)
            return interp_error(I, "%s(): rank %d is above the limit of %d", fname, l->len, TSL_MAX_RANK), false;
        s->ndim = l->len;
        for (int i = 0; i < l->len; i++)
            if (!arg_int(I, fname, "shape", l->items[i], &s->d[i])) return false;
    } else {
        interp_error(I, "%s(): shape must be a list of numbers or a number", fname);
        return false;
    }
    for (int i = 0; i < s->ndim; i++)
        if (s->d[i] < 0 && !(allow_minus1 && s->d[i] == -1)) {
            interp_error(I, "%s(): negative dimension %lld in shape", fname, (long long)s->d[i]);
            return false;
        }
    return true;
}

/* axis: nil (all), a number, or a list of numbers. n = -1 for all. */
static bool arg_axes(Interp *I, const char *fname, Value v, int *axes, int *n) {
    if (v.type == VAL_UNDEF || v.type == VAL_NIL) { *n = -1; return true; }
    int64_t x;
    if (v.type == VAL_LIST) {
        ObjList *l = AS_LIST(v);
        if (l->len > TSL_MAX_RANK) return interp_error(I, "%s(): too many axes", fname), false;
        for (int i = 0; i < l->len; i++) {
            if (!arg_int(I, fname, "axis", l->items[i], &x)) return false;
            if (x > 1000 || x < -1000) return interp_error(I, "%s(): axis %lld is out of range", fname, (long long)x), false;
            axes[i] = (int)x;
        }
        *n = l->len;
        return true;
    }
    if (!arg_int(I, fname, "axis", v, &x)) return false;
    if (x > 1000 || x < -1000) return interp_error(I, "%s(): axis %lld is out of range", fname, (long long)x), false;
    axes[0] = (int)x;
    *n = 1;
    return true;
}

static bool arg_bool(Interp *I, Value v, bool dflt) {
    (void)I;
    if (v.type == VAL_UNDEF) return dflt;
    return val_truthy_simple(v);
}

/* ---------- construction ---------- */

static Value bi_tensor(Interp *I, CallArgs *a) {
    static const char *const p[] = { "data", "dtype", NULL };
    Value v[2];
    int dt;
    if (!args_bind(I, a, "tensor", p, 1, v) || !arg_dtype(I, "tensor", v[1], &dt)) return ERR_VAL;
    if (v[0].type == VAL_TENSOR) return tresult(I, dt < 0 ? tensor_copy(v[0].as.t) : op_astype(v[0].as.t, (DType)dt));
    if (dt == DT_I64 || dt == DT_BOOL) {
        /* i64 from numbers: non-integral values are an error rather than silently truncated */
        Value t = interp_to_tensor(I, v[0], DT_F64);
        if (IS_ERR(t)) return t;
        Tensor *r = op_astype(t.as.t, (DType)dt);
        val_release(t);
        return tresult(I, r);
    }
    return interp_to_tensor(I, v[0], dt);
}

static Value fill_builtin(Interp *I, CallArgs *a, const char *fname, double value) {
    static const char *const p[] = { "shape", "dtype", NULL };
    Value v[2];
    Shape s;
    int dt;
    if (!args_bind(I, a, fname, p, 1, v) || !arg_shape(I, fname, v[0], &s, false) || !arg_dtype(I, fname, v[1], &dt))
        return ERR_VAL;
    return tresult(I, op_full(&s, value, dt < 0 ? DT_F32 : (DType)dt));
}
static Value bi_zeros(Interp *I, CallArgs *a) { return fill_builtin(I, a, "zeros", 0); }
static Value bi_ones(Interp *I, CallArgs *a) { return fill_builtin(I, a, "ones", 1); }

static Value bi_full(Interp *I, CallArgs *a) {
    static const char *const p[] = { "shape", "value", "dtype", NULL };
    Value v[3];
    Shape s;
    int dt;
    double x;
    if (!args_bind(I, a, "full", p, 2, v) || !arg_shape(I, "full", v[0], &s, false) ||
        !arg_number(I, "full", "value", v[1], &x) || !arg_dtype(I, "full", v[2], &dt))
        return ERR_VAL;
    if (dt < 0) dt = v[1].type == VAL_BOOL ? DT_BOOL : DT_F32;
    return tresult(I, op_full(&s, x, (DType)dt));
}

static Value bi_arange(Interp *I, CallArgs *a) {
    static const char *const p[] = { "a", "b", "step", "dtype", NULL };
    Value v[4];
    double x[3] = { 0, 0, 1 };
    int dt;
    if (!args_bind(I, a, "arange", p, 1, v) || !arg_dtype(I, "arange", v[3], &dt)) return ERR_VAL;
    for (int i = 0; i < 3; i++)
        if (v[i].type != VAL_UNDEF && !arg_number(I, "arange", p[i], v[i], &x[i])) return ERR_VAL;
    double start = 0, stop = x[0], step = x[2];
    if (v[1].type != VAL_UNDEF) { start = x[0]; stop = x[1]; }
    if (dt < 0) dt = (start == floor(start) && stop == floor(stop) && step == floor(step)) ? DT_I64 : DT_F32;
    return tresult(I, op_arange(start, stop, step, (DType)dt));
}

static Value bi_linspace(Interp *I, CallArgs *a) {
    static const char *const p[] = { "a", "b", "n", NULL };
    Value v[3];
    double x, y;
    int64_t n;
    if (!args_bind(I, a, "linspace", p, 3, v) || !arg_number(I, "linspace", "a", v[0], &x) ||
        !arg_number(I, "linspace", "b", v[1], &y) || !arg_int(I, "linspace", "n", v[2], &n))
        return ERR_VAL;
    return tresult(I, op_linspace(x, y, n));
}

static Value bi_eye(Interp *I, CallArgs *a) {
    static const char *const p[] = { "n", NULL };
    Value v[1];
    int64_t n;
    if (!args_bind(I, a, "eye", p, 1, v) || !arg_int(I, "eye", "n", v[0], &n)) return ERR_VAL;
    return tresult(I, op_eye(n));
}

static Value random_builtin(Interp *I, CallArgs *a, const char *fname, Tensor *(*fn)(const Shape *)) {
    static const char *const p[] = { "shape", NULL };
    Value v[1];
    Shape s;
    if (!args_bind(I, a, fname, p, 1, v) || !arg_shape(I, fname, v[0], &s, false)) return ERR_VAL;
    return tresult(I, fn(&s));
}
static Value bi_rand(Interp *I, CallArgs *a) { return random_builtin(I, a, "rand", op_rand); }
static Value bi_randn(Interp *I, CallArgs *a) { return random_builtin(I, a, "randn", op_randn); }

static Value bi_randint(Interp *I, CallArgs *a) {
    static const char *const p[] = { "lo", "hi", "shape", NULL };
    Value v[3];
    int64_t lo, hi;
    Shape s;
    if (!args_bind(I, a, "randint", p, 3, v) || !arg_int(I, "randint", "lo", v[0], &lo) ||
        !arg_int(I, "randint", "hi", v[1], &hi) || !arg_shape(I, "randint", v[2], &s, false))
        return ERR_VAL;
    return tresult(I, op_randint(lo, hi, &s));
}

static Value bi_seed(Interp *I, CallArgs *a) {
    static const char *const p[] = { "n", NULL };
    Value v[1];
    int64_t n;
    if (!args_bind(I, a, "seed", p, 1, v) || !arg_int(I, "seed", "n", v[0], &n)) return ERR_VAL;
    rng_seed((uint64_t)n);
    return NIL_VAL;
}

/* ---------- shape ops ---------- */

/* Binds params and converts the first argument to a tensor (owned, in *t). */
static bool tensor_arg(Interp *I, CallArgs *a, const char *fname, const char *const *p, int nreq, Value *v, Value *t) {
    if (!args_bind(I, a, fname, p, nreq, v)) return false;
    *t = interp_to_tensor(I, v[0], -1);
    return !IS_ERR(*t);
}

static Value bi_reshape(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "shape", NULL };
    Value v[2], t;
    Shape s;
    if (!tensor_arg(I, a, "reshape", p, 2, v, &t)) return ERR_VAL;
    Value r = arg_shape(I, "reshape", v[1], &s, true) ? tresult(I, op_reshape(t.as.t, &s)) : ERR_VAL;
    val_release(t);
    return r;
}

static Value bi_flatten(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", NULL };
    Value v[1], t;
    if (!tensor_arg(I, a, "flatten", p, 1, v, &t)) return ERR_VAL;
    Shape s = { 1, { t.as.t->size } };
    Value r = tresult(I, op_reshape(t.as.t, &s));
    val_release(t);
    return r;
}

static Value bi_transpose(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "axes", NULL };
    Value v[2], t;
    int axes[TSL_MAX_RANK], n;
    if (!tensor_arg(I, a, "transpose", p, 1, v, &t)) return ERR_VAL;
    Value r = arg_axes(I, "transpose", v[1], axes, &n) ? tresult(I, op_transpose(t.as.t, n < 0 ? NULL : axes, n)) : ERR_VAL;
    val_release(t);
    return r;
}

static Value bi_expand_dims(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "axis", NULL };
    Value v[2], t;
    int64_t ax;
    if (!tensor_arg(I, a, "expand_dims", p, 2, v, &t)) return ERR_VAL;
    Value r = arg_int(I, "expand_dims", "axis", v[1], &ax) ? tresult(I, op_expand_dims(t.as.t, (int)ax)) : ERR_VAL;
    val_release(t);
    return r;
}

static Value bi_squeeze(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "axis", NULL };
    Value v[2], t;
    int axes[TSL_MAX_RANK], n;
    if (!tensor_arg(I, a, "squeeze", p, 1, v, &t)) return ERR_VAL;
    Value r = arg_axes(I, "squeeze", v[1], axes, &n) ? tresult(I, op_squeeze(t.as.t, axes, n)) : ERR_VAL;
    val_release(t);
    return r;
}

static Value bi_broadcast_to(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "shape", NULL };
    Value v[2], t;
    Shape s;
    if (!tensor_arg(I, a, "broadcast_to", p, 2, v, &t)) return ERR_VAL;
    Value r = arg_shape(I, "broadcast_to", v[1], &s, false) ? tresult(I, op_broadcast_to(t.as.t, &s)) : ERR_VAL;
    val_release(t);
    return r;
}

static Value join_builtin(Interp *I, CallArgs *a, const char *fname, bool stack) {
    static const char *const p[] = { "tensors", "axis", NULL };
    Value v[2];
    int64_t ax = 0;
    if (!args_bind(I, a, fname, p, 1, v)) return ERR_VAL;
    if (v[1].type != VAL_UNDEF && !arg_int(I, fname, "axis", v[1], &ax)) return ERR_VAL;
    if (v[0].type != VAL_LIST) return interp_error(I, "%s() needs a list of tensors", fname);
    ObjList *l = AS_LIST(v[0]);
    if (ax > 1000 || ax < -1000) return interp_error(I, "%s(): axis %lld is out of range", fname, (long long)ax);
    Tensor **ts = mem_alloc(sizeof(Tensor *) * (size_t)(l->len + 1));
    Value r = ERR_VAL;
    int n = 0;
    for (; n < l->len; n++) {
        Value t = interp_to_tensor(I, l->items[n], -1);
        if (IS_ERR(t)) goto out;
        ts[n] = t.as.t;
    }
    r = tresult(I, stack ? op_stack(ts, n, (int)ax) : op_concat(ts, n, (int)ax));
out:
    for (int i = 0; i < n; i++) tensor_release(ts[i]);
    mem_free(ts);
    return r;
}
static Value bi_concat(Interp *I, CallArgs *a) { return join_builtin(I, a, "concat", false); }
static Value bi_stack(Interp *I, CallArgs *a) { return join_builtin(I, a, "stack", true); }

/* ---------- ops from the table ---------- */

static Value unary_builtin(Interp *I, CallArgs *a, OpCode op) {
    const char *fname = op_info[op].name;
    static const char *const p[] = { "x", NULL };
    Value v[1];
    if (!args_bind(I, a, fname, p, 1, v)) return ERR_VAL;
    if (v[0].type == VAL_NUM) return NUM_VAL(op_unary_number(op, v[0].as.n));
    Value t = interp_to_tensor(I, v[0], -1);
    if (IS_ERR(t)) return t;
    /* a temporary argument (only the call's argument slot and t refer to it) of the result's
     * dtype is overwritten in place: the same kernel, no new buffer */
    DType dt;
    if (v[0].type == VAL_TENSOR && t.as.t->rc == 2 && t.as.t->buf->rc == 1 && !infer_unary(op, t.as.t->dtype, &dt) &&
        dt == t.as.t->dtype) {
        if (op_unary_into(op, t.as.t, t.as.t)) {
            val_release(t);
            return interp_error(I, "%s", op_error());
        }
        return t;
    }
    Value r = tresult(I, op_unary(op, t.as.t));
    val_release(t);
    return r;
}

static Value binary_builtin(Interp *I, CallArgs *a, OpCode op) {
    const char *fname = op_info[op].name;
    static const char *const p[] = { "a", "b", NULL };
    Value v[2];
    if (!args_bind(I, a, fname, p, 2, v)) return ERR_VAL;
    if (v[0].type == VAL_NUM && v[1].type == VAL_NUM) {
        double x = v[0].as.n, y = v[1].as.n;
        if (x != x || y != y) return NUM_VAL(x != x ? x : y);   /* NaN wins */
        return NUM_VAL(op == OP_MAXIMUM ? (x > y ? x : y) : (x < y ? x : y));
    }
    if (v[0].type == VAL_NUM && v[1].type == VAL_TENSOR) return tresult(I, op_binary_scalar(op, v[1].as.t, v[0].as.n, true));
    if (v[1].type == VAL_NUM && v[0].type == VAL_TENSOR) return tresult(I, op_binary_scalar(op, v[0].as.t, v[1].as.n, false));
    Value x = interp_to_tensor(I, v[0], -1);
    if (IS_ERR(x)) return x;
    Value y = interp_to_tensor(I, v[1], -1);
    if (IS_ERR(y)) { val_release(x); return y; }
    Value r = tresult(I, op_binary(op, x.as.t, y.as.t));
    val_release(x);
    val_release(y);
    return r;
}

static Value reduce_builtin(Interp *I, CallArgs *a, OpCode op) {
    const char *fname = op_info[op].name;
    static const char *const p[] = { "t", "axis", "keepdims", NULL };
    Value v[3], t;
    int axes[TSL_MAX_RANK], n;
    if (!tensor_arg(I, a, fname, p, 1, v, &t)) return ERR_VAL;
    Value r = ERR_VAL;
    if (arg_axes(I, fname, v[1], axes, &n)) {
        if ((op == OP_ARGMAX || op == OP_ARGMIN) && n > 1)
            interp_error(I, "%s(): axis must be a single number or nil", fname);
        else
            r = tresult(I, op_reduce(op, t.as.t, axes, n, arg_bool(I, v[2], false)));
    }
    val_release(t);
    return r;
}

static Value softmax_builtin(Interp *I, CallArgs *a, OpCode op) {
    const char *fname = op_info[op].name;
    static const char *const p[] = { "t", "axis", NULL };
    Value v[2], t;
    int64_t ax = -1;
    if (!tensor_arg(I, a, fname, p, 1, v, &t)) return ERR_VAL;
    Value r = ERR_VAL;
    if (v[1].type == VAL_UNDEF || arg_int(I, fname, "axis", v[1], &ax)) {
        if (ax > 1000 || ax < -1000) interp_error(I, "%s(): axis %lld is out of range", fname, (long long)ax);
        else r = tresult(I, op_softmax(t.as.t, (int)ax, op == OP_LOG_SOFTMAX));
    }
    val_release(t);
    return r;
}

static Value two_tensor_builtin(Interp *I, CallArgs *a, const char *fname, Tensor *(*fn)(const Tensor *, const Tensor *)) {
    static const char *const p[] = { "a", "b", NULL };
    Value v[2];
    if (!args_bind(I, a, fname, p, 2, v)) return ERR_VAL;
    Value x = interp_to_tensor(I, v[0], -1);
    if (IS_ERR(x)) return x;
    Value y = interp_to_tensor(I, v[1], -1);
    if (IS_ERR(y)) { val_release(x); return y; }
    Value r = tresult(I, fn(x.as.t, y.as.t));
    val_release(x);
    val_release(y);
    return r;
}

static Tensor *dot_op(const Tensor *a, const Tensor *b) {
    if (a->ndim == 0 || b->ndim == 0) return op_binary(OP_MUL, a, b);
    if (a->ndim > 2 || b->ndim > 2) {
        op_fail("dot: operands of rank above 2 are not supported; use matmul");
        return NULL;
    }
    return op_matmul(a, b);
}

static Value bi_where(Interp *I, CallArgs *a) {
    static const char *const p[] = { "cond", "a", "b", NULL };
    Value v[3], t[3] = { NIL_VAL, NIL_VAL, NIL_VAL };
    if (!args_bind(I, a, "where", p, 3, v)) return ERR_VAL;
    Value r = ERR_VAL;
    for (int i = 0; i < 3; i++) {
        /* a number beside a tensor takes the tensor's dtype, as in arithmetic */
        int dt = -1;
        if (i > 0 && v[i].type == VAL_NUM) {
            Value other = v[3 - i];
            dt = other.type == VAL_TENSOR && dtype_is_float(other.as.t->dtype) ? (int)other.as.t->dtype
                 : other.type == VAL_TENSOR && v[i].as.n == floor(v[i].as.n) && other.as.t->dtype == DT_I64 ? DT_I64
                 : DT_F32;
        }
        t[i] = interp_to_tensor(I, v[i], dt);
        if (IS_ERR(t[i])) goto out;
    }
    r = tresult(I, op_where(t[0].as.t, t[1].as.t, t[2].as.t));
out:
    for (int i = 0; i < 3; i++) val_release(t[i]);
    return r;
}

static Value bi_clip(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "lo", "hi", NULL };
    Value v[3], t;
    double lo = -INFINITY, hi = INFINITY;
    if (!tensor_arg(I, a, "clip", p, 3, v, &t)) return ERR_VAL;
    Value r = ERR_VAL;
    if ((v[1].type == VAL_NIL || arg_number(I, "clip", "lo", v[1], &lo)) &&
        (v[2].type == VAL_NIL || arg_number(I, "clip", "hi", v[2], &hi)))
        r = tresult(I, op_clip(t.as.t, lo, hi));
    val_release(t);
    return r;
}

static Value bi_astype(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "dtype", NULL };
    Value v[2], t;
    int dt;
    if (!tensor_arg(I, a, "astype", p, 2, v, &t)) return ERR_VAL;
    Value r = ERR_VAL;
    if (arg_dtype(I, "astype", v[1], &dt)) r = tresult(I, op_astype(t.as.t, (DType)dt));
    val_release(t);
    return r;
}

#define OP(id, name, arity, kind, flags) __attribute__((unused))                         \
    static Value bi_op_##id(Interp *I, CallArgs *a) {                                     \
        switch (kind) {                                                                   \
        case K_UNARY: return unary_builtin(I, a, OP_##id);                                \
        case K_REDUCE: return reduce_builtin(I, a, OP_##id);                              \
        default: break;                                                                   \
        }                                                                                 \
        if (OP_##id == OP_SOFTMAX || OP_##id == OP_LOG_SOFTMAX) return softmax_builtin(I, a, OP_##id); \
        if (OP_##id == OP_MATMUL) return two_tensor_builtin(I, a, "matmul", op_matmul);   \
        if (OP_##id == OP_WHERE) return bi_where(I, a);                                   \
        return binary_builtin(I, a, OP_##id);                                             \
    }
#include "ops.def"
#undef OP

static Value bi_dot(Interp *I, CallArgs *a) { return two_tensor_builtin(I, a, "dot", dot_op); }
static Value bi_outer(Interp *I, CallArgs *a) { return two_tensor_builtin(I, a, "outer", op_outer); }

/* ---------- conversion and comparison ---------- */

static Value bi_item(Interp *I, CallArgs *a) {
    static const char *const p[] = { "x", NULL };
    Value v[1];
    if (!args_bind(I, a, "item", p, 1, v)) return ERR_VAL;
    if (v[0].type == VAL_NUM) return v[0];
    if (v[0].type != VAL_TENSOR) return interp_error(I, "item() needs a tensor or a number, got a %s", val_type_name(v[0]));
    if (v[0].as.t->size != 1)
        return interp_error(I, "item(): the tensor has %lld elements, not one", (long long)v[0].as.t->size);
    double x = tensor_get(v[0].as.t, 0);
    return v[0].as.t->dtype == DT_BOOL ? BOOL_VAL(x != 0) : NUM_VAL(x);
}

static Value tolist_rec(const Tensor *t, int dim, int64_t *pos) {
    if (dim == t->ndim) {
        double x = tensor_get(t, (*pos)++);
        return t->dtype == DT_BOOL ? BOOL_VAL(x != 0) : NUM_VAL(x);
    }
    ObjList *l = list_new(0);
    for (int64_t i = 0; i < t->shape[dim]; i++) {
        Value x = tolist_rec(t, dim + 1, pos);
        list_push(l, x);
        val_release(x);
    }
    return OBJ_VAL(VAL_LIST, l);
}

static Value bi_tolist(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", NULL };
    Value v[1];
    if (!args_bind(I, a, "tolist", p, 1, v)) return ERR_VAL;
    if (v[0].type != VAL_TENSOR) return interp_error(I, "tolist() needs a tensor, got a %s", val_type_name(v[0]));
    int64_t pos = 0;
    return tolist_rec(v[0].as.t, 0, &pos);
}

static Value bi_equal(Interp *I, CallArgs *a) {
    static const char *const p[] = { "a", "b", NULL };
    Value v[2];
    if (!args_bind(I, a, "equal", p, 2, v)) return ERR_VAL;
    if (v[0].type != VAL_TENSOR || v[1].type != VAL_TENSOR) return BOOL_VAL(val_equal(v[0], v[1]));
    return BOOL_VAL(tensor_equal(v[0].as.t, v[1].as.t));
}

static Value bi_allclose(Interp *I, CallArgs *a) {
    static const char *const p[] = { "a", "b", "rtol", "atol", NULL };
    Value v[4];
    double rtol = 1e-5, atol = 1e-8;
    if (!args_bind(I, a, "allclose", p, 2, v)) return ERR_VAL;
    if ((v[2].type != VAL_UNDEF && !arg_number(I, "allclose", "rtol", v[2], &rtol)) ||
        (v[3].type != VAL_UNDEF && !arg_number(I, "allclose", "atol", v[3], &atol)))
        return ERR_VAL;
    Value x = interp_to_tensor(I, v[0], -1);
    if (IS_ERR(x)) return x;
    Value y = interp_to_tensor(I, v[1], -1);
    if (IS_ERR(y)) { val_release(x); return y; }
    int r = op_allclose(x.as.t, y.as.t, rtol, atol);
    val_release(x);
    val_release(y);
    return r < 0 ? interp_error(I, "%s", op_error()) : BOOL_VAL(r);
}

/* ---------- devices ---------- */

static bool device_ok(Interp *I, Value v, const char *fname) {
    if (v.type != VAL_STR) return interp_error(I, "%s(): device must be \"cpu\" or \"gpu\"", fname), false;
    const char *d = AS_STR(v)->chars;
    if (!strcmp(d, "cpu")) return true;
    if (!strcmp(d, "gpu")) return interp_error(I, "device 'gpu' is not available (this build has no GPU backend yet)"), false;
    return interp_error(I, "%s(): unknown device \"%s\" (use \"cpu\" or \"gpu\")", fname, d), false;
}

static Value bi_to(Interp *I, CallArgs *a) {
    static const char *const p[] = { "t", "device", NULL };
    Value v[2];
    if (!args_bind(I, a, "to", p, 2, v) || !device_ok(I, v[1], "to")) return ERR_VAL;
    if (v[0].type != VAL_TENSOR) return interp_error(I, "to() needs a tensor, got a %s", val_type_name(v[0]));
    return val_retain(v[0]);
}

static Value bi_device(Interp *I, CallArgs *a) {
    static const char *const p[] = { "name", NULL };
    Value v[1];
    if (!args_bind(I, a, "device", p, 0, v)) return ERR_VAL;
    if (v[0].type == VAL_UNDEF) return val_cstr("cpu");
    return device_ok(I, v[0], "device") ? NIL_VAL : ERR_VAL;
}

/* ---------- I/O ---------- */

static bool path_arg(Interp *I, const char *fname, Value v) {
    if (I->sandbox) {
        interp_error(I, "%s() is disabled in this sandbox", fname);
        return false;
    }
    if (v.type == VAL_STR) return true;
    interp_error(I, "%s(): path must be a string", fname);
    return false;
}

static Value bi_load_csv(Interp *I, CallArgs *a) {
    static const char *const p[] = { "path", "skip_header", NULL };
    Value v[2];
    if (!args_bind(I, a, "load_csv", p, 1, v) || !path_arg(I, "load_csv", v[0])) return ERR_VAL;
    return tresult(I, csv_load(AS_STR(v[0])->chars, arg_bool(I, v[1], false)));
}

static Value bi_load_npy(Interp *I, CallArgs *a) {
    static const char *const p[] = { "path", NULL };
    Value v[1];
    if (!args_bind(I, a, "load_npy", p, 1, v) || !path_arg(I, "load_npy", v[0])) return ERR_VAL;
    return tresult(I, npy_load(AS_STR(v[0])->chars));
}

static Value bi_save_npy(Interp *I, CallArgs *a) {
    static const char *const p[] = { "path", "t", NULL };
    Value v[2];
    if (!args_bind(I, a, "save_npy", p, 2, v) || !path_arg(I, "save_npy", v[0])) return ERR_VAL;
    if (v[1].type != VAL_TENSOR) return interp_error(I, "save_npy() needs a tensor, got a %s", val_type_name(v[1]));
    if (npy_save(AS_STR(v[0])->chars, v[1].as.t)) return interp_error(I, "%s", op_error());
    return NIL_VAL;
}

const BuiltinDef tensor_builtins[] = {
    { "tensor", bi_tensor }, { "zeros", bi_zeros }, { "ones", bi_ones }, { "full", bi_full },
    { "arange", bi_arange }, { "linspace", bi_linspace }, { "eye", bi_eye }, { "rand", bi_rand },
    { "randn", bi_randn }, { "randint", bi_randint }, { "seed", bi_seed },
    { "reshape", bi_reshape }, { "transpose", bi_transpose }, { "expand_dims", bi_expand_dims },
    { "squeeze", bi_squeeze }, { "concat", bi_concat }, { "stack", bi_stack },
    { "broadcast_to", bi_broadcast_to }, { "flatten", bi_flatten },
    { "abs", bi_op_ABS }, { "exp", bi_op_EXP }, { "log", bi_op_LOG }, { "sqrt", bi_op_SQRT },
    { "sin", bi_op_SIN }, { "cos", bi_op_COS }, { "tanh", bi_op_TANH }, { "sigmoid", bi_op_SIGMOID },
    { "relu", bi_op_RELU }, { "floor", bi_op_FLOOR }, { "ceil", bi_op_CEIL }, { "round", bi_op_ROUND },
    { "sign", bi_op_SIGN }, { "maximum", bi_op_MAXIMUM }, { "minimum", bi_op_MINIMUM },
    { "clip", bi_clip }, { "where", bi_op_WHERE }, { "astype", bi_astype },
    { "sum", bi_op_SUM }, { "mean", bi_op_MEAN }, { "max", bi_op_MAX }, { "min", bi_op_MIN },
    { "prod", bi_op_PROD }, { "var", bi_op_VAR }, { "std", bi_op_STD }, { "argmax", bi_op_ARGMAX },
    { "argmin", bi_op_ARGMIN }, { "all", bi_op_ALL }, { "any", bi_op_ANY },
    { "logsumexp", bi_op_LOGSUMEXP }, { "softmax", bi_op_SOFTMAX }, { "log_softmax", bi_op_LOG_SOFTMAX },
    { "matmul", bi_op_MATMUL }, { "dot", bi_dot }, { "outer", bi_outer },
    { "item", bi_item }, { "tolist", bi_tolist }, { "equal", bi_equal }, { "allclose", bi_allclose },
    { "to", bi_to }, { "device", bi_device },
    { "load_csv", bi_load_csv }, { "load_npy", bi_load_npy }, { "save_npy", bi_save_npy },
    { NULL, NULL },
};
