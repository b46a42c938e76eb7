/* grad.c - the backward rule of each differentiable op, written once with ops through a
 * GradBuilder (grad.h), and the eager builder. The rules are listed in RULES below, keyed
 * by op id: that list is the one place op_info[].backward is filled from. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "grad.h"
#include "mem.h"
#include "conv.h"
#include "attention.h"
#include "dist.h"

/* ---------- the builder ---------- */

static int eager_run(GradBuilder *b, const OpCall *c, Tensor **out) { (void)b; return op_run(c, out); }

void gb_init(GradBuilder *b) {
    memset(b, 0, sizeof *b);
    b->run = eager_run;
}

void gb_free(GradBuilder *b) {
    for (int i = 0; i < b->nowned; i++) tensor_release(b->owned[i]);
    mem_free(b->owned);
    b->owned = NULL;
    b->nowned = b->cap = 0;
}

GVal gb_none(void) { return (GVal){ .t = NULL, .reg = -1 }; }
GVal gb_num(double x) { return (GVal){ .t = NULL, .reg = -1, .is_num = true, .x = x }; }
bool gb_ok(GVal v) { return v.ok; }
GVal gb_reg(int reg, DType dt, const Shape *s) { return (GVal){ .reg = reg, .ok = true, .dtype = dt, .shape = *s }; }
int64_t gv_size(GVal v) {
    int64_t n = 1;
    for (int i = 0; i < v.shape.ndim; i++) n *= v.shape.d[i];
    return n;
}
Tensor *gb_keep(GVal v) { return v.t ? tensor_retain(v.t) : NULL; }

/* Takes the reference t. */
static GVal own(GradBuilder *b, Tensor *t) {
    if (b->nowned == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;   /* raised once grown: out of memory jumps */
        b->owned = mem_realloc(b->owned, sizeof(Tensor *) * (size_t)cap);
        b->cap = cap;
    }
    b->owned[b->nowned++] = t;
    GVal v = { .t = t, .reg = -1, .ok = true, .dtype = t->dtype };
    shape_of(t, &v.shape);
    return v;
}

GVal gb_tensor(GradBuilder *b, Tensor *t) { return own(b, tensor_retain(t)); }

OpAttrs attrs_default(void) {
    OpAttrs at;
    memset(&at, 0, sizeof at);
    at.naxes = -1;
    at.dtype = -1;
    return at;
}

GVal gb_op(GradBuilder *b, OpCode op, const GVal *in, int n, const OpAttrs *at) { return gb_op_result(b, op, in, n, at, 0); }

GVal gb_op_result(GradBuilder *b, OpCode op, const GVal *in, int n, const OpAttrs *at, int which) {
    OpArg args[4];
    OpAttrs def = attrs_default();
    if (op == OP_SUM || op == OP_MEAN) def.flag = false;
    for (int i = 0; i < n; i++)
        if (!in[i].is_num && !in[i].ok) return gb_none();   /* an earlier step failed: its message stands */
    if (b->emit) return b->emit(b, op, in, n, at ? at : &def, which);
    bool numbers = n > 0 && (op_info[op].flags & F_NUM);
    for (int i = 0; i < n; i++) numbers &= in[i].is_num;
    if (numbers) {   /* numbers give a number (a weak scalar), as the static compiler folds them */
        double r;
        for (int i = 0; i < n; i++) args[i] = op_arg_num(in[i].x, false);
        if (op_run_number(op, args, n, at ? at : &def, &r)) return gb_none();
        return gb_num(r);
    }
    for (int i = 0; i < n; i++)
        args[i] = in[i].is_num ? op_arg_num(in[i].x, false) : op_arg_tensor(in[i].t);
    OpCall c = { op, n, args, at ? at : &def };
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    if (b->run(b, &c, out)) return gb_none();
    for (int k = 0; k < OP_MAX_OUT; k++)
        if (k != which) tensor_release(out[k]);
    return own(b, out[which]);
}

static GVal op2(GradBuilder *b, OpCode op, GVal x, GVal y) { GVal in[2] = { x, y }; return gb_op(b, op, in, 2, NULL); }
GVal gb_add(GradBuilder *b, GVal x, GVal y) { return op2(b, OP_ADD, x, y); }
GVal gb_sub(GradBuilder *b, GVal x, GVal y) { return op2(b, OP_SUB, x, y); }
GVal gb_mul(GradBuilder *b, GVal x, GVal y) { return op2(b, OP_MUL, x, y); }
GVal gb_div(GradBuilder *b, GVal x, GVal y) { return op2(b, OP_DIV, x, y); }
GVal gb_unary(GradBuilder *b, OpCode op, GVal x) { return gb_op(b, op, &x, 1, NULL); }
GVal gb_neg(GradBuilder *b, GVal x) { return gb_unary(b, OP_NEG, x); }
/* full(x.shape, value, x.dtype): not x * 0, which is NaN where x is inf or NaN. */
static GVal full_like(GradBuilder *b, GVal x, double value) {
    if (!x.ok) return gb_none();
    OpAttrs at = attrs_default();
    at.shape = x.shape;
    at.dtype = (int)x.dtype;
    GVal v = gb_num(value);
    return gb_op(b, OP_FULL, &v, 1, &at);
}
GVal gb_zeros_like(GradBuilder *b, GVal x) { return full_like(b, x, 0); }
GVal gb_ones_like(GradBuilder *b, GVal x) { return full_like(b, x, 1); }

GVal gb_astype(GradBuilder *b, GVal x, DType dt) {
    if (x.ok && x.dtype == dt) return x;
    OpAttrs at = attrs_default();
    at.dtype = (int)dt;
    return gb_op(b, OP_ASTYPE, &x, 1, &at);
}

GVal gb_reshape(GradBuilder *b, GVal x, const Shape *s) {
    OpAttrs at = attrs_default();
    at.shape = *s;
    return gb_op(b, OP_RESHAPE, &x, 1, &at);
}

static GVal broadcast_to(GradBuilder *b, GVal x, const Shape *s) {
    OpAttrs at = attrs_default();
    at.shape = *s;
    return gb_op(b, OP_BROADCAST_TO, &x, 1, &at);
}

static bool same_shape(const Shape *t, const Shape *s) {
    if (t->ndim != s->ndim) return false;
    for (int i = 0; i < s->ndim; i++)
        if (t->d[i] != s->d[i]) return false;
    return true;
}

GVal gb_sum_to_shape(GradBuilder *b, GVal g, const Shape *s, DType dt) {
    if (!g.ok) return g;
    if (!same_shape(&g.shape, s)) {
        OpAttrs at = attrs_default();
        int lead = g.shape.ndim - s->ndim;
        at.naxes = 0;
        for (int i = 0; i < g.shape.ndim; i++)
            if (i < lead || (s->d[i - lead] == 1 && g.shape.d[i] != 1)) at.axes[at.naxes++] = i;
        at.flag = false;
        if (at.naxes) g = gb_op(b, OP_SUM, &g, 1, &at);
        if (g.ok && !same_shape(&g.shape, s)) g = gb_reshape(b, g, s);
    }
    return gb_astype(b, g, dt);
}

/* ---------- helpers of the rules ---------- */

static Shape shape_val(GVal v) { return v.shape; }

/* The operand's gradient from a gradient of the result's shape: un-broadcast (numbers and
 * operands that need none get none). */
static void give(GradCtx *g, int i, GVal d) {
    if (!g->needs[i] || !g->x[i].ok) return;
    Shape s = shape_val(g->x[i]);
    g->gx[i] = gb_sum_to_shape(g->b, d, &s, g->x[i].dtype);
}

static int done(GradCtx *g) {
    for (int i = 0; i < g->c->nin; i++)
        if (g->needs[i] && g->x[i].ok && !g->gx[i].ok) return -1;
    return 0;
}

/* The shape of a reduction's result with keepdims, from the call's axes. */
static Shape kept_shape(const GradCtx *g) {
    Shape s = shape_val(g->x[0]);
    const OpAttrs *at = g->c->at;
    if (at->naxes < 0) {
        for (int i = 0; i < s.ndim; i++) s.d[i] = 1;
    } else {
        for (int k = 0; k < at->naxes; k++) s.d[at->axes[k] < 0 ? at->axes[k] + s.ndim : at->axes[k]] = 1;
    }
    return s;
}

/* v (a reduction's result or gradient) broadcast back to the operand's shape. */
static GVal unreduce(GradCtx *g, GVal v) {
    Shape k = kept_shape(g), s = shape_val(g->x[0]);
    /* a 0-d value (a reduction over every axis) broadcasts as it is: no reshape (a view,
     * which in a static loop would keep the operand's buffer from being reused) */
    if (v.ok && v.shape.ndim == 0) return broadcast_to(g->b, v, &s);
    return broadcast_to(g->b, gb_reshape(g->b, v, &k), &s);
}

static GVal reduce_kept(GradBuilder *b, OpCode op, GVal v, int axis) {
    OpAttrs at = attrs_default();
    at.naxes = 1;
    at.axes[0] = axis;
    at.flag = true;
    return gb_op(b, op, &v, 1, &at);
}

/* ---------- the rules ---------- */

#define B (g->b)
#define X (g->x[0])
#define GY (g->gy)

/* op of v over the call's axes, kept (keepdims) and broadcast back to x's shape */
static GVal reduce_back(GradCtx *g, OpCode op, GVal v) {
    OpAttrs at = *g->c->at;
    at.flag = true;
    Shape s = shape_val(X);
    return broadcast_to(B, gb_op(B, op, &v, 1, &at), &s);
}

