/* test_grad_table.c - every backward rule of the op table against central differences.
 *
 * grad_table_rules walks op_info[] and, for every op with a backward rule, synthesises f64
 * calls from the op's parsed signature: one tensor per T operand (shapes [2, 3], or square
 * matrices for the LAPACK ops), a list of three for Ts, a number for N; every axis for an
 * axis parameter, nil and every axis (with keepdims both ways) for axes, both values of a
 * bool; the few integer, shape and pairs attributes come from a small table (ATTRS). Binary
 * elementwise ops also get broadcast operand shapes ([2, 3] with [3], [2, 1] with [1, 3])
 * and a weak number operand; T? operands are given and nil. Each call runs forward, the
 * rule runs through the eager GradBuilder with the incoming gradient w (fixed values, so
 * the loss is sum(w * y)), and every float operand's gradient must have the operand's
 * dtype and shape and match (L(x + eps) - L(x - eps)) / 2 eps element by element
 * (relative error 1e-6). Inputs keep away from kinks and domain edges (DOMAIN below):
 * values are never integers or halves (floor, round, mod), the two operands of maximum or
 * minimum never tie, logarithms and square roots see values above 0.5, and matrices are
 * diagonally dominant.
 *
 * grad_table_promotion: an f32 operand combined with an f64 one (binary elementwise ops,
 * matmul, where) gets an f32 gradient, close to the f64 one.
 *
 * The ops with a rule that get no case here are listed in SKIPPED with the reason; the test
 * fails if an op with a rule has no case and is not listed there, or is listed and has
 * cases. Every run prints the count and the ops without a rule, grouped by why (a float
 * result stops backward with "no gradient for OP yet"; bool/i64 results are never
 * recorded). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "grad.h"
#include "conv.h"

enum { MAXIN = 5, MAXCASES = 64 };

/* ---------- values ---------- */

/* Distinct, none near an integer or a half, none 0; POOL_B values end in 5 in the second
 * decimal and POOL_A's never do, so an A and a B value differ by at least 0.01. */
static const double POOL_A[] = { -1.77, -0.63, 0.31, 1.23, 2.71, -2.29, 0.83, -1.41, 1.67, -0.37, 2.13, 0.57,
                                 -0.93, 1.49, -2.61, 0.19, 1.91, -1.13 };
static const double POOL_B[] = { 0.45, -1.15, 1.85, -0.25, 0.95, -2.05, 1.35, -0.65, 2.35, -1.55, 0.15, 0.75,
                                 -0.85, 1.05, -1.95, 0.55, 2.25, -0.45 };
enum { NPOOL = sizeof POOL_A / sizeof POOL_A[0] };

static bool is_linalg(OpCode op) {
    return op == OP_SOLVE || op == OP_INV || op == OP_DET || op == OP_CHOLESKY || op == OP_EIGH || op == OP_QR || op == OP_SVD;
}

/* Element k of operand i of op, inside the op's smooth domain. */
static double domain(OpCode op, int i, int64_t k) {
    double a = POOL_A[k % NPOOL], b = POOL_B[k % NPOOL];
    switch (op) {
    case OP_LOG: case OP_LOG2: case OP_LOG10: case OP_SQRT: return 0.5 + fabs(a);
    case OP_LOG1P: return -0.4 + fabs(a);
    case OP_ASIN: case OP_ACOS: case OP_ATANH: return 0.3 * a;
    case OP_ACOSH: return 1.2 + fabs(a);
    case OP_TAN: return 0.4 * a;
    case OP_POW: return i == 0 ? 0.5 + fabs(a) : 0.5 * b;
    case OP_DIV: return i == 1 ? (k % 2 ? -1 : 1) * (0.5 + fabs(b)) : a;
    case OP_MOD: case OP_FLOOR_DIVIDE: return i == 1 ? (k % 2 ? -4.0 : 2.0) : a;   /* a / b never near an integer */
    case OP_MAXIMUM: case OP_MINIMUM: case OP_CLIP: return i == 0 ? a : b;
    default: return a;
    }
}

static Tensor *tensor_of(DType dt, Shape s, OpCode op, int i, int seed) {
    Tensor *t = tensor_new(dt, &s);
    ck_assert_ptr_nonnull(t);
    for (int64_t k = 0; k < t->size; k++) tensor_set(t, k, domain(op, i, k + seed));
    if (is_linalg(op) && i == 0) {   /* diagonally dominant: well conditioned */
        int64_t n = s.d[s.ndim - 1];
        for (int64_t k = 0; k < t->size; k++) {
            int64_t r = (k / n) % n, c = k % n;
            tensor_set(t, k, 0.3 * tensor_get(t, k) + (r == c ? 3.0 + 0.1 * (double)r : 0));
        }
    }
    return t;
}

/* ---------- a synthesised call ---------- */

typedef struct {
    OpCode op;
    int nin;
    OpArg in[MAXIN];
    Tensor *own[MAXIN];
    OpAttrs at;
    char what[200];
} Case;

#define SH(...) ((Shape){ (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), { __VA_ARGS__ } })

/* The attributes' defaults, as the binder gives them. */
static void case_init(Case *c, OpCode op) {
    memset(c, 0, sizeof *c);
    c->op = op;
    c->at.naxes = -1;
    c->at.dtype = -1;
    const OpDef *d = op_def(op);
    for (int p = 0; p < d->nparams; p++) {
        const OpParam *pp = &d->params[p];
        if (pp->type == P_AXIS && !pp->default_nil) c->at.axis = (int)pp->default_num;
        if (pp->type == P_BOOL) *op_attr_bool(&c->at, pp->slot) = pp->default_num != 0;
        if (pp->type == P_INT) c->at.i[pp->slot] = (int64_t)pp->default_num;
        if (pp->type == P_F) c->at.f[pp->slot] = pp->default_num;
    }
    snprintf(c->what, sizeof c->what, "%s", d->name);
}

