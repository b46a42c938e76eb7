/* kernels.c - the CPU device: the kernel of every op family of ops.def, and the CPU's
 * entry in the device registry (ops/op.c dispatches here).
 *
 * Operands arrive validated and inferred (op_infer ran); numbers are weak scalars that are
 * converted straight into the compute dtype, so `i64 / -0.0` divides by -0.0, not by 0.
 * Every kernel writes into the result tensors it is given (the static VM's reused buffers). */
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "infer.h"
#include "mem.h"
#include "pool.h"

int cpu_round_decimals(DType dt, const void *src, void *dst, int64_t n, int64_t decimals);
int cpu_compare_i64_number(OpCode op, const int64_t *a, double x, bool num_left, uint8_t *out, int64_t n);


const Tensor *operand_as(const OpArg *a, DType dt, Tensor **tmp, ScalarBox *box) {
    *tmp = NULL;
    if (a->kind == ARG_NUM) {
        memset(box, 0, sizeof *box);
        box->buf = (TBuf){ 1, sizeof box->storage, &box->storage, DEV_CPU };
        box->t.rc = 1;
        box->t.dtype = dt;
        box->t.size = 1;
        box->t.buf = &box->buf;
        box->t.data = &box->storage;
        tensor_set(&box->t, 0, a->x);
        return &box->t;
    }
    if (a->t->dtype == dt) return a->t;
    return *tmp = op_astype(a->t, dt);
}

/* The first two operands in dtype dt (pair.a, pair.b; NULL if a conversion failed). */
typedef struct {
    const Tensor *a, *b;
    Tensor *tmp[2];
    ScalarBox box[2];
} Pair;

static bool pair_as(const OpCall *c, DType dt, Pair *p) {
    p->a = operand_as(&c->in[0], dt, &p->tmp[0], &p->box[0]);
    p->tmp[1] = NULL;
    p->b = p->a ? operand_as(&c->in[1], dt, &p->tmp[1], &p->box[1]) : NULL;
    return p->a && p->b;
}

static void pair_free(Pair *p) {
    tensor_release(p->tmp[0]);
    tensor_release(p->tmp[1]);
}

/* ---------- elementwise ---------- */

/* Whether an elementwise op computes in its result's dtype when its tensor operands already
 * have that dtype (the common case, decided without the promotion rule). */
static bool computes_in_result(const OpCall *c, DType rt) {
    DtypeRule rule = op_info[c->op].dtype_rule;
    if (rule != DR_SAME && rule != DR_PROMOTE && rule != DR_FLOAT && rule != DR_INT) return false;
    if (rule == DR_FLOAT && !dtype_is_float(rt)) return false;
    for (int k = 0; k < c->nin; k++)
        if (c->in[k].kind != ARG_TENSOR || c->in[k].dtype != rt) return false;
    return true;
}

int cpu_ew1(const OpCall *c, Tensor **out) {
    DType ct, rt;
    if (computes_in_result(c, out[0]->dtype)) ct = out[0]->dtype;
    else if (ew_types(c, &ct, &rt)) return -1;
    Tensor *tmp;
    ScalarBox box;
    const Tensor *x = operand_as(&c->in[0], ct, &tmp, &box);
    if (!x) return -1;
    int rc = c->op == OP_ROUND && c->at->i[0] != 0 ? cpu_round_decimals(ct, x->data, out[0]->data, x->size, c->at->i[0])
                                                   : cpu_unary_split(c->op, ct, x->data, out[0]->data, out[0]->dtype, x->size);
    tensor_release(tmp);
    return rc;
}

typedef struct {
    OpCode op;
    DType ct;
    const char *a, *b;
    char *out;
    size_t esz, osz;
    int64_t sa, sb;
} BinCtx;