static int r_zero(GradCtx *g) { (void)g; return 0; }   /* piecewise constant: no contribution */
static int r_neg(GradCtx *g) { give(g, 0, gb_neg(B, GY)); return done(g); }
static int r_abs(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_unary(B, OP_SIGN, X))); return done(g); }  /* abs'(0) = 0 */
static int r_exp(GradCtx *g) { give(g, 0, gb_mul(B, GY, g->y)); return done(g); }
static int r_expm1(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_add(B, g->y, gb_num(1)))); return done(g); }
static int r_log(GradCtx *g) { give(g, 0, gb_div(B, GY, X)); return done(g); }
static int r_log2(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_mul(B, X, gb_num(M_LN2)))); return done(g); }
static int r_log10(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_mul(B, X, gb_num(M_LN10)))); return done(g); }
static int r_log1p(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_add(B, X, gb_num(1)))); return done(g); }
static int r_sqrt(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_mul(B, g->y, gb_num(2)))); return done(g); }
static int r_sin(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_unary(B, OP_COS, X))); return done(g); }
static int r_cos(GradCtx *g) { give(g, 0, gb_neg(B, gb_mul(B, GY, gb_unary(B, OP_SIN, X)))); return done(g); }
static int r_tan(GradCtx *g) {
    give(g, 0, gb_mul(B, GY, gb_add(B, gb_mul(B, g->y, g->y), gb_num(1))));
    return done(g);
}
static int r_sinh(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_unary(B, OP_COSH, X))); return done(g); }
static int r_cosh(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_unary(B, OP_SINH, X))); return done(g); }
static int r_tanh(GradCtx *g) {
    give(g, 0, gb_mul(B, GY, gb_sub(B, gb_num(1), gb_mul(B, g->y, g->y))));
    return done(g);
}
static int r_sigmoid(GradCtx *g) {
    give(g, 0, gb_mul(B, gb_mul(B, GY, g->y), gb_sub(B, gb_num(1), g->y)));
    return done(g);
}
/* inverse trigonometric and hyperbolic: g / sqrt(+-(x^2) +- 1) or g / (1 +- x^2) */
static GVal sq(GradBuilder *b, GVal v) { return gb_mul(b, v, v); }
static int r_softsign(GradCtx *g) { give(g, 0, gb_div(B, GY, sq(B, gb_add(B, gb_num(1), gb_unary(B, OP_ABS, X))))); return done(g); }
static int r_asin(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_unary(B, OP_SQRT, gb_sub(B, gb_num(1), sq(B, X))))); return done(g); }
static int r_acos(GradCtx *g) { give(g, 0, gb_neg(B, gb_div(B, GY, gb_unary(B, OP_SQRT, gb_sub(B, gb_num(1), sq(B, X)))))); return done(g); }
static int r_atan(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_add(B, sq(B, X), gb_num(1)))); return done(g); }
static int r_asinh(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_unary(B, OP_SQRT, gb_add(B, sq(B, X), gb_num(1))))); return done(g); }
static int r_acosh(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_unary(B, OP_SQRT, gb_sub(B, sq(B, X), gb_num(1))))); return done(g); }
static int r_atanh(GradCtx *g) { give(g, 0, gb_div(B, GY, gb_sub(B, gb_num(1), sq(B, X)))); return done(g); }
static int r_atan2(GradCtx *g) {   /* atan2(y, x): dy = x / r2, dx = -y / r2 */
    GVal y = g->x[0], x = g->x[1];
    GVal r2 = gb_add(B, sq(B, y), sq(B, x));
    if (g->needs[0]) give(g, 0, gb_div(B, gb_mul(B, GY, x), r2));
    if (g->needs[1]) give(g, 1, gb_neg(B, gb_div(B, gb_mul(B, GY, y), r2)));
    return done(g);
}
static GVal where(GradBuilder *b, GVal cond, GVal x, GVal y) { GVal in[3] = { cond, x, y }; return gb_op(b, OP_WHERE, in, 3, NULL); }
static int r_relu(GradCtx *g) {   /* relu'(0) = 0 */
    give(g, 0, where(B, op2(B, OP_GT, X, gb_num(0)), GY, gb_num(0)));
    return done(g);
}

static int r_add(GradCtx *g) { give(g, 0, GY); give(g, 1, GY); return done(g); }
static int r_sub(GradCtx *g) { give(g, 0, GY); if (g->needs[1]) give(g, 1, gb_neg(B, GY)); return done(g); }
static int r_mul(GradCtx *g) {
    if (g->needs[0]) give(g, 0, gb_mul(B, GY, g->x[1]));
    if (g->needs[1]) give(g, 1, gb_mul(B, GY, g->x[0]));
    return done(g);
}
static int r_div(GradCtx *g) {
    if (g->needs[0]) give(g, 0, gb_div(B, GY, g->x[1]));
    if (g->needs[1]) give(g, 1, gb_neg(B, gb_div(B, gb_mul(B, GY, g->y), g->x[1])));   /* -a/b^2 = -y/b */
    return done(g);
}
/* PyTorch's pow_backward: the base gets 0 where the exponent is 0 (not 0 * 0 ** -1 = nan at a
 * 0 base), the exponent 0 where the base is 0 and the exponent >= 0 (not y * log(0)). */
static int r_pow(GradCtx *g) {
    GVal a = g->x[0], e = g->x[1];
    if (g->needs[0]) {
        GVal d = gb_mul(B, GY, gb_mul(B, e, op2(B, OP_POW, a, gb_sub(B, e, gb_num(1)))));
        if (!e.is_num) d = where(B, op2(B, OP_EQ, e, gb_num(0)), gb_num(0), d);
        give(g, 0, e.is_num && e.x == 0 ? gb_zeros_like(B, a) : d);
    }
    if (g->needs[1]) {
        GVal d = gb_mul(B, GY, gb_mul(B, g->y, gb_unary(B, OP_LOG, a)));
        GVal ge0 = op2(B, OP_GE, e, gb_num(0));
        if (!a.is_num) d = where(B, op2(B, OP_LOGICAL_AND, op2(B, OP_EQ, a, gb_num(0)), ge0), gb_num(0), d);
        else if (a.x == 0) d = where(B, ge0, gb_num(0), d);
        give(g, 1, d);
    }
    return done(g);
}
/* maximum/minimum: the winner takes the gradient, ties split it evenly (PyTorch). */
static int r_extremum(GradCtx *g, OpCode wins) {
    GVal a = g->x[0], bb = g->x[1];
    GVal share = gb_add(B, where(B, op2(B, wins, a, bb), gb_num(1), gb_num(0)),
                        where(B, op2(B, OP_EQ, a, bb), gb_num(0.5), gb_num(0)));
    share = gb_astype(B, share, g->y.dtype);
    if (g->needs[0]) give(g, 0, gb_mul(B, GY, share));
    if (g->needs[1]) give(g, 1, gb_mul(B, GY, gb_sub(B, gb_num(1), share)));
    return done(g);
}
static int r_maximum(GradCtx *g) { return r_extremum(g, OP_GT); }
static int r_minimum(GradCtx *g) { return r_extremum(g, OP_LT); }
static int r_where(GradCtx *g) {
    if (g->needs[1]) give(g, 1, where(B, g->x[0], GY, gb_num(0)));
    if (g->needs[2]) give(g, 2, where(B, g->x[0], gb_num(0), GY));
    return done(g);
}
static int r_astype(GradCtx *g) { give(g, 0, GY); return done(g); }   /* give() converts back */

static int r_sum(GradCtx *g) { give(g, 0, unreduce(g, GY)); return done(g); }
static int r_mean(GradCtx *g) {
    double n = (double)gv_size(X) / (double)gv_size(g->y);
    give(g, 0, gb_div(B, unreduce(g, GY), gb_num(n)));
    return done(g);
}
/* max/min: the elements equal to the result share the gradient evenly. */
static int r_max(GradCtx *g) {
    GVal hit = gb_astype(B, op2(B, OP_EQ, X, unreduce(g, g->y)), X.dtype);
    GVal count = reduce_back(g, OP_SUM, hit);
    give(g, 0, gb_mul(B, unreduce(g, GY), gb_div(B, hit, count)));
    return done(g);
}
/* var: 2 (x - mean) / n; std: (x - mean) / (n std); norm: x / norm; std and norm give 0
 * where the result is 0 (PyTorch's subgradient: its std_backward masks std == 0) */
static GVal centered(GradCtx *g) { return gb_sub(B, X, reduce_back(g, OP_MEAN, X)); }
static double reduced_count(const GradCtx *g) { return (double)gv_size(g->x[0]) / (double)gv_size(g->y); }
static int r_var(GradCtx *g) {
    give(g, 0, gb_mul(B, unreduce(g, GY), gb_mul(B, centered(g), gb_num(2 / reduced_count(g)))));
    return done(g);
}
static int r_std(GradCtx *g) {
    GVal sd = unreduce(g, g->y);
    GVal d = where(B, op2(B, OP_EQ, sd, gb_num(0)), gb_num(0), gb_div(B, centered(g), gb_mul(B, sd, gb_num(reduced_count(g)))));
    give(g, 0, gb_mul(B, unreduce(g, GY), d));
    return done(g);
}
static int r_norm(GradCtx *g) {
    GVal n = unreduce(g, g->y);
    GVal d = where(B, op2(B, OP_EQ, n, gb_num(0)), gb_num(0), gb_div(B, X, n));
    give(g, 0, gb_mul(B, unreduce(g, GY), d));
    return done(g);
}
static int r_cumsum(GradCtx *g) {   /* the reversed running sum of g: sum(g) - cumsum(g) + g */
    GVal total = reduce_kept(B, OP_SUM, GY, g->c->at->axis);
    Shape s = shape_val(GY);
    give(g, 0, gb_add(B, gb_sub(B, broadcast_to(B, total, &s), gb_op(B, OP_CUMSUM, &g->gy, 1, g->c->at)), GY));
    return done(g);
}
static int r_logsumexp(GradCtx *g) {
    give(g, 0, gb_mul(B, unreduce(g, GY), gb_unary(B, OP_EXP, gb_sub(B, X, unreduce(g, g->y)))));
    return done(g);
}
static int r_softmax(GradCtx *g) {   /* y * (g - sum(g * y)) */
    GVal s = reduce_kept(B, OP_SUM, gb_mul(B, GY, g->y), g->c->at->axis);
    give(g, 0, gb_mul(B, g->y, gb_sub(B, GY, s)));
    return done(g);
}
static int r_log_softmax(GradCtx *g) {   /* g - exp(y) * sum(g) */
    GVal s = reduce_kept(B, OP_SUM, GY, g->c->at->axis);
    give(g, 0, gb_sub(B, GY, gb_mul(B, gb_unary(B, OP_EXP, g->y), s)));
    return done(g);
}

GVal gb_swap_last(GradBuilder *b, GVal v) {
    OpAttrs at = attrs_default();
    int n = v.shape.ndim;
    at.naxes = n;
    for (int i = 0; i < n; i++) at.axes[i] = i;
    at.axes[n - 2] = n - 1;
    at.axes[n - 1] = n - 2;
    return gb_op(b, OP_TRANSPOSE, &v, 1, &at);
}
static GVal expand_at(GradBuilder *b, GVal v, int axis) {
    OpAttrs at = attrs_default();
    at.axis = axis;
    return gb_op(b, OP_EXPAND_DIMS, &v, 1, &at);
}
static GVal expand_last(GradBuilder *b, GVal v) { return expand_at(b, v, -1); }   /* [..., n] -> [..., n, 1] */
static GVal squeeze_last(GradBuilder *b, GVal v) {
    OpAttrs at = attrs_default();
    at.naxes = 1;
    at.axes[0] = -1;
    return gb_op(b, OP_SQUEEZE, &v, 1, &at);
}
/* matmul(a, c) with a's and c's last two axes read transposed as ta and tc say: no copy of
 * either transpose. */