static void note(Case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(Case *c, const char *fmt, ...) {
    size_t n = strlen(c->what);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->what + n, sizeof c->what - n, fmt, ap);
    va_end(ap);
}

static void add_tensor(Case *c, Tensor *t) {
    c->own[c->nin] = t;
    c->in[c->nin++] = op_arg_tensor(t);
    char buf[64];
    Shape s;
    shape_of(t, &s);
    note(c, " %s%s", dtype_name(t->dtype), shape_str(&s, buf, sizeof buf));
}
static void add_f64(Case *c, Shape s, int seed) { add_tensor(c, tensor_of(DT_F64, s, c->op, c->nin, seed)); }
static void add_num(Case *c, double x) {
    c->in[c->nin++] = op_arg_num(x, false);
    note(c, " %g", x);
}
static void add_none(Case *c) {
    c->in[c->nin++] = (OpArg){ .kind = ARG_NONE };
    note(c, " nil");
}
static void add_i64(Case *c, Shape s, const int64_t *v) {
    Tensor *t = tensor_new(DT_I64, &s);
    ck_assert_ptr_nonnull(t);
    memcpy(t->data, v, sizeof(int64_t) * (size_t)t->size);
    add_tensor(c, t);
}
static void add_bool(Case *c, Shape s) {
    Tensor *t = tensor_new(DT_BOOL, &s);
    ck_assert_ptr_nonnull(t);
    for (int64_t k = 0; k < t->size; k++) tensor_set(t, k, (k * 7 + 3) % 3 != 0);
    add_tensor(c, t);
}
static void case_free(Case *c) {
    for (int i = 0; i < c->nin; i++) tensor_release(c->own[i]);
}

/* ---------- the check: the rule against central differences ---------- */

static double weight(int64_t k) { return sin(1.7 * (double)k + 0.3); }

/* sum(w * y) of the call's first result, or NAN if it fails. */
static double loss(const Case *c) {
    OpCall call = { c->op, c->nin, c->in, &c->at };
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    if (op_run(&call, out)) return NAN;
    double l = 0;
    for (int64_t k = 0; k < out[0]->size; k++) l += weight(k) * tensor_get(out[0], k);
    for (int k = 0; k < OP_MAX_OUT; k++) tensor_release(out[k]);
    return l;
}

static bool is_float(DType dt) { return dt == DT_F32 || dt == DT_F64; }

/* Runs the rule with gy = w; gx[i] handles owned by b. */
static void run_rule(Case *c, GradBuilder *b, GVal *gx, Tensor **y_out) {
    OpCall call = { c->op, c->nin, c->in, &c->at };
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    ck_assert_msg(op_run(&call, out) == 0, "%s: forward fails: %s", c->what, op_error());
    Shape ys;
    shape_of(out[0], &ys);
    Tensor *w = tensor_new(out[0]->dtype, &ys);
    ck_assert_ptr_nonnull(w);
    for (int64_t k = 0; k < w->size; k++) tensor_set(w, k, weight(k));
    GVal x[MAXIN];
    bool needs[MAXIN];
    for (int i = 0; i < c->nin; i++) {
        x[i] = c->in[i].kind == ARG_TENSOR ? gb_tensor(b, c->own[i]) : c->in[i].kind == ARG_NUM ? gb_num(c->in[i].x) : gb_none();
        needs[i] = c->in[i].kind == ARG_TENSOR && is_float(c->own[i]->dtype);
        gx[i] = gb_none();
    }
    GradCtx g = { b, &call, x, gb_tensor(b, out[0]), gb_tensor(b, w), needs, gx, 0 };
    ck_assert_msg(grad_backward(&g) == 0, "%s: the rule fails: %s", c->what, op_error());
    *y_out = out[0];
    for (int k = 1; k < OP_MAX_OUT; k++) tensor_release(out[k]);
    tensor_release(w);
}

static void check_case(Case *c) {
    GradBuilder b;
    gb_init(&b);
    GVal gx[MAXIN];
    Tensor *y;
    run_rule(c, &b, gx, &y);
    tensor_release(y);
    const double eps = 1e-5;
    for (int i = 0; i < c->nin; i++) {
        Tensor *t = c->own[i];
        if (c->in[i].kind != ARG_TENSOR || !is_float(t->dtype)) continue;
        Tensor *a = gx[i].t;   /* none: no contribution (piecewise constant ops), checked as zeros */
        if (!gb_ok(gx[i])) a = gb_zeros_like(&b, gb_tensor(&b, t)).t;
        ck_assert_msg(a->dtype == t->dtype, "%s: operand %d's gradient is %s, not %s", c->what, i, dtype_name(a->dtype),
                      dtype_name(t->dtype));
        Shape sa, st;
        shape_of(a, &sa);
        shape_of(t, &st);
        char b1[64], b2[64];
        ck_assert_msg(sa.ndim == st.ndim && !memcmp(sa.d, st.d, sizeof(int64_t) * (size_t)st.ndim),
                      "%s: operand %d's gradient has shape %s, not %s", c->what, i, shape_str(&sa, b1, sizeof b1),
                      shape_str(&st, b2, sizeof b2));
        for (int64_t k = 0; k < t->size; k++) {
            double x0 = tensor_get(t, k);
            tensor_set(t, k, x0 + eps);
            double hi = loss(c);
            tensor_set(t, k, x0 - eps);
            double lo = loss(c);
            tensor_set(t, k, x0);
            double num = (hi - lo) / (2 * eps), an = tensor_get(a, k);
            double err = fabs(an - num) / fmax(1, fmax(fabs(an), fabs(num)));
            ck_assert_msg(err < 1e-6, "%s: d/d operand %d [%lld]: rule %.10g, central difference %.10g", c->what, i,
                          (long long)k, an, num);
        }
    }
    gb_free(&b);
}