static int bin_run(void *ctx, const int64_t *off, int64_t out_off, int64_t n) {
    BinCtx *c = ctx;
    return cpu_binary(c->op, c->ct, c->a + off[0] * (int64_t)c->esz, c->sa, c->b + off[1] * (int64_t)c->esz, c->sb,
                      c->out + out_off * (int64_t)c->osz, n);
}

/* a (op) b into out, a and b already in the compute dtype ct, broadcast to out's shape. */
int cpu_binary_broadcast(OpCode op, DType ct, const Tensor *a, const Tensor *b, Tensor *out) {
    if (out->size == 0) return 0;
    DType rt = out->dtype;
    int64_t n = out->size;
    if (a->size == n && b->size == n) return cpu_binary_split(op, ct, a->data, 1, b->data, 1, out->data, rt, n);
    if (a->size == 1 && b->size == n) return cpu_binary_split(op, ct, a->data, 0, b->data, 1, out->data, rt, n);
    if (b->size == 1 && a->size == n) return cpu_binary_split(op, ct, a->data, 1, b->data, 0, out->data, rt, n);
    Shape sa, sb, so;
    shape_of(a, &sa);
    shape_of(b, &sb);
    shape_of(out, &so);
    BinCtx x = { op, ct, a->data, b->data, out->data, dtype_size(ct), dtype_size(out->dtype), 1, 1 };
    BIter it;
    const Shape *ins[2] = { &sa, &sb };
    biter_init(&it, &so, ins, 2);
    x.sa = it.stride[0][it.nd - 1];
    x.sb = it.stride[1][it.nd - 1];
    return biter_run_split(&it, 2, bin_run, &x, cpu_binary_is_math(op) ? POOL_MATH_COST : 1);
}

/* An i64/bool tensor compared with a number outside its kind compares mathematically. */
static bool exact_compare(const OpCall *c, int *num) {
    if (op_info[c->op].kind != K_COMPARE) return false;
    for (int k = 0; k < 2; k++) {
        const OpArg *n = &c->in[k], *t = &c->in[1 - k];
        if (n->kind == ARG_NUM && !n->is_bool && t->kind == ARG_TENSOR && !dtype_is_float(t->dtype) &&
            !(n->x == floor(n->x) && double_fits_i64(n->x))) {
            *num = k;
            return true;
        }
    }
    return false;
}

int cpu_ew2(const OpCall *c, Tensor **out) {
    DType ct, rt;
    int num;
    if (exact_compare(c, &num)) {
        Tensor *t = op_astype(c->in[1 - num].t, DT_I64);
        int rc = t ? cpu_compare_i64_number(c->op, t->data, c->in[num].x, num == 0, out[0]->data, t->size) : -1;
        tensor_release(t);
        return rc;
    }
    if (computes_in_result(c, out[0]->dtype)) ct = out[0]->dtype;
    else if (ew_types(c, &ct, &rt)) return -1;
    Pair p;
    int rc = pair_as(c, ct, &p) ? cpu_binary_broadcast(c->op, ct, p.a, p.b, out[0]) : -1;
    pair_free(&p);
    return rc;
}

/* clip = minimum(maximum(t, lo), hi), NaN winning as in NumPy; nil bounds are skipped. */
int cpu_clip(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    Tensor *tt;
    ScalarBox bt;
    const Tensor *t = operand_as(&c->in[0], dt, &tt, &bt);
    if (!t) return -1;
    int rc = 0;
    Shape so;
    shape_of(out[0], &so);
    Tensor *full = t->size == out[0]->size ? NULL : op_broadcast_to(t, &so);
    const Tensor *src = full ? full : t;
    if (t->size != out[0]->size && !full) rc = -1;
    else memcpy(out[0]->data, src->data, (size_t)out[0]->size * dtype_size(dt));
    for (int k = 1; k < 3 && k < c->nin && rc == 0; k++) {
        if (c->in[k].kind == ARG_NONE) continue;
        Tensor *tb;
        ScalarBox bb;
        const Tensor *b = operand_as(&c->in[k], dt, &tb, &bb);
        rc = b ? cpu_binary_broadcast(k == 1 ? OP_MAXIMUM : OP_MINIMUM, dt, out[0], b, out[0]) : -1;
        tensor_release(tb);
    }
    tensor_release(full);
    tensor_release(tt);
    return rc;
}