static GVal matmul_t(GradBuilder *b, GVal a, bool ta, GVal c, bool tc) {
    OpAttrs at = attrs_default();
    at.flag = ta;
    at.flag2 = tc;
    at.given = (ta ? 1u << 2 : 0) | (tc ? 1u << 3 : 0);
    GVal in[2] = { a, c };
    return gb_op(b, OP_MATMUL, in, 2, &at);
}
static GVal matmul_ta(GradBuilder *b, GVal a, GVal c) { return matmul_t(b, a, true, c, false); }   /* a^T @ c */
/* y = a^T @ b, a^T @ b^T or a @ b^T (transpose_a, transpose_b; b a matrix or a batch of them
 * where b^T is read): the same rules with the transposes read in place. */
static int r_matmul_t(GradCtx *g, bool ta, bool tb) {
    GVal a = g->x[0], bb = g->x[1];
    int na = a.ok ? a.shape.ndim : 0;
    if (tb && na == 1) {   /* y[..., n] = b[..., n, k] a[k] */
        if (g->needs[0]) give(g, 0, squeeze_last(B, matmul_t(B, bb, true, expand_last(B, GY), false)));
        if (g->needs[1]) give(g, 1, gb_mul(B, expand_last(B, GY), a));
    } else if (ta && tb) {   /* y = a^T b^T: ga = b^T g^T, gb = g^T a^T */
        if (g->needs[0]) give(g, 0, matmul_t(B, bb, true, GY, true));
        if (g->needs[1]) give(g, 1, matmul_t(B, GY, true, a, true));
    } else if (tb) {   /* y = a b^T: ga = g b, gb = g^T a */
        if (g->needs[0]) give(g, 0, op2(B, OP_MATMUL, GY, bb));
        if (g->needs[1]) give(g, 1, matmul_ta(B, GY, a));
    } else {   /* y = a^T b: ga = b g^T, gb = a g */
        if (g->needs[0]) give(g, 0, matmul_t(B, bb, false, GY, true));
        if (g->needs[1]) give(g, 1, op2(B, OP_MATMUL, a, GY));
    }
    return done(g);
}
static int r_matmul(GradCtx *g) {   /* ga = g @ b^T, gb = a^T @ g (batch axes summed back) */
    GVal a = g->x[0], bb = g->x[1];
    int na = a.ok ? a.shape.ndim : 0, nb = bb.ok ? bb.shape.ndim : 0;
    bool ta = g->c->op == OP_MATMUL && g->c->at->flag && na >= 2, tb = g->c->op == OP_MATMUL && g->c->at->flag2 && nb >= 2;
    if (ta && nb == 1) {   /* y = a^T @ b with a vector b */
        if (g->needs[0]) give(g, 0, gb_mul(B, expand_last(B, bb), expand_at(B, GY, -2)));
        if (g->needs[1]) give(g, 1, squeeze_last(B, op2(B, OP_MATMUL, a, expand_last(B, GY))));
        return done(g);
    }
    if (ta || tb) return r_matmul_t(g, ta, tb);
    if (na == 1 && nb == 1) {   /* a dot product */
        if (g->needs[0]) give(g, 0, gb_mul(B, GY, bb));
        if (g->needs[1]) give(g, 1, gb_mul(B, GY, a));
        return done(g);
    }
    if ((na == 1 && nb == 2) || (na == 2 && nb == 1)) {   /* a vector times a matrix, or the reverse */
        if (g->needs[0]) give(g, 0, na == 1 ? op2(B, OP_MATMUL, bb, GY) : op2(B, OP_OUTER, GY, bb));
        if (g->needs[1]) give(g, 1, nb == 1 ? matmul_ta(B, a, GY) : op2(B, OP_OUTER, a, GY));
        return done(g);
    }
    if (na == 1) {   /* a vector times a batch of matrices: y[..., n] = a[k] b[..., k, n] */
        if (g->needs[0]) give(g, 0, squeeze_last(B, op2(B, OP_MATMUL, bb, expand_last(B, GY))));
        if (g->needs[1]) give(g, 1, gb_mul(B, expand_last(B, a), expand_at(B, GY, -2)));
        return done(g);
    }
    if (nb == 1) {   /* a batch of matrices times a vector: y[..., m] = a[..., m, k] b[k] */
        if (g->needs[0]) give(g, 0, gb_mul(B, expand_last(B, GY), bb));
        if (g->needs[1]) give(g, 1, squeeze_last(B, matmul_ta(B, a, expand_last(B, GY))));
        return done(g);
    }
    if (g->needs[0]) give(g, 0, matmul_t(B, GY, false, bb, true));
    if (g->needs[1]) give(g, 1, matmul_ta(B, a, GY));
    return done(g);
}
static int r_reshape(GradCtx *g) {
    Shape s = shape_val(X);
    give(g, 0, gb_reshape(B, GY, &s));
    return done(g);
}
static int r_transpose(GradCtx *g) {
    OpAttrs at = attrs_default();
    int n = X.shape.ndim;
    at.naxes = n;
    for (int i = 0; i < n; i++) {
        int p = g->c->at->naxes < 0 ? n - 1 - i : g->c->at->axes[i];
        at.axes[p < 0 ? p + n : p] = i;   /* the inverse permutation */
    }
    give(g, 0, gb_op(B, OP_TRANSPOSE, &g->gy, 1, &at));
    return done(g);
}
static int r_broadcast_to(GradCtx *g) { give(g, 0, GY); return done(g); }   /* give() sums back */

/* arange(n) as i64 (indices for masks and offsets). */
static GVal arange_i64(GradBuilder *b, int64_t lo, int64_t hi) {
    OpAttrs at = attrs_default();
    at.f[0] = (double)lo;
    at.f[1] = (double)hi;
    at.f[2] = 1;
    at.dtype = DT_I64;
    at.given = 1u | 2u | 4u | 8u;
    return gb_op(b, OP_ARANGE, NULL, 0, &at);
}
static GVal reshape_dims(GradBuilder *b, GVal v, int nd, const int64_t *d) {
    Shape s = { nd, { 0 } };
    for (int i = 0; i < nd; i++) s.d[i] = d[i];
    return gb_reshape(b, v, &s);
}
static int axis_of(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }
static int too_high(const char *op, int rank) {
    op_failk(ERRK_VALUE, "no gradient for %s of rank %d yet (the backward needs rank %d, above %d)", op, rank - 1, rank, TSL_MAX_RANK);
    return -1;
}

static int r_exp2(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_mul(B, g->y, gb_num(M_LN2)))); return done(g); }
static int r_mod(GradCtx *g) {   /* a - b * floor(a / b): da = g, db = -g * floor(a / b) */
    if (g->needs[0]) give(g, 0, GY);
    if (g->needs[1]) give(g, 1, gb_neg(B, gb_mul(B, GY, gb_unary(B, OP_FLOOR, gb_div(B, g->x[0], g->x[1])))));
    return done(g);
}
/* clip(t, lo, hi) = minimum(maximum(t, lo), hi): t's gradient passes where lo <= t <= hi
 * (PyTorch's choice at the bounds), lo takes it where t < lo, hi where max(t, lo) > hi. */
static bool present(const GradCtx *g, int i) { return i < g->c->nin && (g->x[i].ok || g->x[i].is_num); }
static int r_clip(GradCtx *g) {
    GVal zero = gb_num(0), g_t = GY;
    GVal m = present(g, 1) ? op2(B, OP_MAXIMUM, X, g->x[1]) : X;
    GVal hi_wins = present(g, 2) ? op2(B, OP_GT, m, g->x[2]) : gb_none();
    if (present(g, 1)) {
        GVal below = op2(B, OP_LT, X, g->x[1]);
        if (g->needs[1]) {
            GVal g_lo = where(B, below, GY, zero);
            give(g, 1, hi_wins.ok ? where(B, hi_wins, zero, g_lo) : g_lo);
        }
        g_t = where(B, below, zero, g_t);
    }
    if (hi_wins.ok) {
        if (g->needs[2]) give(g, 2, where(B, hi_wins, GY, zero));
        g_t = where(B, hi_wins, zero, g_t);
    }
    give(g, 0, g_t);
    return done(g);
}
/* prod: each element gets the product of the others. With p the product of the nonzero
 * elements and z how many are 0: p / x where z == 0; p at the one 0 where z == 1; 0 else
 * (PyTorch's case split, so zeros need no division by 0). */
static int r_prod(GradCtx *g) {
    GVal zero = op2(B, OP_EQ, X, gb_num(0));
    GVal nz = where(B, zero, gb_num(1), X);
    GVal p = reduce_back(g, OP_PROD, nz);
    GVal z = reduce_back(g, OP_SUM, zero);
    GVal one_zero = where(B, op2(B, OP_EQ, z, gb_num(1)), where(B, zero, p, gb_num(0)), gb_num(0));
    GVal others = where(B, op2(B, OP_EQ, z, gb_num(0)), gb_div(B, p, nz), one_zero);
    give(g, 0, gb_mul(B, unreduce(g, GY), others));
    return done(g);
}
/* The running sum of v from the end along the call's axis: sum(v) - cumsum(v) + v. */
static GVal rev_cumsum(GradCtx *g, GVal v) {
    GVal total = reduce_kept(B, OP_SUM, v, g->c->at->axis);
    Shape s = shape_val(v);
    return gb_add(B, gb_sub(B, broadcast_to(B, total, &s), gb_op(B, OP_CUMSUM, &v, 1, g->c->at)), v);
}
/* cumprod: x_i gets sum over j >= i of g_j prod(x_k, k <= j, k != i). Before a line's first
 * 0 that is rev_cumsum(g y)_i / x_i; at the first 0, rev_cumsum(g y1) with y1 the cumprod
 * of x with that 0 read as 1; after it 0 (every product holds the first 0). */