/* ---------- synthesising the calls of one op ---------- */

/* Integer, shape and pairs attributes the signature cannot choose: per op. */
typedef struct {
    OpCode op;
    int64_t i0;          /* P_INT: repeat's n, topk's k, round's decimals */
    Shape shape;         /* P_SHAPE / P_SHAPE_M1: tile's reps, reshape's and broadcast_to's shape */
    Shape base;          /* the first operand's shape, when not [2, 3] */
} Attr;

static const Attr ATTRS[] = {
    { OP_REPEAT, 2, { 0, { 0 } }, { 0, { 0 } } },
    { OP_TOPK, 2, { 0, { 0 } }, { 0, { 0 } } },
    { OP_TILE, 0, { 3, { 2, 1, 2 } }, { 0, { 0 } } },
    { OP_RESHAPE, 0, { 2, { 3, -1 } }, { 0, { 0 } } },
    { OP_FULL, 0, { 2, { 2, 3 } }, { 0, { 0 } } },
    { OP_BROADCAST_TO, 0, { 3, { 2, 2, 3 } }, { 2, { 1, 3 } } },
    { OP_SQUEEZE, 0, { 0, { 0 } }, { 3, { 2, 1, 3 } } },
    { OP_TRANSPOSE, 0, { 0, { 0 } }, { 3, { 2, 3, 2 } } },
    { OP_TRACE, 0, { 0, { 0 } }, { 3, { 3, 3, 2 } } },
    { OP_SOLVE, 0, { 0, { 0 } }, { 2, { 3, 3 } } },
    { OP_INV, 0, { 0, { 0 } }, { 3, { 2, 3, 3 } } },
    { OP_DET, 0, { 0, { 0 } }, { 3, { 2, 3, 3 } } },
    { OP_CHOLESKY, 0, { 0, { 0 } }, { 2, { 3, 3 } } },
    { OP_EIGH, 0, { 0, { 0 } }, { 3, { 2, 3, 3 } } },   /* distinct eigenvalues (diagonally dominant) */
    { OP_QR, 0, { 0, { 0 } }, { 2, { 3, 2 } } },        /* tall: wide matrices have no rule yet */
    { OP_SVD, 0, { 0, { 0 } }, { 3, { 2, 3, 3 } } },    /* distinct singular values */
};

static const Attr *attr_of(OpCode op) {
    for (size_t k = 0; k < sizeof ATTRS / sizeof ATTRS[0]; k++)
        if (ATTRS[k].op == op) return &ATTRS[k];
    return NULL;
}

static Shape base_shape(OpCode op) {
    const Attr *a = attr_of(op);
    return a && a->base.ndim ? a->base : SH(2, 3);
}

typedef struct {
    Case c[MAXCASES];
    int n;
} Cases;

static Case *new_case(Cases *cs, OpCode op) {
    ck_assert_int_lt(cs->n, MAXCASES);
    Case *c = &cs->c[cs->n++];
    case_init(c, op);
    return c;
}

static void binary_cases(Cases *cs, OpCode op) {
    static const Shape pairs[][2] = { { { 2, { 2, 3 } }, { 2, { 2, 3 } } },
                                      { { 2, { 2, 3 } }, { 1, { 3 } } },
                                      { { 2, { 2, 1 } }, { 2, { 1, 3 } } },
                                      { { 0, { 0 } }, { 2, { 2, 3 } } } };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        Case *c = new_case(cs, op);
        add_f64(c, pairs[k][0], 0);
        add_f64(c, pairs[k][1], 5);
    }
    Case *c = new_case(cs, op);   /* a weak number operand: no gradient of its own */
    add_f64(c, SH(2, 3), 0);
    add_num(c, domain(op, 1, 1));
}

/* Operands from the signature: T -> a tensor, T? -> given (or nil: `nil_opt`), Ts -> three
 * tensors, N -> a number. Operand-specific values for take, scatter_add and where. */
static void operands(Case *c, Shape s, bool nil_opt) {
    const OpDef *d = op_def(c->op);
    for (int p = 0; p < d->nparams; p++) {
        const OpParam *pp = &d->params[p];
        if (pp->type == P_TS) {
            Shape t = s;
            for (int k = 0; k < 3; k++) {
                if (c->op == OP_CONCAT) t.d[(c->at.axis + s.ndim) % s.ndim] = k + 1;
                add_f64(c, t, 4 * k);
            }
        } else if (pp->type == P_N) {   /* full's value as a tensor, to have a gradient */
            if (c->op == OP_FULL) add_f64(c, (Shape){ 0, { 0 } }, 1);
            else add_num(c, 0.25);
        } else if (pp->type == P_TOPT) {
            if (nil_opt && (c->nin == 1 || c->op == OP_SDPA)) add_none(c);
            else if (c->op == OP_SDPA) add_f64(c, SH(2, 2), 11);   /* a float mask over the [2, 2] scores */
            else add_f64(c, c->nin == 1 ? SH(3) : SH(2, 3), 3 * c->nin);
        } else if (pp->type == P_T) {
            if (c->op == OP_WHERE && c->nin == 0) add_bool(c, s);
            else if ((c->op == OP_TAKE || c->op == OP_SCATTER_ADD) && c->nin == 1) add_i64(c, SH(2, 2), (const int64_t[]){ 0, 5, -1, 5 });
            else if (c->op == OP_SCATTER_ADD && c->nin == 2) add_f64(c, SH(2, 2), 7);
            else if (c->op == OP_WHERE && c->nin == 2) add_f64(c, SH(3), 9);
            else if ((c->op == OP_MATMUL || c->op == OP_DOT) && c->nin == 1) add_f64(c, SH(3, 2), 5);
            else if (c->op == OP_OUTER && c->nin == 1) add_f64(c, SH(4), 5);
            else if (c->op == OP_SOLVE && c->nin == 1) add_f64(c, SH(3, 2), 5);
            else if (c->op == OP_MATMUL && c->nin == 0 && c->at.flag) add_f64(c, SH(3, 2), 0);   /* a^T is [2, 3] */
            else if (c->op == OP_SDPA) add_f64(c, s, 5 * c->nin);   /* q, k and v differ */
            else add_f64(c, s, 0);
        }
    }
}