typedef struct {
    const char *cond, *a, *b;
    char *out;
    size_t esz;
    int64_t sc, sa, sb;
} WhereCtx;

/* A select per element over one run; 4- and 8-byte elements get loops the compiler can
 * vectorise (relu's gradient is a where over every activation). */
#define WHERE_LOOP(T)                                                                      \
    do {                                                                                   \
        const T *ta = (const T *)pa, *tb = (const T *)pb;                                  \
        T *to = (T *)o;                                                                    \
        if (w->sc == 1 && w->sa == 1 && w->sb == 1)                                        \
            for (int64_t j = 0; j < n; j++) to[j] = m[j] ? ta[j] : tb[j];                  \
        else if (w->sc == 1 && w->sa == 1 && w->sb == 0) {                                 \
            T y = tb[0];                                                                   \
            for (int64_t j = 0; j < n; j++) to[j] = m[j] ? ta[j] : y;                      \
        } else if (w->sc == 1 && w->sa == 0 && w->sb == 1) {                               \
            T x = ta[0];                                                                   \
            for (int64_t j = 0; j < n; j++) to[j] = m[j] ? x : tb[j];                      \
        } else                                                                             \
            for (int64_t j = 0; j < n; j++) to[j] = m[j * w->sc] ? ta[j * w->sa] : tb[j * w->sb]; \
        return 0;                                                                          \
    } while (0)

static int where_run(void *ctx, const int64_t *off, int64_t out_off, int64_t n) {
    WhereCtx *w = ctx;
    const uint8_t *m = (const uint8_t *)w->cond + off[0];
    const char *pa = w->a + off[1] * (int64_t)w->esz, *pb = w->b + off[2] * (int64_t)w->esz;
    char *o = w->out + out_off * (int64_t)w->esz;
    if (w->esz == 4) WHERE_LOOP(uint32_t);
    if (w->esz == 8) WHERE_LOOP(uint64_t);
    for (int64_t j = 0; j < n; j++)
        memcpy(o + j * (int64_t)w->esz, m[j * w->sc] ? pa + j * w->sa * (int64_t)w->esz : pb + j * w->sb * (int64_t)w->esz,
               w->esz);
    return 0;
}

/* where(cond, a, b): a and b in the result dtype, cond as bool, broadcast to out. */
int cpu_where(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    Tensor *tmp[3] = { NULL, NULL, NULL };
    ScalarBox box[3];
    const Tensor *x[3];
    int rc = -1;
    for (int k = 0; k < 3; k++)
        if (!(x[k] = operand_as(&c->in[k], k ? dt : DT_BOOL, &tmp[k], &box[k]))) goto done;
    rc = 0;
    if (out[0]->size > 0) {
        Shape s[3], so;
        for (int k = 0; k < 3; k++) shape_of(x[k], &s[k]);
        shape_of(out[0], &so);
        const Shape *ins[3] = { &s[0], &s[1], &s[2] };
        BIter it;
        biter_init(&it, &so, ins, 3);
        WhereCtx w = { x[0]->data, x[1]->data, x[2]->data, out[0]->data, dtype_size(dt),
                       it.stride[0][it.nd - 1], it.stride[1][it.nd - 1], it.stride[2][it.nd - 1] };
        rc = biter_run_split(&it, 3, where_run, &w, 1);
    }
done:
    for (int k = 0; k < 3; k++) tensor_release(tmp[k]);
    return rc;
}

int cpu_astype(const OpCall *c, Tensor **out) { return op_astype_into(c->in[0].t, out[0]); }