static int r_cumprod(GradCtx *g) {
    GVal zero = op2(B, OP_EQ, X, gb_num(0));
    GVal seen = gb_op(B, OP_CUMSUM, &zero, 1, g->c->at);   /* zeros up to here (i64) */
    GVal first = op2(B, OP_LOGICAL_AND, zero, op2(B, OP_EQ, seen, gb_num(1)));
    GVal before = gb_div(B, rev_cumsum(g, gb_mul(B, GY, g->y)), where(B, zero, gb_num(1), X));
    GVal x1 = where(B, first, gb_num(1), X);
    GVal at_first = rev_cumsum(g, gb_mul(B, GY, gb_op(B, OP_CUMPROD, &x1, 1, g->c->at)));
    give(g, 0, where(B, op2(B, OP_EQ, seen, gb_num(0)), before, where(B, first, at_first, gb_num(0))));
    return done(g);
}
/* diff: y[j] = x[j+1] - x[j] along axis, so x[j] gets g[j-1] - g[j]: g padded before minus g padded after. */
static GVal pad_axis(GradBuilder *b, GVal v, int ax, int64_t before, int64_t after) {
    OpAttrs at = attrs_default();
    at.npairs = v.shape.ndim;
    for (int i = 0; i < at.npairs; i++) at.pairs[i][0] = at.pairs[i][1] = 0;
    at.pairs[ax][0] = before;
    at.pairs[ax][1] = after;
    GVal in[2] = { v, gb_num(0) };
    return gb_op(b, OP_PAD, in, 2, &at);
}
static int r_diff(GradCtx *g) {
    int ax = axis_of(g->c->at->axis, X.shape.ndim);
    if (X.shape.d[ax] == 0) { give(g, 0, gb_zeros_like(B, X)); return done(g); }
    give(g, 0, gb_sub(B, pad_axis(B, GY, ax, 1, 0), pad_axis(B, GY, ax, 0, 1)));
    return done(g);
}
/* tile: the copies of each element are summed; gy is split into [reps, dim] pairs of axes. */
static int r_tile(GradCtx *g) {
    const Shape *reps = &g->c->at->shape, *ys = &GY.shape;
    int nd = ys->ndim, nx = X.shape.ndim, n = 0;
    int64_t d[TSL_MAX_RANK];
    OpAttrs at = attrs_default();
    at.naxes = 0;
    for (int i = 0; i < nd; i++) {
        int ir = i - (nd - reps->ndim), ia = i - (nd - nx);
        int64_t r = ir >= 0 ? reps->d[ir] : 1, dim = ia >= 0 ? X.shape.d[ia] : 1;
        if (r != 1) {
            if (n == TSL_MAX_RANK) return too_high("tile", 2 * nd);
            at.axes[at.naxes++] = n;
            d[n++] = r;
        }
        if (n == TSL_MAX_RANK) return too_high("tile", 2 * nd);
        d[n++] = dim;
    }
    GVal v = reshape_dims(B, GY, n, d);
    if (at.naxes) v = gb_op(B, OP_SUM, &v, 1, &at);
    Shape s = shape_val(X);
    give(g, 0, gb_reshape(B, v, &s));
    return done(g);
}
/* repeat: element k's n copies are adjacent along the axis (or in the flattened tensor). */
static int r_repeat(GradCtx *g) {
    int64_t n = g->c->at->i[0], d[TSL_MAX_RANK];
    int nd = 0, ax;
    if (!op_given(g->c, 2)) {
        d[nd++] = gv_size(X);
        ax = 0;
    } else {
        ax = axis_of(g->c->at->axis, X.shape.ndim);
        if (X.shape.ndim == TSL_MAX_RANK) return too_high("repeat", X.shape.ndim + 1);
        for (int i = 0; i < X.shape.ndim; i++) d[nd++] = X.shape.d[i];
    }
    memmove(d + ax + 2, d + ax + 1, sizeof(int64_t) * (size_t)(nd - ax - 1));
    d[ax + 1] = n;
    nd++;
    GVal v = reshape_dims(B, GY, nd, d);
    OpAttrs at = attrs_default();
    at.naxes = 1;
    at.axes[0] = ax + 1;
    v = gb_op(B, OP_SUM, &v, 1, &at);
    Shape s = shape_val(X);
    give(g, 0, gb_reshape(B, v, &s));
    return done(g);
}
/* trace: gy on the diagonal of the first two axes (a mask from two aranges), 0 elsewhere. */
static int r_trace(GradCtx *g) {
    int nd = X.shape.ndim;
    int64_t d0 = X.shape.d[0], d1 = X.shape.d[1], rows[TSL_MAX_RANK], cols[TSL_MAX_RANK], gs[TSL_MAX_RANK];
    for (int i = 0; i < nd; i++) rows[i] = cols[i] = gs[i] = 1;
    rows[0] = d0;
    cols[1] = d1;
    for (int i = 2; i < nd; i++) gs[i] = X.shape.d[i];
    GVal diag = op2(B, OP_EQ, reshape_dims(B, arange_i64(B, 0, d0), nd, rows), reshape_dims(B, arange_i64(B, 0, d1), nd, cols));
    give(g, 0, where(B, diag, reshape_dims(B, GY, nd, gs), gb_num(0)));
    return done(g);
}
/* outer(a, b) of the flattened operands: ga = gy @ b, gb = a @ gy. */
static GVal flat(GradBuilder *b, GVal v) { return v.is_num ? v : gb_unary(b, OP_FLATTEN, v); }
static int r_outer(GradCtx *g) {
    GVal a = g->x[0], bb = g->x[1];
    if (g->needs[0]) {
        Shape s = shape_val(a);
        give(g, 0, gb_reshape(B, bb.is_num ? gb_mul(B, gb_unary(B, OP_FLATTEN, GY), bb) : op2(B, OP_MATMUL, GY, flat(B, bb)), &s));
    }
    if (g->needs[1]) {
        Shape s = shape_val(bb);
        give(g, 1, gb_reshape(B, a.is_num ? gb_mul(B, gb_unary(B, OP_FLATTEN, GY), a) : op2(B, OP_MATMUL, flat(B, a), GY), &s));
    }
    return done(g);
}
/* dot: a product with a 0-d (or number) operand, else matmul of 1-D and 2-D operands. */
static int r_dot(GradCtx *g) {
    GVal a = g->x[0], bb = g->x[1];
    if (a.is_num || bb.is_num || a.shape.ndim == 0 || bb.shape.ndim == 0) return r_mul(g);
    return r_matmul(g);
}
/* solve: x = a^-1 b; gb = solve(a^T, g), ga = -gb x^T (a vector b as an [n, 1] matrix). */
static int r_solve(GradCtx *g) {
    GVal a = g->x[0], bb = g->x[1];
    bool vec = bb.shape.ndim == 1;
    GVal gy = vec ? expand_last(B, GY) : GY, x = vec ? expand_last(B, g->y) : g->y;
    GVal gbm = op2(B, OP_SOLVE, gb_swap_last(B, a), gy);
    if (g->needs[0]) give(g, 0, gb_neg(B, op2(B, OP_MATMUL, gbm, gb_swap_last(B, x))));
    if (g->needs[1]) give(g, 1, vec ? squeeze_last(B, gbm) : gbm);
    return done(g);
}
/* inv: y = a^-1, ga = -y^T g y^T. */
static int r_inv(GradCtx *g) {
    GVal yt = gb_swap_last(B, g->y);
    give(g, 0, gb_neg(B, op2(B, OP_MATMUL, op2(B, OP_MATMUL, yt, GY), yt)));
    return done(g);
}
/* det: ga = g det(a) inv(a)^T (a singular a fails in inv). */
static int r_det(GradCtx *g) {
    GVal s = gb_mul(B, GY, g->y);
    s = expand_last(B, expand_last(B, s));
    give(g, 0, gb_mul(B, s, gb_swap_last(B, gb_unary(B, OP_INV, X))));
    return done(g);
}

/* cholesky reads a's lower triangle (LAPACK potrf "L"). With L the result, S the symmetric
 * gradient sym(L^-T phi(L^T g) L^-1) (phi: the lower triangle, its diagonal halved; PyTorch's
 * formula), an element below the diagonal stands for both of its symmetric places and gets
 * 2 S, the diagonal S, the unread upper triangle 0. */
static int r_cholesky(GradCtx *g) {
    int nd = X.shape.ndim;
    int64_t n = X.shape.d[nd - 1], rows[TSL_MAX_RANK], cols[TSL_MAX_RANK];
    for (int i = 0; i < nd; i++) rows[i] = cols[i] = 1;
    rows[nd - 2] = cols[nd - 1] = n;
    GVal r = reshape_dims(B, arange_i64(B, 0, n), nd, rows), c = reshape_dims(B, arange_i64(B, 0, n), nd, cols);
    GVal below = op2(B, OP_GT, r, c), diag = op2(B, OP_EQ, r, c);
    GVal lt = gb_swap_last(B, g->y);
    GVal m = op2(B, OP_MATMUL, lt, GY);
    GVal phi = where(B, below, m, where(B, diag, gb_mul(B, m, gb_num(0.5)), gb_num(0)));
    GVal z = op2(B, OP_SOLVE, lt, phi);
    GVal s0 = gb_swap_last(B, op2(B, OP_SOLVE, lt, gb_swap_last(B, z)));
    GVal sym = gb_add(B, s0, gb_swap_last(B, s0));   /* 2 S */
    give(g, 0, where(B, below, sym, where(B, diag, gb_mul(B, sym, gb_num(0.5)), gb_num(0))));
    return done(g);
}


/* The lower-triangle convention of the symmetric-input decompositions (cholesky, eigh read
 * a's lower triangle): an element below the diagonal stands for both symmetric places and
 * gets 2 S, the diagonal S, the unread upper triangle 0, for S the symmetric gradient. */
static GVal lower_of_symmetric(GradBuilder *b, GVal s2, int nd, int64_t n) {   /* s2 = 2 S */
    int64_t rows[TSL_MAX_RANK], cols[TSL_MAX_RANK];
    for (int i = 0; i < nd; i++) rows[i] = cols[i] = 1;
    rows[nd - 2] = cols[nd - 1] = n;
    GVal r = reshape_dims(b, arange_i64(b, 0, n), nd, rows), c = reshape_dims(b, arange_i64(b, 0, n), nd, cols);
    GVal below = op2(b, OP_GT, r, c), diag = op2(b, OP_EQ, r, c);
    return where(b, below, s2, where(b, diag, gb_mul(b, s2, gb_num(0.5)), gb_num(0)));
}