/* One case per attribute variation: every axis, nil and each axis with keepdims both
 * ways, both bools; the rest from ATTRS. */
static void other_cases(Cases *cs, OpCode op) {
    const OpDef *d = op_def(op);
    const Attr *a = attr_of(op);
    Shape s = base_shape(op);
    int axis_p = -1, axes_p = -1, bool_p = -1;
    bool has_topt = false;
    for (int p = 0; p < d->nparams; p++) {
        switch (d->params[p].type) {
        case P_AXIS: axis_p = p; break;
        case P_AXES: axes_p = p; break;
        case P_BOOL: bool_p = bool_p < 0 ? p : bool_p; break;   /* the first: matmul's second below */
        case P_TOPT: has_topt = true; break;
        default: break;
        }
    }
    int naxis = axis_p >= 0 || axes_p >= 0 ? s.ndim + 1 : 1;   /* axis -1 (or nil), then 0 .. ndim-1 */
    int nbool = bool_p >= 0 ? 2 : 1, nnil = has_topt ? 2 : 1;
    for (int ax = 0; ax < naxis; ax++)
        for (int fl = 0; fl < nbool; fl++)
            for (int nl = 0; nl < nnil; nl++) {
                if (op == OP_SQUEEZE && ax > 0 && s.d[ax - 1] != 1) continue;   /* only a length-1 axis squeezes */
                Case *c = new_case(cs, op);
                if (axis_p >= 0) {
                    c->at.axis = ax == 0 ? -1 : ax - 1;
                    if (ax > 0 || !d->params[axis_p].default_nil) c->at.given |= 1u << axis_p;
                    note(c, " axis=%d", c->at.axis);
                }
                if (axes_p >= 0 && ax > 0 && op == OP_TRANSPOSE) {   /* axes: a permutation, rotated by ax */
                    c->at.naxes = s.ndim;
                    for (int i = 0; i < s.ndim; i++) c->at.axes[i] = (i + ax) % s.ndim;
                    note(c, " axes rotated by %d", ax);
                } else if (axes_p >= 0 && ax > 0) {
                    c->at.naxes = 1;
                    c->at.axes[0] = ax - 1;
                    note(c, " axis=%d", ax - 1);
                }
                if (bool_p >= 0) {
                    c->at.flag = fl;
                    note(c, " %s=%d", d->params[bool_p].name, fl);
                }
                if (a) {
                    c->at.i[0] = a->i0 ? a->i0 : c->at.i[0];
                    if (a->shape.ndim) c->at.shape = a->shape;
                }
                if (op == OP_PAD) {
                    c->at.npairs = ax == 0 ? 1 : 2;
                    int64_t w[2][2] = { { 1, 2 }, { 0, 1 } };
                    memcpy(c->at.pairs, w, sizeof w);
                }
                if (op == OP_ASTYPE || op == OP_FULL) c->at.dtype = DT_F64;   /* f64 results: exact differences */
                if (op == OP_EXPAND_DIMS && ax == 0) c->at.axis = 2;
                operands(c, s, nl == 1);
            }
    if (op == OP_MATMUL || op == OP_DOT) {   /* vectors, batches, a vector with a batch */
        static const Shape mm[][2] = { { { 1, { 3 } }, { 1, { 3 } } }, { { 1, { 3 } }, { 2, { 3, 2 } } },
                                       { { 2, { 2, 3 } }, { 1, { 3 } } }, { { 3, { 2, 2, 3 } }, { 2, { 3, 2 } } },
                                       { { 3, { 2, 2, 3 } }, { 3, { 1, 3, 2 } } }, { { 1, { 3 } }, { 3, { 2, 3, 2 } } },
                                       { { 3, { 2, 2, 3 } }, { 1, { 3 } } }, { { 0, { 0 } }, { 2, { 2, 3 } } } };
        for (size_t k = 0; k < sizeof mm / sizeof mm[0]; k++) {
            bool batch = mm[k][0].ndim > 2 || mm[k][1].ndim > 2, scalar = mm[k][0].ndim == 0;
            if ((op == OP_DOT && batch) || (op == OP_MATMUL && scalar)) continue;
            Case *c = new_case(cs, op);
            add_f64(c, mm[k][0], 0);
            add_f64(c, mm[k][1], 5);
        }
    }
    if (op == OP_MATMUL) {   /* transpose_a with a vector b and with a batch of a */
        static const Shape ta[][2] = { { { 2, { 3, 2 } }, { 1, { 3 } } }, { { 3, { 2, 3, 2 } }, { 2, { 3, 2 } } } };
        for (size_t k = 0; k < sizeof ta / sizeof ta[0]; k++) {
            Case *c = new_case(cs, op);
            c->at.flag = true;
            c->at.given |= 1u << 2;
            note(c, " transpose_a=1");
            add_f64(c, ta[k][0], 0);
            add_f64(c, ta[k][1], 5);
        }
        /* transpose_b (b stored [n, k]): alone, with transpose_a, a vector a with a batch of b,
         * a batch of a, and a vector b (nothing to swap) */
        static const struct { Shape a, b; bool ta; } tb[] = {
            { { 2, { 2, 3 } }, { 2, { 4, 3 } }, false }, { { 2, { 3, 2 } }, { 2, { 4, 3 } }, true },
            { { 1, { 3 } }, { 3, { 2, 4, 3 } }, false }, { { 3, { 2, 2, 3 } }, { 2, { 4, 3 } }, false },
            { { 2, { 2, 3 } }, { 1, { 3 } }, false } };
        for (size_t k = 0; k < sizeof tb / sizeof tb[0]; k++) {
            Case *c = new_case(cs, op);
            c->at.flag = tb[k].ta;
            c->at.flag2 = true;
            c->at.given |= (tb[k].ta ? 1u << 2 : 0) | 1u << 3;
            note(c, tb[k].ta ? " transpose_a=1 transpose_b=1" : " transpose_b=1");
            add_f64(c, tb[k].a, 0);
            add_f64(c, tb[k].b, 5);
        }
    }
    if (op == OP_SOLVE) {   /* a vector b, and batches */
        Case *c = new_case(cs, op);
        add_f64(c, SH(3, 3), 0);
        add_f64(c, SH(3), 5);
        c = new_case(cs, op);
        add_f64(c, SH(2, 3, 3), 0);
        add_f64(c, SH(3), 5);
        c = new_case(cs, op);
        add_f64(c, SH(2, 3, 3), 0);
        add_f64(c, SH(2, 3, 1), 5);
    }
    if (op == OP_TILE || op == OP_REPEAT) {   /* reps shorter than the rank; repeat of the flattened tensor */
        Case *c = new_case(cs, op);
        if (op == OP_TILE) c->at.shape = SH(2);
        else c->at.i[0] = 3;
        operands(c, s, false);
    }
    if (op == OP_PAD) {   /* a pair per axis, and a tensor value (its gradient: the padding's) */
        Case *c = new_case(cs, op);
        c->at.npairs = 2;
        int64_t w[2][2] = { { 0, 1 }, { 2, 0 } };
        memcpy(c->at.pairs, w, sizeof w);
        add_f64(c, s, 0);
        add_f64(c, SH(1), 3);
    }
    if (op == OP_CLIP) {   /* number bounds */
        Case *c = new_case(cs, op);
        add_f64(c, s, 0);
        add_num(c, -1.05);
        add_num(c, 1.15);
    }
    if (op == OP_PROD) {   /* prod is smooth at 0: one zero in a row, and two */
        for (int nz = 1; nz <= 2; nz++) {
            Case *c = new_case(cs, op);
            c->at.naxes = 1;
            c->at.axes[0] = 1;
            add_f64(c, s, 0);
            for (int k = 0; k < nz; k++) tensor_set(c->own[0], 3 + k, 0);
            note(c, " axis=1, %d zero(s) in row 1", nz);
        }
    }
    if (op == OP_CUMPROD) {   /* zeros: one in a line, two in a line, one first */
        static const int64_t where0[][2] = { { 4, -1 }, { 3, 5 }, { 0, -1 } };
        for (int k = 0; k < 3; k++) {
            Case *c = new_case(cs, op);
            add_f64(c, s, 0);
            for (int j = 0; j < 2; j++)
                if (where0[k][j] >= 0) tensor_set(c->own[0], where0[k][j], 0);
            note(c, " with zeros");
        }
    }
    if (op == OP_CHOLESKY) {   /* a batch */
        Case *c = new_case(cs, op);
        add_f64(c, SH(2, 3, 3), 0);
    }
    if (op == OP_SCATTER_ADD) {   /* a one-element v */
        Case *c = new_case(cs, op);
        add_f64(c, s, 0);
        add_i64(c, SH(3), (const int64_t[]){ 1, 1, 4 });
        add_f64(c, SH(1), 3);
    }
}