int cpu_equal(const OpCall *c, Tensor **out) {
    int r = c->op == OP_EQUAL ? cpu_same_bits(c->in[0].t, c->in[1].t)
                              : op_allclose(c->in[0].t, c->in[1].t, c->at->f[0], c->at->f[1]);
    if (r < 0) return -1;
    *(uint8_t *)out[0]->data = (uint8_t)r;
    return 0;
}

/* ---------- reductions, softmax, matmul ---------- */

int cpu_reduce(const OpCall *c, Tensor **out) {
    return op_reduce_into(c->op, c->in[0].t, c->at->axes, c->at->naxes, c->at->flag, out[0]);
}

int cpu_softmax(const OpCall *c, Tensor **out) {
    return op_softmax_into(c->in[0].t, c->at->axis, c->op == OP_LOG_SOFTMAX, out[0]);
}

int cpu_matmul(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    bool ta = c->op == OP_MATMUL && c->at->flag, tb = c->op == OP_MATMUL && c->at->flag2;   /* dot has no attributes */
    const OpArg *a = &c->in[0], *b = &c->in[1];
    if (a->kind == ARG_TENSOR && b->kind == ARG_TENSOR && a->dtype == dt && b->dtype == dt && a->ndim && b->ndim)
        return op_matmul_t_into(a->t, ta, b->t, tb, out[0]);   /* the common case: nothing to convert */
    Pair p;
    int rc = -1;
    if (pair_as(c, dt, &p))
        rc = p.a->ndim == 0 || p.b->ndim == 0 ? cpu_binary_broadcast(OP_MUL, dt, p.a, p.b, out[0])
                                              : op_matmul_t_into(p.a, ta, p.b, tb, out[0]);
    pair_free(&p);
    return rc;
}

/* outer(a, b)[i, j] = a.flat[i] * b.flat[j]: a column times a row, broadcast. */
int cpu_outer(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    Pair p;
    int rc = -1;
    if (pair_as(c, dt, &p)) {
        Tensor col = *p.a, row = *p.b;   /* headers only: the same data seen as [n, 1] and [1, m] */
        col.ndim = row.ndim = 2;
        col.shape[0] = p.a->size;
        col.shape[1] = 1;
        row.shape[0] = 1;
        row.shape[1] = p.b->size;
        rc = cpu_binary_broadcast(OP_MUL, dt, &col, &row, out[0]);
    }
    pair_free(&p);
    return rc;
}

/* ---------- shape ---------- */

int cpu_reshape(const OpCall *c, Tensor **out) {   /* F_VIEW: shares the buffer */
    Shape s;
    DType dt;
    if (infer_reshape(c, &s, &dt)) return -1;
    return (out[0] = tensor_view((Tensor *)c->in[0].t, &s)) ? 0 : -1;
}

int cpu_transpose(const OpCall *c, Tensor **out) {
    return op_transpose_into(c->in[0].t, c->at->naxes < 0 ? NULL : c->at->axes, c->at->naxes, out[0]);
}

int cpu_broadcast_to(const OpCall *c, Tensor **out) {
    op_broadcast_into(c->in[0].t, out[0]);
    return 0;
}

/* concat/stack: for each index before the axis, each operand's block in turn (a stacked
 * operand is a block of extent 1 on the new axis). Operands of another dtype convert once. */
int cpu_join(const OpCall *c, Tensor **out) {
    Tensor *r = out[0];
    int ax = c->at->axis < 0 ? c->at->axis + r->ndim : c->at->axis;
    int64_t outer = 1, row = (int64_t)dtype_size(r->dtype);
    for (int i = 0; i < ax; i++) outer *= r->shape[i];
    for (int i = ax + 1; i < r->ndim; i++) row *= r->shape[i];
    Tensor **conv = mem_calloc((size_t)c->nin + 1, sizeof(Tensor *));
    int rc = 0;
    for (int k = 0; k < c->nin && rc == 0; k++)
        if (c->in[k].t->dtype != r->dtype && !(conv[k] = op_astype(c->in[k].t, r->dtype))) rc = -1;
    char *dst = r->data;
    for (int64_t o = 0; o < outer && rc == 0 && r->size > 0; o++)
        for (int k = 0; k < c->nin; k++) {
            const Tensor *t = conv[k] ? conv[k] : c->in[k].t;
            int64_t bytes = row * (c->op == OP_STACK ? 1 : t->shape[ax]);
            memcpy(dst, (const char *)t->data + o * bytes, (size_t)bytes);
            dst += bytes;
        }
    for (int k = 0; k < c->nin; k++) tensor_release(conv[k]);
    mem_free(conv);
    return rc;
}