/* eigh: a = V diag(w) V^T (values ascending). Result 0 (w): S = V diag(gw) V^T; result 1
 * (V): S = sym(V (F o V^T gV) V^T), F[i][j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it.
 * The rule of each result recomputes the decomposition (the same LAPACK call, the same bits). */
static int r_eigh(GradCtx *g) {
    int nd = X.shape.ndim;
    int64_t n = X.shape.d[nd - 1];
    GVal w = gb_op_result(B, OP_EIGH, &g->x[0], 1, NULL, 0), v = gb_op_result(B, OP_EIGH, &g->x[0], 1, NULL, 1);
    GVal vt = gb_swap_last(B, v), s2;
    if (g->k == 0) {
        GVal m = op2(B, OP_MATMUL, gb_mul(B, v, expand_at(B, GY, -2)), vt);   /* V diag(gw) V^T */
        s2 = gb_add(B, m, gb_swap_last(B, m));
    } else {
        GVal e = gb_sub(B, expand_at(B, w, -2), expand_last(B, w));            /* w[j] - w[i] */
        int64_t rows[TSL_MAX_RANK], cols[TSL_MAX_RANK];
        for (int i = 0; i < nd; i++) rows[i] = cols[i] = 1;
        rows[nd - 2] = cols[nd - 1] = n;
        GVal diag = op2(B, OP_EQ, reshape_dims(B, arange_i64(B, 0, n), nd, rows), reshape_dims(B, arange_i64(B, 0, n), nd, cols));
        GVal f = where(B, diag, gb_num(0), gb_div(B, gb_num(1), e));
        GVal x = op2(B, OP_MATMUL, op2(B, OP_MATMUL, v, gb_mul(B, f, op2(B, OP_MATMUL, vt, GY))), vt);
        s2 = gb_add(B, x, gb_swap_last(B, x));
    }
    give(g, 0, lower_of_symmetric(B, s2, nd, n));
    return done(g);
}

/* qr (reduced, rows >= columns): a = Q R. With M = R gR^T - gQ^T Q and copyltu(M) its lower
 * triangle mirrored up, ga = (gQ + Q copyltu(M)) R^-T (PyTorch's formula); the result's
 * rule takes its own part (gQ or gR zero). Wide matrices have no rule yet. */
static int r_qr(GradCtx *g) {
    int nd = X.shape.ndim;
    int64_t m = X.shape.d[nd - 2], n = X.shape.d[nd - 1];
    if (m < n) {
        op_failk(ERRK_VALUE, "no gradient for qr of a matrix with more columns than rows yet");
        return -1;
    }
    GVal q = gb_op_result(B, OP_QR, &g->x[0], 1, NULL, 0), r = gb_op_result(B, OP_QR, &g->x[0], 1, NULL, 1);
    GVal mm = g->k == 0 ? gb_neg(B, op2(B, OP_MATMUL, gb_swap_last(B, GY), q)) : op2(B, OP_MATMUL, r, gb_swap_last(B, GY));
    int64_t rows[TSL_MAX_RANK], cols[TSL_MAX_RANK];
    for (int i = 0; i < nd; i++) rows[i] = cols[i] = 1;
    rows[nd - 2] = cols[nd - 1] = n;
    GVal ri = reshape_dims(B, arange_i64(B, 0, n), nd, rows), ci = reshape_dims(B, arange_i64(B, 0, n), nd, cols);
    GVal low = where(B, op2(B, OP_GT, ri, ci), mm, gb_num(0));
    GVal copyltu = gb_add(B, gb_add(B, low, gb_swap_last(B, low)), where(B, op2(B, OP_EQ, ri, ci), mm, gb_num(0)));
    GVal lhs = op2(B, OP_MATMUL, q, copyltu);
    if (g->k == 0) lhs = gb_add(B, GY, lhs);
    /* lhs R^-T = (R^-1 lhs^T)^T */
    give(g, 0, gb_swap_last(B, op2(B, OP_SOLVE, r, gb_swap_last(B, lhs))));
    return done(g);
}


/* svd (reduced): a = U diag(s) Vt, k = min(m, n) singular values, distinct and non-zero. With
 * E[i][j] = s[j]^2 - s[i]^2 off the diagonal (1 on it) and skew(X) = X - X^T (PyTorch's
 * formula), each result's rule gives its own part:
 *   s:  U diag(gs) Vt
 *   U:  U ((skew(U^T gU) / E) diag(s)) Vt + (gU - U U^T gU) diag(1/s) Vt
 *   Vt: U (diag(s) (skew(V^T gV) / E)) Vt + U diag(1/s) (gV^T - gV^T V V^T), gV = gVt^T */
static int r_svd(GradCtx *g) {
    int nd = X.shape.ndim;
    GVal u = gb_op_result(B, OP_SVD, &g->x[0], 1, NULL, 0), sv = gb_op_result(B, OP_SVD, &g->x[0], 1, NULL, 1);
    GVal vt = gb_op_result(B, OP_SVD, &g->x[0], 1, NULL, 2);
    int64_t k = sv.ok ? sv.shape.d[sv.shape.ndim - 1] : 0;
    GVal row = expand_at(B, sv, -2);                       /* s as [..., 1, k]: scales columns */
    GVal inner;
    if (g->k == 1) {
        inner = gb_mul(B, u, expand_at(B, GY, -2));
        give(g, 0, op2(B, OP_MATMUL, inner, vt));
        return done(g);
    }
    int64_t rows[TSL_MAX_RANK], cols[TSL_MAX_RANK];
    for (int i = 0; i < nd; i++) rows[i] = cols[i] = 1;
    rows[nd - 2] = cols[nd - 1] = k;
    GVal diag = op2(B, OP_EQ, reshape_dims(B, arange_i64(B, 0, k), nd, rows), reshape_dims(B, arange_i64(B, 0, k), nd, cols));
    GVal s2 = gb_mul(B, sv, sv);
    GVal e = where(B, diag, gb_num(1), gb_sub(B, expand_at(B, s2, -2), expand_last(B, s2)));
    if (g->k == 0) {   /* gU */
        GVal utg = op2(B, OP_MATMUL, gb_swap_last(B, u), GY);
        GVal core = gb_mul(B, gb_div(B, gb_sub(B, utg, gb_swap_last(B, utg)), e), row);
        GVal rest = gb_div(B, gb_sub(B, GY, op2(B, OP_MATMUL, u, utg)), row);
        give(g, 0, op2(B, OP_MATMUL, gb_add(B, op2(B, OP_MATMUL, u, core), rest), vt));
    } else {           /* gVt */
        GVal v = gb_swap_last(B, vt), gv = gb_swap_last(B, GY);
        GVal vtg = op2(B, OP_MATMUL, vt, gv);
        GVal core = gb_mul(B, expand_last(B, sv), gb_div(B, gb_sub(B, vtg, gb_swap_last(B, vtg)), e));
        GVal rest = gb_div(B, gb_sub(B, GY, op2(B, OP_MATMUL, op2(B, OP_MATMUL, GY, v), vt)), expand_last(B, sv));
        give(g, 0, gb_add(B, op2(B, OP_MATMUL, op2(B, OP_MATMUL, u, core), vt), op2(B, OP_MATMUL, u, rest)));
    }
    return done(g);
}

/* The flat positions, in a tensor of shape s, of the box starting at start[] with lens[]
 * elements along each axis: sum over axes of arange(start, start + len) * stride. */
static GVal box_positions(GradBuilder *b, const Shape *s, const int64_t *start, const int64_t *lens) {
    int nd = s->ndim;
    int64_t stride = 1, d[TSL_MAX_RANK];
    GVal pos = gb_num(0);
    for (int i = nd - 1; i >= 0; i--) {
        for (int j = 0; j < nd; j++) d[j] = j == i ? lens[i] : 1;
        GVal r = reshape_dims(b, arange_i64(b, start[i], start[i] + lens[i]), nd, d);
        pos = gb_add(b, pos, stride == 1 ? r : gb_mul(b, r, gb_num((double)stride)));
        stride *= s->d[i];
    }
    return nd ? pos : arange_i64(b, 0, 1);
}
static GVal take(GradBuilder *b, GVal v, GVal pos) { return op2(b, OP_TAKE, v, pos); }
/* concat / stack: each operand's gradient is its block of gy. */
static int r_join(GradCtx *g) {
    const Shape *s = &GY.shape;
    int ax = axis_of(g->c->at->axis, s->ndim);
    int64_t start[TSL_MAX_RANK] = { 0 }, lens[TSL_MAX_RANK];
    for (int i = 0; i < s->ndim; i++) lens[i] = s->d[i];
    for (int k = 0; k < g->c->nin; k++) {
        int64_t len = g->c->op == OP_STACK ? 1 : g->x[k].shape.d[ax];
        if (g->needs[k]) {
            lens[ax] = len;
            Shape xs = shape_val(g->x[k]);
            give(g, k, gb_reshape(B, take(B, GY, box_positions(B, s, start, lens)), &xs));
        }
        start[ax] += len;
    }
    return done(g);
}
/* pad: t's gradient is the inner block of gy; a tensor value gets the sum over the padding. */
static int r_pad(GradCtx *g) {
    const Shape *s = &GY.shape;
    int64_t start[TSL_MAX_RANK], lens[TSL_MAX_RANK];
    const OpAttrs *at = g->c->at;
    for (int i = 0; i < s->ndim; i++) {
        start[i] = at->pairs[at->npairs == 1 ? 0 : i][0];
        lens[i] = X.shape.d[i];
    }
    GVal inner = take(B, GY, box_positions(B, s, start, lens));
    give(g, 0, inner);
    if (g->c->nin > 1 && g->needs[1]) {
        Shape vs = shape_val(g->x[1]);
        give(g, 1, gb_reshape(B, gb_sub(B, gb_unary(B, OP_SUM, GY), gb_unary(B, OP_SUM, inner)), &vs));
    }
    return done(g);
}
/* sort / topk values: y[..., j, ...] = x[..., perm[j], ...] with perm from argsort (the same
 * stable order; topk's is descending, ties lower index first), so gy goes back to x's
 * positions base + perm * stride. */