/* ---------- the convolution and pooling ops: 4-D operands, windows from a table ---------- */

typedef struct {
    OpCode op;
    Shape in[3];          /* operand shapes (ndim 0: nil) */
    int64_t k[2], s[2], p[4], d[2], op_pad[2], groups;   /* kernel_size / output_size, stride, padding t b l r, dilation */
    const char *what;
} WinCase;

static const WinCase WIN_CASES[] = {
    { OP_CONV2D, { { 4, { 2, 4, 5, 5 } }, { 4, { 4, 2, 3, 3 } }, { 1, { 4 } } }, { 0 }, { 2, 2 }, { 1, 1, 1, 1 }, { 1, 1 }, { 0 }, 2, " groups 2 stride 2 pad 1" },
    { OP_CONV2D, { { 4, { 1, 2, 5, 4 } }, { 4, { 3, 2, 2, 3 } }, { 0 } }, { 0 }, { 1, 1 }, { CONV_PAD_SAME, CONV_PAD_SAME, CONV_PAD_SAME, CONV_PAD_SAME }, { 2, 1 }, { 0 }, 1, " dilation [2, 1] \"same\"" },
    { OP_CONV2D, { { 4, { 1, 2, 4, 6 } }, { 4, { 2, 2, 3, 2 } }, { 1, { 2 } } }, { 0 }, { 1, 2 }, { 0, 0, 1, 1 }, { 1, 1 }, { 0 }, 1, " stride [1, 2] pad [0, 1]" },
    { OP_CONV1D, { { 3, { 2, 2, 7 } }, { 3, { 3, 2, 3 } }, { 1, { 3 } } }, { 0 }, { 2, 2 }, { 1, 1, 1, 1 }, { 1, 1 }, { 0 }, 1, " stride 2 pad 1" },
    { OP_CONV1D, { { 3, { 1, 2, 6 } }, { 3, { 2, 2, 2 } }, { 0 } }, { 0 }, { 1, 1 }, { CONV_PAD_SAME, CONV_PAD_SAME, CONV_PAD_SAME, CONV_PAD_SAME }, { 1, 1 }, { 0 }, 1, " \"same\" (even kernel)" },
    { OP_CONV_TRANSPOSE2D, { { 4, { 2, 2, 3, 3 } }, { 4, { 2, 3, 3, 3 } }, { 1, { 3 } } }, { 0 }, { 2, 2 }, { 1, 1, 1, 1 }, { 1, 1 }, { 1, 1 }, 1, " stride 2 pad 1 output_padding 1" },
    { OP_CONV_TRANSPOSE2D, { { 4, { 1, 4, 3, 2 } }, { 4, { 4, 1, 2, 2 } }, { 0 } }, { 0 }, { 1, 1 }, { 0, 0, 0, 0 }, { 2, 1 }, { 0, 0 }, 2, " groups 2 dilation [2, 1]" },
    { OP_CONV2D_WEIGHT_GRAD, { { 4, { 2, 2, 4, 4 } }, { 4, { 2, 3, 2, 2 } }, { 0 } }, { 3, 3 }, { 1, 1 }, { 0, 0, 0, 0 }, { 1, 1 }, { 0 }, 1, " kernel 3" },
    { OP_MAX_POOL2D, { { 4, { 2, 2, 4, 5 } }, { 0 }, { 0 } }, { 2, 2 }, { WIN_NIL, WIN_NIL }, { 0 }, { 0 }, { 0 }, 0, " kernel 2" },
    { OP_MAX_POOL2D, { { 4, { 1, 2, 5, 5 } }, { 0 }, { 0 } }, { 3, 3 }, { 2, 1 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 0, " kernel 3 stride [2, 1] pad 1" },
    { OP_AVG_POOL2D, { { 4, { 2, 2, 4, 5 } }, { 0 }, { 0 } }, { 2, 2 }, { WIN_NIL, WIN_NIL }, { 0 }, { 0 }, { 0 }, 0, " kernel 2" },
    { OP_AVG_POOL2D, { { 4, { 1, 2, 5, 5 } }, { 0 }, { 0 } }, { 3, 3 }, { 2, 1 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 0, " kernel 3 stride [2, 1] pad 1" },
    { OP_ADAPTIVE_AVG_POOL2D, { { 4, { 2, 2, 5, 7 } }, { 0 }, { 0 } }, { 2, 3 }, { 0 }, { 0 }, { 0 }, { 0 }, 0, " output [2, 3]" },
    { OP_AVG_POOL2D_BACKWARD, { { 4, { 1, 2, 5, 5 } }, { 4, { 1, 2, 3, 5 } }, { 0 } }, { 3, 3 }, { 2, 1 }, { 1, 1, 1, 1 }, { 0 }, { 0 }, 0, " kernel 3 stride [2, 1] pad 1" },
    { OP_ADAPTIVE_AVG_POOL2D_BACKWARD, { { 4, { 1, 2, 5, 7 } }, { 4, { 1, 2, 2, 3 } }, { 0 } }, { 0 }, { 0 }, { 0 }, { 0 }, { 0 }, 0, "" },
};

static bool is_window_op(OpCode op) {
    for (size_t k = 0; k < sizeof WIN_CASES / sizeof WIN_CASES[0]; k++)
        if (WIN_CASES[k].op == op) return true;
    return false;
}

static void set_win(OpAttrs *at, OpCode op, const char *name, const int64_t *v) {
    const OpDef *d = op_def(op);
    for (int p = 0; p < d->nparams; p++)
        if (!strcmp(d->params[p].name, name)) conv_set_win(at, op, name, v[0], v[1]);
}

static void window_cases(Cases *cs, OpCode op) {
    for (size_t k = 0; k < sizeof WIN_CASES / sizeof WIN_CASES[0]; k++) {
        const WinCase *w = &WIN_CASES[k];
        if (w->op != op) continue;
        Case *c = new_case(cs, op);
        c->at = conv_attrs(op);
        set_win(&c->at, op, "kernel_size", w->k);
        set_win(&c->at, op, "output_size", w->k);
        set_win(&c->at, op, "stride", w->s);
        set_win(&c->at, op, "dilation", w->d);
        set_win(&c->at, op, "output_padding", w->op_pad);
        const OpDef *d = op_def(op);
        for (int p = 0; p < d->nparams; p++) {
            if (d->params[p].type == P_PADW) conv_set_pad(&c->at, op, w->p[0], w->p[1], w->p[2], w->p[3]);
            if (d->params[p].type == P_WIN && !strcmp(d->params[p].name, "padding")) conv_set_win(&c->at, op, "padding", w->p[0], w->p[2]);
        }
        if (w->groups) c->at.i[0] = w->groups;
        for (int i = 0; i < 3 && w->in[i].ndim; i++) add_f64(c, w->in[i], 5 * i);
        note(c, "%s", w->what);
    }
}

static void unary_cases(Cases *cs, OpCode op) {
    Case *c = new_case(cs, op);
    add_f64(c, SH(2, 3), 0);
    c = new_case(cs, op);
    add_f64(c, (Shape){ 0, { 0 } }, 2);   /* 0-d */
    c = new_case(cs, op);
    add_f64(c, SH(0), 2);   /* empty */
}

/* The neural-network ops of issue 28 whose operands the signature cannot choose: labels,
 * indices and masks in range, variances above 0, each optional parameter both ways. */
static void add_pos(Case *c, Shape s) {   /* a variance: 0.5 and above */
    Tensor *t = tensor_of(DT_F64, s, c->op, c->nin, 3);
    for (int64_t k = 0; k < t->size; k++) tensor_set(t, k, 0.5 + fabs(tensor_get(t, k)));
    add_tensor(c, t);
}
static bool nn_cases(Cases *cs, OpCode op) {
    Case *c;
    switch (op) {
    case OP_SOFTPLUS:
        for (int k = 0; k < 2; k++) {   /* PyTorch's defaults, and beta 2 with some elements past threshold 1 */
            c = new_case(cs, op);
            if (k) c->at.f[0] = 2, c->at.f[1] = 1, note(c, " beta=2 threshold=1");
            add_f64(c, SH(2, 3), 0);
        }
        return true;
    case OP_MASKED_FILL:
        for (int k = 0; k < 2; k++) {   /* a mask of x's shape, and one broadcast */
            c = new_case(cs, op);
            add_f64(c, SH(2, 3), 0);
            add_bool(c, k ? SH(3) : SH(2, 3));
            add_num(c, 0.25);
        }
        return true;
    case OP_GATHER:
        c = new_case(cs, op);
        c->at.axis = 1;
        add_f64(c, SH(2, 3), 0);
        add_i64(c, SH(2, 2), (const int64_t[]){ 0, 2, 1, 1 });   /* a repeat: its gradients add */
        c = new_case(cs, op);
        c->at.axis = 0;
        add_f64(c, SH(2, 3), 0);
        add_i64(c, SH(1, 3), (const int64_t[]){ 1, 0, 1 });
        return true;
    case OP_SCATTER:
        for (int add = 0; add < 2; add++) {
            c = new_case(cs, op);
            c->at.axis = 1;
            c->at.i[0] = add;
            note(c, add ? " add" : "");
            add_f64(c, SH(2, 3), 0);
            add_i64(c, SH(2, 2), add ? (const int64_t[]){ 1, 1, 0, 2 } : (const int64_t[]){ 0, 2, 1, 0 });
            add_f64(c, SH(2, 3), 5);   /* larger than the index: the rest gets no gradient */
        }
        return true;
    case OP_CROSS_ENTROPY:
        for (int k = 0; k < 2; k++) {
            c = new_case(cs, op);
            if (k) c->at.f[0] = 0.1, note(c, " label_smoothing=0.1");
            add_f64(c, SH(3, 4), 0);
            add_i64(c, SH(3), (const int64_t[]){ 0, 3, 1 });
        }
        return true;
    case OP_LAYER_NORM: case OP_RMS_NORM:
        for (int k = 0; k < 2; k++) {   /* over the last axis with the affine parameters, over two without */
            c = new_case(cs, op);
            c->at.shape = k ? SH(3, 4) : SH(4);
            add_f64(c, SH(2, 3, 4), 0);
            if (k) add_none(c); else add_f64(c, SH(4), 2);
            if (op == OP_LAYER_NORM) { if (k) add_none(c); else add_f64(c, SH(4), 4); }
        }
        return true;
    case OP_GROUP_NORM:
        for (int k = 0; k < 2; k++) {
            c = new_case(cs, op);
            c->at.i[0] = 2;
            add_f64(c, SH(2, 4, 3), 0);
            if (k) add_none(c), add_none(c);
            else add_f64(c, SH(4), 2), add_f64(c, SH(4), 4);
        }
        return true;
    case OP_BATCH_NORM:
        for (int k = 0; k < 2; k++) {   /* training (the running statistics unused), evaluating */
            c = new_case(cs, op);
            c->at.flag = !k;
            note(c, k ? " eval" : " training");
            add_f64(c, SH(3, 2, 2), 0);
            add_f64(c, SH(2), 1);
            add_pos(c, SH(2));
            add_f64(c, SH(2), 2);
            add_f64(c, SH(2), 4);
        }
        return true;
    default: return false;
    }
}

static void cases_of(Cases *cs, OpCode op) {
    cs->n = 0;
    if (nn_cases(cs, op)) return;
    switch (op_def(op)->kind) {
    case K_UNARY: unary_cases(cs, op); break;
    case K_BINARY: binary_cases(cs, op); break;
    default:
        if (is_window_op(op)) window_cases(cs, op);
        else other_cases(cs, op);
        break;
    }
}

/* Ops with a rule and no case here, and why. */
static const struct {
    OpCode op;
    const char *why;
} SKIPPED[] = {
    { OP__COUNT, NULL },
};

static bool skipped(OpCode op) {
    for (size_t k = 0; SKIPPED[k].why; k++)
        if (SKIPPED[k].op == op) return true;
    return false;
}

/* Why an op has no rule: its result is never recorded (bool/i64), it has no operand to
 * differentiate, its operands are never float, or there is no rule yet. */
static int no_rule_kind(OpCode op) {
    const OpDef *d = op_def(op);
    DtypeRule r = d->dtype_rule;
    if (r == DR_BOOL || r == DR_CMP || r == DR_INT || r == DR_I64) return 0;
    if (d->noperands == 0) return 1;
    if (op == OP_ONE_HOT) return 2;   /* i64 labels */
    return 3;
}
static const char *const NO_RULE_WHY[] = { "bool/i64 result, never recorded", "no operand", "operands never float",
                                           "no rule yet: backward stops with 'no gradient for OP yet'" };

START_TEST(grad_table_rules) {
    static Cases cs;
    int ncases = 0, nops = 0;
    char none[4][2048] = { "", "", "", "" };
    for (int op = 0; op < OP__COUNT; op++) {
        if (!grad_has_rule((OpCode)op)) {
            char *l = none[no_rule_kind((OpCode)op)];
            size_t n = strlen(l);
            snprintf(l + n, sizeof none[0] - n, " %s", op_info[op].name);
            continue;
        }
        if (skipped((OpCode)op)) {
            cases_of(&cs, (OpCode)op);
            ck_assert_msg(cs.n == 0, "%s is listed as skipped but has cases", op_info[op].name);
            continue;
        }
        cases_of(&cs, (OpCode)op);
        ck_assert_msg(cs.n > 0, "%s has a rule and no case: add one or list it in SKIPPED", op_info[op].name);
        for (int k = 0; k < cs.n; k++) {
            check_case(&cs.c[k]);
            case_free(&cs.c[k]);
        }
        ncases += cs.n;
        nops++;
    }
    fprintf(stderr, "grad_table: %d ops with a rule, %d cases against central differences\n", nops, ncases);
    for (size_t k = 0; SKIPPED[k].why; k++) fprintf(stderr, "  skipped %s: %s\n", op_info[SKIPPED[k].op].name, SKIPPED[k].why);
    for (int k = 0; k < 4; k++)
        if (none[k][0]) fprintf(stderr, "  not checked (%s):%s\n", NO_RULE_WHY[k], none[k]);
}
END_TEST

/* f32 with f64: each operand's gradient has its own dtype (the f32 one rounded from the
 * f64 gradient the promoted op computes). */
static void promotion_case(OpCode op, Shape sa, Shape sb) {
    for (int f32_first = 0; f32_first < 2; f32_first++) {
        Case c64, cmix;
        case_init(&c64, op);
        case_init(&cmix, op);
        if (op == OP_WHERE) {
            add_bool(&c64, sa);
            add_bool(&cmix, sa);
        }
        add_tensor(&c64, tensor_of(DT_F64, sa, op, 0, 0));
        add_tensor(&c64, tensor_of(DT_F64, sb, op, 1, 5));
        add_tensor(&cmix, tensor_of(f32_first ? DT_F32 : DT_F64, sa, op, 0, 0));
        add_tensor(&cmix, tensor_of(f32_first ? DT_F64 : DT_F32, sb, op, 1, 5));
        GradBuilder b;
        gb_init(&b);
        GVal g64[MAXIN], gmix[MAXIN];
        Tensor *y64, *ymix;
        run_rule(&c64, &b, g64, &y64);
        run_rule(&cmix, &b, gmix, &ymix);
        ck_assert_msg(ymix->dtype == DT_F64, "%s: f32 with f64 gives %s", cmix.what, dtype_name(ymix->dtype));
        for (int i = 0; i < cmix.nin; i++) {
            if (!is_float(cmix.own[i]->dtype) || (!gb_ok(gmix[i]) && !gb_ok(g64[i]))) continue;   /* both none: zero */
            ck_assert_msg(gb_ok(gmix[i]) && gmix[i].t->dtype == cmix.own[i]->dtype, "%s: operand %d's gradient is not %s",
                          cmix.what, i, dtype_name(cmix.own[i]->dtype));
            for (int64_t k = 0; k < gmix[i].t->size; k++) {
                double want = tensor_get(g64[i].t, k), got = tensor_get(gmix[i].t, k);
                ck_assert_msg(fabs(got - want) <= 1e-5 * fmax(1, fabs(want)), "%s: operand %d [%lld]: %g, f64 gives %g", cmix.what,
                              i, (long long)k, got, want);
            }
        }
        tensor_release(y64);
        tensor_release(ymix);
        gb_free(&b);
        case_free(&c64);
        case_free(&cmix);
    }
}

START_TEST(grad_table_promotion) {
    for (int op = 0; op < OP__COUNT; op++)
        if (grad_has_rule((OpCode)op) && op_def((OpCode)op)->kind == K_BINARY) promotion_case((OpCode)op, SH(2, 3), SH(3));
    promotion_case(OP_MATMUL, SH(2, 3), SH(3, 2));
    promotion_case(OP_WHERE, SH(2, 3), SH(2, 3));
}
END_TEST

/* zeros_like / ones_like are exact where x is inf or NaN (not x * 0). */
START_TEST(grad_table_full_like) {
    GradBuilder b;
    gb_init(&b);
    Tensor *t = tensor_new(DT_F32, &SH(3));
    tensor_set(t, 0, INFINITY);
    tensor_set(t, 1, NAN);
    tensor_set(t, 2, -1);
    GVal z = gb_zeros_like(&b, gb_tensor(&b, t)), o = gb_ones_like(&b, gb_tensor(&b, t));
    ck_assert(gb_ok(z) && gb_ok(o) && z.t->dtype == DT_F32);
    for (int k = 0; k < 3; k++) ck_assert(tensor_get(z.t, k) == 0 && tensor_get(o.t, k) == 1);
    tensor_release(t);
    gb_free(&b);
}
END_TEST

Suite *grad_table_suite(void) {
    op_table_init();
    Suite *s = suite_create("grad_table");
    TCase *tc = tcase_create("rules");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, grad_table_rules);
    tcase_add_test(tc, grad_table_promotion);
    tcase_add_test(tc, grad_table_full_like);
    suite_add_tcase(s, tc);
    return s;
}