/* ---------- construction ---------- */

static void fill(Tensor *r, double v) {
    if (r->dtype == DT_F32) {
        float x = (float)v;
        for (int64_t i = 0; i < r->size; i++) ((float *)r->data)[i] = x;
    } else {
        for (int64_t i = 0; i < r->size; i++) tensor_set(r, i, v);
    }
}

int cpu_full(const OpCall *c, Tensor **out) {
    double v = c->op == OP_ONES;
    if (c->op == OP_FULL) v = c->in[0].kind == ARG_NUM ? c->in[0].x : tensor_get(c->in[0].t, 0);
    if (out[0]->dtype == DT_I64 && !double_fits_i64(v)) {   /* as astype: never a wrapped integer */
        op_fail("cannot convert %s to i64", isnan(v) ? "nan" : isinf(v) ? (v > 0 ? "inf" : "-inf") : "an out-of-range value");
        return -1;
    }
    fill(out[0], v);
    return 0;
}

int cpu_arange(const OpCall *c, Tensor **out) {
    Tensor *r = out[0];
    const OpAttrs *at = c->at;
    if (c->op == OP_EYE) {
        int64_t n = at->i[0];
        memset(r->data, 0, (size_t)r->size * sizeof(float));
        for (int64_t i = 0; i < n; i++) ((float *)r->data)[i * n + i] = 1;
        return 0;
    }
    if (c->op == OP_LINSPACE) {   /* as NumPy: a + i*step, the last element exactly b */
        int64_t n = at->i[0];
        double step = n > 1 ? (at->f[1] - at->f[0]) / (double)(n - 1) : 0;
        for (int64_t i = 0; i < n; i++) tensor_set(r, i, at->f[0] + (double)i * step);
        if (n > 1) tensor_set(r, n - 1, at->f[1]);
        return 0;
    }
    double start = op_given(c, 1) ? at->f[0] : 0, step = at->f[2];
    for (int64_t i = 0; i < r->size; i++) tensor_set(r, i, start + (double)i * step);
    return 0;
}

int cpu_random(const OpCall *c, Tensor **out) {
    if (c->op == OP_RAND) rng_fill_uniform(out[0]);
    else if (c->op == OP_RANDN) rng_fill_normal(out[0]);
    else rng_fill_int(out[0], c->at->i[0], c->at->i[1]);
    return 0;
}

/* ---------- the CPU in the device registry ---------- */

typedef OpKernelFn KernelFn;
static const KernelFn cpu_kernel[OP__COUNT] = {
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) [OP_##id] = cpu_##impl,
#include "ops.def"
#undef OP
};

static int cpu_run(const OpCall *c, Tensor **out) { return cpu_kernel[c->op](c, out); }
static OpKernelFn cpu_kernel_of(OpCode op) { return cpu_kernel[op]; }

/* Every family writes into the results it is given (views and data-dependent shapes, flagged
 * in ops.def, make their own). */
static bool cpu_allocates(OpCode op) {
    (void)op;
    return false;
}

const DeviceImpl cpu_device = {
    .name = "cpu", .alloc = tensor_new, .run = cpu_run, .allocates = cpu_allocates, .kernel = cpu_kernel_of,
    .unary = cpu_unary, .binary = cpu_binary,
};