static GVal sorted_positions(GradBuilder *b, const Shape *xs, int ax, GVal perm) {
    int64_t start[TSL_MAX_RANK] = { 0 }, lens[TSL_MAX_RANK], stride = 1;
    for (int i = 0; i < xs->ndim; i++) lens[i] = xs->d[i];
    for (int i = ax + 1; i < xs->ndim; i++) stride *= xs->d[i];
    lens[ax] = 1;
    return gb_add(b, box_positions(b, xs, start, lens), gb_mul(b, perm, gb_num((double)stride)));
}
static int r_sort(GradCtx *g) {
    if (X.shape.ndim == 0) { give(g, 0, GY); return done(g); }
    Shape xs = shape_val(X);
    int ax = axis_of(g->c->at->axis, xs.ndim);
    GVal perm;
    if (g->c->op == OP_SORT) {
        perm = gb_op(B, OP_ARGSORT, &g->x[0], 1, g->c->at);
    } else {
        OpAttrs at = attrs_default();
        at.axis = g->c->at->axis;
        at.flag = true;
        GVal all = gb_op(B, OP_ARGSORT, &g->x[0], 1, &at);
        int64_t start[TSL_MAX_RANK] = { 0 }, lens[TSL_MAX_RANK];
        for (int i = 0; i < xs.ndim; i++) lens[i] = xs.d[i];
        lens[ax] = g->y.shape.d[ax];
        perm = take(B, all, box_positions(B, &xs, start, lens));
    }
    GVal in[3] = { gb_zeros_like(B, X), sorted_positions(B, &xs, ax, perm), GY };
    give(g, 0, gb_op(B, OP_SCATTER_ADD, in, 3, NULL));
    return done(g);
}

/* take: the gradient goes back to the positions read, repeats accumulating (the backward of
 * indexing, lang/autograd.c). */
static int r_take(GradCtx *g) {
    if (g->needs[0]) {
        GVal in[3] = { gb_zeros_like(B, X), g->x[1], GY };
        give(g, 0, gb_op(B, OP_SCATTER_ADD, in, 3, NULL));
    }
    return done(g);
}
/* scaled_dot_product_attention, from the probabilities p recomputed with ops (attention.c):
 * dv = p^T g, dp = g v^T, ds = p * (dp - sum(dp * p)), dq = ds k * scale, dk = ds^T q * scale,
 * and a float mask gets ds. */
static int r_sdpa(GradCtx *g) {
    GVal q = g->x[0], k = g->x[1], v = g->x[2];
    GVal mask = g->c->nin > 3 ? g->x[3] : gb_none();
    GVal p = attn_probs(B, q, k, mask, g->c->at->flag);
    if (g->needs[2]) give(g, 2, matmul_ta(B, p, GY));   /* p^T, v^T and ds^T never copied */
    GVal dp = matmul_t(B, GY, false, v, true);
    GVal ds = gb_mul(B, p, gb_sub(B, dp, reduce_kept(B, OP_SUM, gb_mul(B, dp, p), -1)));
    GVal scale = gb_num(attn_scale(q.shape.d[q.shape.ndim - 1]));
    if (g->needs[0]) give(g, 0, gb_mul(B, op2(B, OP_MATMUL, ds, k), scale));
    if (g->needs[1]) give(g, 1, gb_mul(B, matmul_ta(B, ds, q), scale));
    if (g->c->nin > 3 && g->needs[3] && mask.ok && dtype_is_float(mask.dtype)) give(g, 3, ds);
    return done(g);
}

/* scatter_add: t's gradient is g itself, v's the gradient at the positions (summed to a
 * one-element v). */
static int r_scatter_add(GradCtx *g) {
    if (g->needs[0]) give(g, 0, GY);
    if (g->needs[2]) {
        GVal in[2] = { GY, g->x[1] };
        GVal gv = gb_op(B, OP_TAKE, in, 2, NULL);
        if (gv_size(g->x[2]) == 1 && gv_size(g->x[1]) != 1) gv = gb_op(B, OP_SUM, &gv, 1, NULL);
        Shape s = shape_val(g->x[2]);
        give(g, 2, gb_reshape(B, gv, &s));
    }
    return done(g);
}

/* full(shape, value): every element is the value, so it gets the sum of gy. */
static int r_full(GradCtx *g) {
    if (g->needs[0]) {
        Shape s = shape_val(X);
        give(g, 0, gb_reshape(B, gb_unary(B, OP_SUM, GY), &s));
    }
    return done(g);
}

/* ---------- convolution and pooling (ops/conv.h) ----------
 * conv2d's x gradient is the transposed convolution of gy (the same strides, dilation and
 * padding, output_padding restoring x's size), w's conv2d_weight_grad, b's gy summed over
 * the batch and the positions. conv1d goes through the 2-D ops with a height of one. The
 * transposed convolution's gradients are the same ops the other way round. */
static GVal as_4d(GradBuilder *b, GVal v) {
    if (v.shape.ndim != 3) return v;
    Shape s = { 4, { v.shape.d[0], v.shape.d[1], 1, v.shape.d[2] } };
    return gb_reshape(b, v, &s);
}
static GVal like(GradBuilder *b, GVal v, GVal as) {
    Shape s = shape_val(as);
    return v.ok && v.shape.ndim != s.ndim ? gb_reshape(b, v, &s) : v;
}
/* The attributes of op with cg's window. */
static OpAttrs window_attrs(OpCode op, const ConvGeom *cg) {
    OpAttrs at = conv_attrs(op);
    conv_set_win(&at, op, "stride", cg->sh, cg->sw);
    conv_set_win(&at, op, "dilation", cg->dh, cg->dw);
    conv_set_pad(&at, op, cg->pt, cg->pb, cg->pl, cg->pr);
    at.i[0] = cg->groups;
    return at;
}
/* conv2d(x, w) with cg's window: the output side from the input side */
static GVal conv_fwd(GradBuilder *b, const ConvGeom *cg, GVal x, GVal w) {
    OpAttrs at = window_attrs(OP_CONV2D, cg);
    GVal in[2] = { x, w };
    return gb_op(b, OP_CONV2D, in, 2, &at);
}
/* the input side from the output side v: the transposed convolution sized to cg's input */
static GVal conv_back(GradBuilder *b, const ConvGeom *cg, GVal v, GVal w) {
    OpAttrs at = window_attrs(OP_CONV_TRANSPOSE2D, cg);
    int64_t oph = (cg->h + cg->pt + cg->pb - cg->dh * (cg->kh - 1) - 1) % cg->sh;
    int64_t opw = (cg->w + cg->pl + cg->pr - cg->dw * (cg->kw - 1) - 1) % cg->sw;
    conv_set_win(&at, OP_CONV_TRANSPOSE2D, "output_padding", oph, opw);
    GVal in[2] = { v, w };
    return gb_op(b, OP_CONV_TRANSPOSE2D, in, 2, &at);
}
/* the weight's gradient from the input side x and the output side's gradient v */
static GVal conv_wgrad(GradBuilder *b, const ConvGeom *cg, GVal x, GVal v) {
    OpAttrs at = window_attrs(OP_CONV2D_WEIGHT_GRAD, cg);
    conv_set_win(&at, OP_CONV2D_WEIGHT_GRAD, "kernel_size", cg->kh, cg->kw);
    GVal in[2] = { x, v };
    return gb_op(b, OP_CONV2D_WEIGHT_GRAD, in, 2, &at);
}
static GVal bias_grad(GradBuilder *b, GVal gy) {
    OpAttrs at = attrs_default();
    at.naxes = gy.shape.ndim - 1;
    for (int k = 0; k < at.naxes; k++) at.axes[k] = k == 0 ? 0 : k + 1;
    at.flag = false;
    return gb_op(b, OP_SUM, &gy, 1, &at);
}
static int r_conv(GradCtx *g) {
    ConvGeom cg;
    if (conv_geom(g->c, &cg)) return -1;
    GVal x = as_4d(B, X), w = as_4d(B, g->x[1]), gy = as_4d(B, GY);
    if (g->needs[0]) give(g, 0, like(B, conv_back(B, &cg, gy, w), X));
    if (g->needs[1]) give(g, 1, like(B, conv_wgrad(B, &cg, x, gy), g->x[1]));
    if (g->c->nin > 2 && g->needs[2]) give(g, 2, bias_grad(B, GY));
    return done(g);
}
static int r_conv_transpose(GradCtx *g) {
    ConvGeom cg;
    if (conv_geom(g->c, &cg)) return -1;
    if (g->needs[0]) give(g, 0, conv_fwd(B, &cg, GY, g->x[1]));
    if (g->needs[1]) give(g, 1, conv_wgrad(B, &cg, GY, X));
    if (g->c->nin > 2 && g->needs[2]) give(g, 2, bias_grad(B, GY));
    return done(g);
}
/* conv2d_weight_grad(x, gy) is bilinear: <gw, wg(x, gy)> = <conv2d(x, gw), gy> */
static int r_conv_weight_grad(GradCtx *g) {
    ConvGeom cg;
    if (conv_geom(g->c, &cg)) return -1;
    if (g->needs[0]) give(g, 0, conv_back(B, &cg, g->x[1], GY));
    if (g->needs[1]) give(g, 1, conv_fwd(B, &cg, X, GY));
    return done(g);
}
/* The pools' gradients are their backward rows, with the forward's windows; those rows
 * are linear in gy (avg: their gradient is the pool itself) and read x only for its shape. */
static OpAttrs pool_attrs(OpCode op, const OpAttrs *from) {
    OpAttrs at = conv_attrs(op);
    memcpy(at.pairs, from->pairs, sizeof at.pairs);
    at.npairs = from->npairs;
    return at;
}
static int r_pool(GradCtx *g) {
    OpCode back = g->c->op == OP_MAX_POOL2D ? OP_MAX_POOL2D_BACKWARD
                : g->c->op == OP_AVG_POOL2D ? OP_AVG_POOL2D_BACKWARD : OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    OpAttrs at = pool_attrs(back, g->c->at);
    GVal in[2] = { X, GY };
    give(g, 0, gb_op(B, back, in, 2, &at));
    return done(g);
}
static int r_pool_backward(GradCtx *g) {
    give(g, 0, gb_zeros_like(B, X));
    if (g->needs[1]) {
        OpCode fwd = g->c->op == OP_AVG_POOL2D_BACKWARD ? OP_AVG_POOL2D : OP_ADAPTIVE_AVG_POOL2D;
        OpAttrs at = pool_attrs(fwd, g->c->at);
        if (fwd == OP_ADAPTIVE_AVG_POOL2D) conv_set_win(&at, fwd, "output_size", g->x[1].shape.d[2], g->x[1].shape.d[3]);
        give(g, 1, gb_op(B, fwd, &g->gy, 1, &at));
    }
    return done(g);
}

/* ---------- neural-network activations (issue 28): PyTorch's derivatives ---------- */
#define M_2_SQRTPI_ 1.12837916709551257390   /* 2 / sqrt(pi) */
static GVal gauss(GradBuilder *b, GVal x, double k) {   /* exp(-k x^2) */
    return gb_unary(b, OP_EXP, gb_mul(b, gb_num(-k), sq(b, x)));
}
static int r_erf(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_mul(B, gb_num(M_2_SQRTPI_), gauss(B, X, 1)))); return done(g); }
static int r_erfc(GradCtx *g) { give(g, 0, gb_mul(B, GY, gb_mul(B, gb_num(-M_2_SQRTPI_), gauss(B, X, 1)))); return done(g); }
static int r_gelu(GradCtx *g) {   /* Phi(x) + x phi(x) */
    GVal cdf = gb_mul(B, gb_num(0.5), gb_add(B, gb_num(1), gb_unary(B, OP_ERF, gb_mul(B, X, gb_num(M_SQRT1_2)))));
    GVal pdf = gb_mul(B, gb_num(0.5 * M_2_SQRTPI_ * M_SQRT1_2), gauss(B, X, 0.5));
    give(g, 0, gb_mul(B, GY, gb_add(B, cdf, gb_mul(B, X, pdf))));
    return done(g);
}
static int r_gelu_tanh(GradCtx *g) {   /* 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2) */
    const double k = M_SQRT2 * M_2_SQRTPI_ * 0.5, kc = 0.044715;
    GVal x2 = sq(B, X);
    GVal inner = gb_mul(B, gb_num(k), gb_add(B, X, gb_mul(B, gb_num(kc), gb_mul(B, x2, X))));
    GVal t = gb_unary(B, OP_TANH, inner);
    GVal left = gb_mul(B, gb_num(0.5), gb_add(B, gb_num(1), t));
    GVal dinner = gb_mul(B, gb_num(k), gb_add(B, gb_num(1), gb_mul(B, gb_num(3 * kc), x2)));
    GVal right = gb_mul(B, gb_mul(B, gb_num(0.5), X), gb_mul(B, gb_sub(B, gb_num(1), sq(B, t)), dinner));
    give(g, 0, gb_mul(B, GY, gb_add(B, left, right)));
    return done(g);
}
static int r_silu(GradCtx *g) {   /* s (1 + x (1 - s)) */
    GVal s = gb_unary(B, OP_SIGMOID, X);
    give(g, 0, gb_mul(B, GY, gb_mul(B, s, gb_add(B, gb_num(1), gb_mul(B, X, gb_sub(B, gb_num(1), s))))));
    return done(g);
}
/* leaky_relu and elu: x's gradient where x > 0 is g's; the parameter's, where x <= 0 */
static int r_leaky_relu(GradCtx *g) {
    GVal pos = op2(B, OP_GT, X, gb_num(0));
    if (g->needs[0]) give(g, 0, where(B, pos, GY, gb_mul(B, GY, g->x[1])));
    if (g->needs[1]) give(g, 1, where(B, pos, gb_num(0), gb_mul(B, GY, X)));
    return done(g);
}
static int r_elu(GradCtx *g) {   /* alpha e^x = y + alpha below 0 */
    GVal pos = op2(B, OP_GT, X, gb_num(0));
    if (g->needs[0]) give(g, 0, where(B, pos, GY, gb_mul(B, GY, gb_add(B, g->y, g->x[1]))));
    if (g->needs[1]) give(g, 1, where(B, pos, gb_num(0), gb_mul(B, GY, gb_unary(B, OP_EXPM1, X))));
    return done(g);
}
static int r_softplus(GradCtx *g) {   /* sigmoid(beta x), 1 past the threshold */
    GVal bx = gb_mul(B, X, gb_num(g->c->at->f[0]));
    give(g, 0, where(B, op2(B, OP_GT, bx, gb_num(g->c->at->f[1])), GY, gb_mul(B, GY, gb_unary(B, OP_SIGMOID, bx))));
    return done(g);
}

/* ---------- masked_fill, gather, scatter, cross_entropy (issue 28) ---------- */
static int r_masked_fill(GradCtx *g) {
    if (g->needs[0]) give(g, 0, where(B, g->x[1], gb_num(0), GY));
    if (g->needs[2]) give(g, 2, where(B, g->x[1], GY, gb_num(0)));   /* a tensor value: summed */
    return done(g);
}
/* gather and scatter along the call's axis (add: scatter's reduce="add") */
static GVal along(GradBuilder *b, OpCode op, const GradCtx *g, GVal x, GVal src, bool add) {
    OpAttrs at = attrs_default();
    at.axis = g->c->at->axis;
    at.i[0] = add;
    GVal in[3] = { x, g->x[1], src };
    return gb_op(b, op, in, op == OP_GATHER ? 2 : 3, &at);
}
static GVal zero_0d(GradBuilder *b, DType dt) {
    OpAttrs at = attrs_default();
    at.shape.ndim = 0;
    at.dtype = (int)dt;
    GVal v = gb_num(0);
    return gb_op(b, OP_FULL, &v, 1, &at);
}
static int r_gather(GradCtx *g) {
    if (g->needs[0]) give(g, 0, along(B, OP_SCATTER, g, gb_zeros_like(B, X), GY, true));
    return done(g);
}
/* scatter: x's gradient is g but where src was written; src's, g gathered at the index,
 * zero-padded to src's shape (or summed, for a 0-d src) */
static int r_scatter(GradCtx *g) {
    bool add = g->c->at->i[0] == 1;
    if (g->needs[0]) give(g, 0, add ? GY : along(B, OP_SCATTER, g, GY, zero_0d(B, X.dtype), false));
    if (g->needs[2]) {
        GVal gs = along(B, OP_GATHER, g, GY, gb_none(), false);
        Shape ss = shape_val(g->x[2]), is = shape_val(g->x[1]);
        if (ss.ndim) {
            OpAttrs at = attrs_default();
            at.npairs = ss.ndim;
            for (int d = 0; d < ss.ndim; d++) at.pairs[d][0] = 0, at.pairs[d][1] = ss.d[d] - is.d[d];
            GVal in[2] = { gs, gb_num(0) };
            gs = gb_op(B, OP_PAD, in, 2, &at);
        }
        give(g, 2, gs);
    }
    return done(g);
}
/* (softmax(x) - (1 - e) onehot(labels) - e / C) * g / N */
static int r_cross_entropy(GradCtx *g) {
    if (!g->needs[0]) return done(g);
    Shape s = shape_val(X);
    double e = g->c->at->f[0];
    OpAttrs oh = attrs_default();
    oh.i[0] = s.d[1];
    GVal hot = gb_astype(B, gb_op(B, OP_ONE_HOT, &g->x[1], 1, &oh), X.dtype);
    OpAttrs sm = attrs_default();
    sm.axis = 1;
    GVal p = gb_sub(B, gb_op(B, OP_SOFTMAX, &X, 1, &sm), gb_add(B, gb_mul(B, hot, gb_num(1 - e)), gb_num(e / (double)s.d[1])));
    give(g, 0, gb_mul(B, p, gb_div(B, GY, gb_num((double)s.d[0]))));
    return done(g);
}

/* ---------- normalizations (issue 28) ----------
 * With xhat = (x - mean) * rstd over a group and gh = g * weight: x's gradient is
 * rstd * (gh - mean(gh) - xhat * mean(gh * xhat)) (rms_norm: no mean(gh) term), weight's
 * the sum of g * xhat and bias's the sum of g over the other axes. */
static GVal over(GradBuilder *b, OpCode op, GVal v, const int *axes, int n, bool keep) {
    OpAttrs at = attrs_default();
    at.naxes = n;
    for (int i = 0; i < n; i++) at.axes[i] = axes[i];
    at.flag = keep;
    return gb_op(b, op, &v, 1, &at);
}
/* x's gradient and xhat, the groups over axes of x (already reshaped), gh given */
static GVal norm_back(GradBuilder *b, GVal x, GVal gh, const int *axes, int n, bool center, double eps, GVal *xhat) {
    GVal xc = center ? gb_sub(b, x, over(b, OP_MEAN, x, axes, n, true)) : x;
    GVal rstd = gb_div(b, gb_num(1), gb_unary(b, OP_SQRT, gb_add(b, over(b, OP_MEAN, sq(b, xc), axes, n, true), gb_num(eps))));
    *xhat = gb_mul(b, xc, rstd);
    GVal t = gb_sub(b, gh, gb_mul(b, *xhat, over(b, OP_MEAN, gb_mul(b, gh, *xhat), axes, n, true)));
    if (center) t = gb_sub(b, t, over(b, OP_MEAN, gh, axes, n, true));
    return gb_mul(b, rstd, t);
}
/* a per-channel [C] tensor as [C, 1, ...] against x of rank nd */
static GVal per_channel(GradBuilder *b, GVal v, int nd) {
    Shape s = { nd - 1, { 0 } };
    s.d[0] = v.shape.d[0];
    for (int i = 1; i < nd - 1; i++) s.d[i] = 1;
    return gb_reshape(b, v, &s);
}
/* the sum of v over every axis but 1, as [C] */
static GVal channel_sum(GradBuilder *b, GVal v) {
    int axes[TSL_MAX_RANK], n = 0;
    for (int i = 0; i < v.shape.ndim; i++)
        if (i != 1) axes[n++] = i;
    return over(b, OP_SUM, v, axes, n, false);
}
static bool has(const GradCtx *g, int k) { return k < g->c->nin && g->x[k].ok; }

static int r_layer_norm(GradCtx *g) {   /* layer_norm and rms_norm */
    bool rms = g->c->op == OP_RMS_NORM;
    int nd = X.shape.ndim, n = g->c->at->shape.ndim, axes[TSL_MAX_RANK];
    for (int i = 0; i < n; i++) axes[i] = nd - n + i;
    double eps = rms && !op_given(g->c, 3) ? (X.dtype == DT_F32 ? FLT_EPSILON : DBL_EPSILON) : g->c->at->f[0];
    GVal gh = has(g, 1) ? gb_mul(B, GY, g->x[1]) : GY, xhat;
    GVal gx = norm_back(B, X, gh, axes, n, !rms, eps, &xhat);
    if (g->needs[0]) give(g, 0, gx);
    if (has(g, 1) && g->needs[1]) give(g, 1, gb_mul(B, GY, xhat));
    if (!rms && has(g, 2) && g->needs[2]) give(g, 2, GY);
    return done(g);
}
static int r_group_norm(GradCtx *g) {
    Shape xs = shape_val(X), gs = { 3, { xs.d[0], g->c->at->i[0], 0 } };
    gs.d[2] = gs.d[1] && xs.d[0] ? shape_count(&xs) / (xs.d[0] * gs.d[1]) : 0;
    GVal gh = has(g, 1) ? gb_mul(B, GY, per_channel(B, g->x[1], xs.ndim)) : GY, xhat;
    int ax = 2;
    GVal gx = norm_back(B, gb_reshape(B, X, &gs), gb_reshape(B, gh, &gs), &ax, 1, true, g->c->at->f[0], &xhat);
    if (g->needs[0]) give(g, 0, gb_reshape(B, gx, &xs));
    if (has(g, 1) && g->needs[1]) give(g, 1, channel_sum(B, gb_mul(B, GY, gb_reshape(B, xhat, &xs))));
    if (has(g, 2) && g->needs[2]) give(g, 2, channel_sum(B, GY));
    return done(g);
}
static int r_batch_norm(GradCtx *g) {
    int nd = X.shape.ndim, axes[TSL_MAX_RANK], n = 0;
    for (int i = 0; i < nd; i++)
        if (i != 1) axes[n++] = i;
    double eps = g->c->at->f[1];
    GVal w = has(g, 3) ? per_channel(B, g->x[3], nd) : gb_num(1), gh = gb_mul(B, GY, w), xhat;
    if (g->c->at->flag) {   /* batch statistics; the running ones do not reach the result */
        GVal gx = norm_back(B, X, gh, axes, n, true, eps, &xhat);
        if (g->needs[0]) give(g, 0, gx);
        for (int k = 1; k <= 2; k++)
            if (has(g, k) && g->needs[k]) give(g, k, gb_zeros_like(B, g->x[k]));
    } else {   /* (x - rm) * rstd with rstd = 1 / sqrt(rv + eps) */
        GVal rstd = gb_div(B, gb_num(1), gb_unary(B, OP_SQRT, gb_add(B, per_channel(B, g->x[2], nd), gb_num(eps))));
        GVal xc = gb_sub(B, X, per_channel(B, g->x[1], nd));
        xhat = gb_mul(B, xc, rstd);
        GVal ghr = gb_mul(B, gh, rstd);
        if (g->needs[0]) give(g, 0, ghr);
        if (g->needs[1]) give(g, 1, gb_neg(B, channel_sum(B, ghr)));
        if (g->needs[2])   /* d rstd / d rv = -rstd^3 / 2 */
            give(g, 2, channel_sum(B, gb_mul(B, gb_mul(B, ghr, xc), gb_mul(B, sq(B, rstd), gb_num(-0.5)))));
    }
    if (has(g, 3) && g->needs[3]) give(g, 3, channel_sum(B, gb_mul(B, GY, xhat)));
    if (has(g, 4) && g->needs[4]) give(g, 4, channel_sum(B, GY));
    return done(g);
}

/* ---------- the collectives (spec section 11) ----------
 * As PyTorch's differentiable collectives (torch.distributed.nn): the loss is the sum of
 * every rank's, so an input gets the gradients that every rank's result received. Every rank
 * runs the same backward, so the collectives here meet in the same order on all of them; in
 * a world of one each rule is the identity. */
static GVal allreduce(GradBuilder *b, GVal v, RedOp op) {
    OpAttrs at = attrs_default();
    at.i[0] = op;
    return gb_op(b, OP_ALLREDUCE, &v, 1, &at);
}
/* sum: the gradients added over the ranks; mean: averaged; max/min: added, and shared evenly
 * by the elements equal to the result on every rank (as maximum's ties) */
static int r_allreduce(GradCtx *g) {
    RedOp op = (RedOp)g->c->at->i[0];
    if (op == REDOP_SUM || op == REDOP_MEAN) {
        give(g, 0, allreduce(B, GY, op));
        return done(g);
    }
    GVal hit = gb_astype(B, op2(B, OP_EQ, X, g->y), X.dtype);
    give(g, 0, gb_mul(B, allreduce(B, GY, REDOP_SUM), gb_div(B, hit, allreduce(B, hit, REDOP_SUM))));
    return done(g);
}
/* broadcast: the root's input gets every rank's gradient added; the others' get zeros */
static int r_broadcast(GradCtx *g) {
    GVal sum = allreduce(B, GY, REDOP_SUM);   /* every rank takes part */
    give(g, 0, dist_rank() == g->c->at->i[0] ? sum : gb_zeros_like(B, X));
    return done(g);
}
/* allgather: this rank's slice (row `rank` of axis 0) of the gradients added over the ranks */
static int r_allgather(GradCtx *g) {
    GVal sum = allreduce(B, GY, REDOP_SUM);
    OpAttrs at = attrs_default();
    at.shape = shape_val(sum);
    at.shape.d[0] = 1;
    at.dtype = DT_I64;
    GVal rank = gb_num(dist_rank());
    OpAttrs ax = attrs_default();
    ax.axis = 0;
    GVal in[2] = { sum, gb_op(B, OP_FULL, &rank, 1, &at) };
    Shape s = shape_val(X);
    give(g, 0, gb_reshape(B, gb_op(B, OP_GATHER, in, 2, &ax), &s));
    return done(g);
}

/* The one list of rules, keyed by op id. */
#define RULES(X_)                                                                                   \
    X_(NEG, r_neg) X_(ABS, r_abs) X_(EXP, r_exp) X_(EXPM1, r_expm1) X_(LOG, r_log) X_(LOG2, r_log2)    \
    X_(LOG10, r_log10) X_(LOG1P, r_log1p) X_(SQRT, r_sqrt) X_(SIN, r_sin) X_(COS, r_cos) X_(TAN, r_tan) \
    X_(ASIN, r_asin) X_(ACOS, r_acos) X_(ATAN, r_atan) X_(ASINH, r_asinh) X_(ACOSH, r_acosh)          \
    X_(ATANH, r_atanh) X_(ATAN2, r_atan2) X_(VAR, r_var) X_(STD, r_std) X_(NORM, r_norm)               \
    X_(CUMSUM, r_cumsum) X_(SOFTSIGN, r_softsign)                                                     \
    X_(SINH, r_sinh) X_(COSH, r_cosh) X_(TANH, r_tanh) X_(SIGMOID, r_sigmoid) X_(RELU, r_relu)        \
    X_(FLOOR, r_zero) X_(CEIL, r_zero) X_(ROUND, r_zero) X_(SIGN, r_zero)                             \
    X_(ADD, r_add) X_(SUB, r_sub) X_(MUL, r_mul) X_(DIV, r_div) X_(POW, r_pow)                        \
    X_(MAXIMUM, r_maximum) X_(MINIMUM, r_minimum) X_(WHERE, r_where) X_(ASTYPE, r_astype)             \
    X_(SUM, r_sum) X_(MEAN, r_mean) X_(MAX, r_max) X_(MIN, r_max) X_(LOGSUMEXP, r_logsumexp)          \
    X_(SOFTMAX, r_softmax) X_(LOG_SOFTMAX, r_log_softmax) X_(MATMUL, r_matmul)                        \
    X_(RESHAPE, r_reshape) X_(FLATTEN, r_reshape) X_(EXPAND_DIMS, r_reshape) X_(SQUEEZE, r_reshape)   \
    X_(TRANSPOSE, r_transpose) X_(BROADCAST_TO, r_broadcast_to)                                     \
    X_(EXP2, r_exp2) X_(MOD, r_mod) X_(FLOOR_DIVIDE, r_zero) X_(CLIP, r_clip) X_(PROD, r_prod)        \
    X_(CUMPROD, r_cumprod) X_(DIFF, r_diff) X_(TILE, r_tile) X_(REPEAT, r_repeat) X_(TRACE, r_trace)  \
    X_(OUTER, r_outer) X_(DOT, r_dot) X_(SOLVE, r_solve) X_(INV, r_inv) X_(DET, r_det)   \
    X_(TAKE, r_take) X_(SCATTER_ADD, r_scatter_add) X_(CONCAT, r_join) X_(STACK, r_join) X_(PAD, r_pad)  \
    X_(SORT, r_sort) X_(TOPK, r_sort) X_(FULL, r_full) X_(SDPA, r_sdpa) X_(CHOLESKY, r_cholesky) X_(EIGH, r_eigh) X_(QR, r_qr) X_(SVD, r_svd) \
    X_(CONV1D, r_conv) X_(CONV2D, r_conv) X_(CONV_TRANSPOSE2D, r_conv_transpose) X_(CONV2D_WEIGHT_GRAD, r_conv_weight_grad) \
    X_(MAX_POOL2D, r_pool) X_(AVG_POOL2D, r_pool) X_(ADAPTIVE_AVG_POOL2D, r_pool) \
    X_(AVG_POOL2D_BACKWARD, r_pool_backward) X_(ADAPTIVE_AVG_POOL2D_BACKWARD, r_pool_backward) \
    X_(ERF, r_erf) X_(ERFC, r_erfc) X_(GELU, r_gelu) X_(GELU_TANH, r_gelu_tanh) X_(SILU, r_silu)         \
    X_(LEAKY_RELU, r_leaky_relu) X_(ELU, r_elu) X_(SOFTPLUS, r_softplus) X_(MASKED_FILL, r_masked_fill)     \
    X_(GATHER, r_gather) X_(SCATTER, r_scatter) X_(CROSS_ENTROPY, r_cross_entropy)                          \
    X_(LAYER_NORM, r_layer_norm) X_(RMS_NORM, r_layer_norm) X_(GROUP_NORM, r_group_norm) X_(BATCH_NORM, r_batch_norm) \
    X_(ALLREDUCE, r_allreduce) X_(BROADCAST, r_broadcast) X_(ALLGATHER, r_allgather)

void grad_table_init(void) {
#define SET_RULE(id, fn) op_info[OP_##id].backward = fn;
    RULES(SET_RULE)
#undef SET_RULE
}

bool grad_has_rule(OpCode op) { return op_info[op].backward != NULL; }

int grad_backward(GradCtx *g) {
    BackwardFn fn = op_info[g->c->op].backward;
    if (g->k > 0 && g->c->op != OP_EIGH && g->c->op != OP_QR && g->c->op != OP_SVD) {   /* rules of results after the first */
        op_failk(ERRK_VALUE, "no gradient for result %d of %s yet", g->k + 1, op_info[g->c->op].name);
        return -1;
    }
    if (!fn) {
        op_failk(ERRK_VALUE, "no gradient for %s yet", op_info[g->c->op].name);
        return -1;
    }
    return fn(g);
}
