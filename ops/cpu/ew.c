/* ew.c - elementwise ops: NumPy broadcasting, PyTorch dtype promotion, and the kernels
 * for unary and binary ops, astype, clip and where.
 *
 * Binary ops convert both operands to one compute dtype, then run a kernel over runs
 * of the broadcast iteration whose inner strides are 0 or 1. Each (op, dtype) kernel
 * has one loop order, so the static VM calling the same kernel gets the same bits. */
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"
#include "infer.h"

/* ---------- broadcasting ---------- */

int shape_broadcast(const Shape *a, const Shape *b, Shape *out, const char *opname) {
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = a->ndim - n + i, ib = b->ndim - n + i;
        int64_t x = ia >= 0 ? a->d[ia] : 1, y = ib >= 0 ? b->d[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            char sa[600], sb[600];
            op_fail("shape mismatch for '%s': %s and %s", opname, shape_str(a, sa, sizeof sa), shape_str(b, sb, sizeof sb));
            return -1;
        }
        out->d[i] = x == 1 ? y : x;
    }
    out->ndim = n;
    return 0;
}

void biter_init(BIter *it, const Shape *out, const Shape *const *ins, int nin) {
    int nd = out->ndim;
    int64_t stride[3][TSL_MAX_RANK];
    for (int k = 0; k < nin; k++) {
        int64_t s = 1;
        for (int i = nd - 1; i >= 0; i--) {
            int j = ins[k]->ndim - nd + i;
            int64_t d = j >= 0 ? ins[k]->d[j] : 1;
            stride[k][i] = (d == out->d[i] && d != 1) ? s : 0;
            s *= d;
        }
    }
    /* drop size-1 dims and merge dims that are contiguous for every input */
    it->nd = 0;
    for (int i = 0; i < nd; i++) {
        if (out->d[i] == 1) continue;
        int m = it->nd;
        bool merge = m > 0;
        for (int k = 0; k < nin && merge; k++)
            merge = it->stride[k][m - 1] == stride[k][i] * out->d[i];
        if (merge) {
            it->shape[m - 1] *= out->d[i];
            for (int k = 0; k < nin; k++) it->stride[k][m - 1] = stride[k][i];
        } else {
            it->shape[m] = out->d[i];
            for (int k = 0; k < nin; k++) it->stride[k][m] = stride[k][i];
            it->nd++;
        }
    }
    if (it->nd == 0) {
        it->nd = 1;
        it->shape[0] = 1;
        for (int k = 0; k < nin; k++) it->stride[k][0] = 0;
    }
}

int biter_run(const BIter *it, int nin, BRunFn fn, void *ctx) {
    int64_t idx[TSL_MAX_RANK] = { 0 }, off[3] = { 0, 0, 0 }, out_off = 0;
    int last = it->nd - 1;
    int64_t inner = it->shape[last];
    for (;;) {
        int rc = fn(ctx, off, out_off, inner);
        if (rc) return rc;
        out_off += inner;
        int d = last - 1;
        for (; d >= 0; d--) {
            idx[d]++;
            for (int k = 0; k < nin; k++) off[k] += it->stride[k][d];
            if (idx[d] < it->shape[d]) break;
            for (int k = 0; k < nin; k++) off[k] -= it->stride[k][d] * it->shape[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
    return 0;
}

/* ---------- astype ---------- */

Tensor *op_astype(const Tensor *a, DType dt) {
    if (a->dtype == dt) return tensor_copy(a);
    Shape s;
    shape_of(a, &s);
    Tensor *r = tensor_new(dt, &s);
    if (!r) return NULL;
    int64_t n = a->size;
    if (dt == DT_I64 && dtype_is_float(a->dtype)) {
        int64_t *o = r->data;
        for (int64_t i = 0; i < n; i++) {
            double x = tensor_get(a, i);
            if (!double_fits_i64(x)) {
                tensor_release(r);
                op_fail("cannot convert %s to i64", isnan(x) ? "nan" : isinf(x) ? (x > 0 ? "inf" : "-inf") : "an out-of-range value");
                return NULL;
            }
            o[i] = (int64_t)x;
        }
        return r;
    }
#define CONVERT(TI, TO, EXPR)                                    \
    {                                                            \
        const TI *x = a->data;                                   \
        TO *o = r->data;                                         \
        for (int64_t i = 0; i < n; i++) o[i] = EXPR;             \
    }
    switch (a->dtype * 4 + dt) {
    case DT_BOOL * 4 + DT_I64: CONVERT(uint8_t, int64_t, x[i]) break;
    case DT_BOOL * 4 + DT_F32: CONVERT(uint8_t, float, x[i]) break;
    case DT_BOOL * 4 + DT_F64: CONVERT(uint8_t, double, x[i]) break;
    case DT_I64 * 4 + DT_BOOL: CONVERT(int64_t, uint8_t, x[i] != 0) break;
    case DT_I64 * 4 + DT_F32: CONVERT(int64_t, float, (float)x[i]) break;
    case DT_I64 * 4 + DT_F64: CONVERT(int64_t, double, (double)x[i]) break;
    case DT_F32 * 4 + DT_BOOL: CONVERT(float, uint8_t, x[i] != 0) break;
    case DT_F32 * 4 + DT_F64: CONVERT(float, double, x[i]) break;
    case DT_F64 * 4 + DT_BOOL: CONVERT(double, uint8_t, x[i] != 0) break;
    case DT_F64 * 4 + DT_F32: CONVERT(double, float, (float)x[i]) break;
    default: break;
    }
#undef CONVERT
    return r;
}

/* ---------- unary ---------- */

static float relu_f(float x) { return x > 0 ? x : (x != x ? x : 0.0f); }
static double relu_d(double x) { return x > 0 ? x : (x != x ? x : 0.0); }
static float sign_f(float x) { return x != x ? x : (float)((x > 0) - (x < 0)); }
static double sign_d(double x) { return x != x ? x : (double)((x > 0) - (x < 0)); }

double op_unary_number(OpCode op, double x) {
    switch (op) {
    case OP_NEG: return -x;
    case OP_ABS: return fabs(x);
    case OP_EXP: return exp(x);
    case OP_LOG: return log(x);
    case OP_SQRT: return sqrt(x);
    case OP_SIN: return sin(x);
    case OP_COS: return cos(x);
    case OP_TANH: return tanh(x);
    case OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case OP_RELU: return relu_d(x);
    case OP_FLOOR: return floor(x);
    case OP_CEIL: return ceil(x);
    case OP_ROUND: return nearbyint(x);
    case OP_SIGN: return sign_d(x);
    default: return NAN;
    }
}

/* Runs a unary op on contiguous data of dtype dt (float kernels may run in place). */
int cpu_unary(OpCode op, DType dt, const void *src, void *dst, int64_t n) {
#define LOOP(T, EXPR)                                   \
    {                                                   \
        const T *x = src;                               \
        T *y = dst;                                     \
        for (int64_t i = 0; i < n; i++) y[i] = EXPR;    \
    }                                                   \
    return 0;
    if (dt == DT_F32) {
        switch (op) {
        case OP_NEG: LOOP(float, -x[i])
        case OP_ABS: LOOP(float, fabsf(x[i]))
        case OP_RELU: LOOP(float, relu_f(x[i]))
        case OP_FLOOR: LOOP(float, floorf(x[i]))
        case OP_CEIL: LOOP(float, ceilf(x[i]))
        case OP_ROUND: LOOP(float, nearbyintf(x[i]))
        case OP_SIGN: LOOP(float, sign_f(x[i]))
        case OP_EXP: vm_exp_f32(src, dst, n); return 0;
        case OP_LOG: vm_log_f32(src, dst, n); return 0;
        case OP_SQRT: vm_sqrt_f32(src, dst, n); return 0;
        case OP_SIN: vm_sin_f32(src, dst, n); return 0;
        case OP_COS: vm_cos_f32(src, dst, n); return 0;
        case OP_TANH: vm_tanh_f32(src, dst, n); return 0;
        case OP_SIGMOID: vm_sigmoid_f32(src, dst, n); return 0;
        default: break;
        }
    } else if (dt == DT_F64) {
        switch (op) {
        case OP_NEG: LOOP(double, -x[i])
        case OP_ABS: LOOP(double, fabs(x[i]))
        case OP_RELU: LOOP(double, relu_d(x[i]))
        case OP_FLOOR: LOOP(double, floor(x[i]))
        case OP_CEIL: LOOP(double, ceil(x[i]))
        case OP_ROUND: LOOP(double, nearbyint(x[i]))
        case OP_SIGN: LOOP(double, sign_d(x[i]))
        case OP_EXP: vm_exp_f64(src, dst, n); return 0;
        case OP_LOG: vm_log_f64(src, dst, n); return 0;
        case OP_SQRT: vm_sqrt_f64(src, dst, n); return 0;
        case OP_SIN: vm_sin_f64(src, dst, n); return 0;
        case OP_COS: vm_cos_f64(src, dst, n); return 0;
        case OP_TANH: vm_tanh_f64(src, dst, n); return 0;
        case OP_SIGMOID: vm_sigmoid_f64(src, dst, n); return 0;
        default: break;
        }
    } else if (dt == DT_I64) {
        switch (op) {
        case OP_NEG: LOOP(int64_t, (int64_t)(0 - (uint64_t)x[i]))
        case OP_ABS: LOOP(int64_t, x[i] < 0 ? (int64_t)(0 - (uint64_t)x[i]) : x[i])
        case OP_RELU: LOOP(int64_t, x[i] > 0 ? x[i] : 0)
        case OP_FLOOR: case OP_CEIL: case OP_ROUND: LOOP(int64_t, x[i])
        case OP_SIGN: LOOP(int64_t, (x[i] > 0) - (x[i] < 0))
        default: break;
        }
    } else {
        switch (op) {
        case OP_ABS: case OP_RELU: case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_SIGN:
            LOOP(uint8_t, x[i])
        default: break;
        }
    }
#undef LOOP
    op_fail("%s is not supported for %s tensors", op_info[op].name, dtype_name(dt));
    return -1;
}

int op_unary_into(OpCode op, const Tensor *a, Tensor *out) {
    const DeviceKernels *k = kernels_for(out->device);
    if (!k) return -1;
    if (a->dtype == out->dtype) return k->unary(op, out->dtype, a->data, out->data, a->size);
    Tensor *conv = op_astype(a, out->dtype);
    int rc = conv ? k->unary(op, out->dtype, conv->data, out->data, a->size) : -1;
    tensor_release(conv);
    return rc;
}

Tensor *op_unary(OpCode op, const Tensor *a) {
    DType dt;
    if (infer_unary(op, a->dtype, &dt)) return NULL;
    Tensor *r = dt == a->dtype ? NULL : op_astype(a, dt);
    const Tensor *src = r ? r : a;
    Shape s;
    shape_of(a, &s);
    Tensor *out = r ? r : tensor_new(dt, &s);   /* float kernels run in place on a conversion */
    if (!out) return NULL;
    if (cpu_unary(op, dt, src->data, out->data, a->size)) {
        tensor_release(out);
        return NULL;
    }
    return out;
}

/* ---------- binary ---------- */

static int64_t mod_i64(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static double mod_d(double a, double b) {
    if (b == 0) return NAN;
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static float mod_f(float a, float b) {
    if (b == 0) return NAN;
    float r = fmodf(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static int64_t pow_i64(int64_t a, int64_t e) {
    uint64_t r = 1, b = (uint64_t)a;
    while (e > 0) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}
static float max_f(float a, float b) { return a != a ? a : b != b ? b : a > b ? a : b; }
static float min_f(float a, float b) { return a != a ? a : b != b ? b : a < b ? a : b; }
static double max_d(double a, double b) { return a != a ? a : b != b ? b : a > b ? a : b; }
static double min_d(double a, double b) { return a != a ? a : b != b ? b : a < b ? a : b; }

/* Three loop shapes (both contiguous, left scalar, right scalar) so each vectorises. */
#define BIN(TI, TO, EXPR)                                                        \
    {                                                                            \
        const TI *restrict pa = a, *restrict pb = b;                             \
        TO *restrict o = out;                                                    \
        if (sa && sb) for (int64_t i = 0; i < n; i++) { TI x = pa[i], y = pb[i]; o[i] = (EXPR); } \
        else if (sa) { TI y = pb[0]; for (int64_t i = 0; i < n; i++) { TI x = pa[i]; o[i] = (EXPR); } } \
        else if (sb) { TI x = pa[0]; for (int64_t i = 0; i < n; i++) { TI y = pb[i]; o[i] = (EXPR); } } \
        else { TI x = pa[0], y = pb[0]; for (int64_t i = 0; i < n; i++) o[i] = (EXPR); } \
        return 0;                                                                \
    }

#define CMP_CASES(T)                                                             \
    case OP_EQ: BIN(T, uint8_t, x == y)                                          \
    case OP_NE: BIN(T, uint8_t, x != y)                                          \
    case OP_LT: BIN(T, uint8_t, x < y)                                           \
    case OP_LE: BIN(T, uint8_t, x <= y)                                          \
    case OP_GT: BIN(T, uint8_t, x > y)                                           \
    case OP_GE: BIN(T, uint8_t, x >= y)

static int check_i64_operands(OpCode op, const int64_t *b, int64_t sb, int64_t n) {
    for (int64_t i = 0; i < (sb ? n : 1); i++) {
        if (op == OP_MOD && b[i] == 0) { op_fail("integer modulo by zero"); return -1; }
        if (op == OP_POW && b[i] < 0) { op_fail("integers to negative integer powers are not allowed"); return -1; }
    }
    return 0;
}

/* Kernel over one run: a and b in compute dtype ct, strides sa/sb in {0, 1}. */
int cpu_binary(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out, int64_t n) {
    switch (ct) {
    case DT_F32:
        switch (op) {
        case OP_ADD: BIN(float, float, x + y)
        case OP_SUB: BIN(float, float, x - y)
        case OP_MUL: BIN(float, float, x * y)
        case OP_DIV: BIN(float, float, x / y)
        case OP_MOD: BIN(float, float, mod_f(x, y))
        case OP_POW: BIN(float, float, powf(x, y))
        case OP_MAXIMUM: BIN(float, float, max_f(x, y))
        case OP_MINIMUM: BIN(float, float, min_f(x, y))
        CMP_CASES(float)
        default: break;
        }
        break;
    case DT_F64:
        switch (op) {
        case OP_ADD: BIN(double, double, x + y)
        case OP_SUB: BIN(double, double, x - y)
        case OP_MUL: BIN(double, double, x * y)
        case OP_DIV: BIN(double, double, x / y)
        case OP_MOD: BIN(double, double, mod_d(x, y))
        case OP_POW: BIN(double, double, pow(x, y))
        case OP_MAXIMUM: BIN(double, double, max_d(x, y))
        case OP_MINIMUM: BIN(double, double, min_d(x, y))
        CMP_CASES(double)
        default: break;
        }
        break;
    case DT_I64:
        if (check_i64_operands(op, b, sb, n)) return -1;
        switch (op) {
        case OP_ADD: BIN(int64_t, int64_t, (int64_t)((uint64_t)x + (uint64_t)y))
        case OP_SUB: BIN(int64_t, int64_t, (int64_t)((uint64_t)x - (uint64_t)y))
        case OP_MUL: BIN(int64_t, int64_t, (int64_t)((uint64_t)x * (uint64_t)y))
        case OP_MOD: BIN(int64_t, int64_t, mod_i64(x, y))
        case OP_POW: BIN(int64_t, int64_t, pow_i64(x, y))
        case OP_MAXIMUM: BIN(int64_t, int64_t, x > y ? x : y)
        case OP_MINIMUM: BIN(int64_t, int64_t, x < y ? x : y)
        CMP_CASES(int64_t)
        default: break;
        }
        break;
    case DT_BOOL:
        switch (op) {
        case OP_ADD: case OP_MAXIMUM: BIN(uint8_t, uint8_t, x | y)
        case OP_MUL: case OP_MINIMUM: BIN(uint8_t, uint8_t, x & y)
        CMP_CASES(uint8_t)
        default: break;
        }
        break;
    }
    op_fail("'%s' is not supported for %s tensors", op_symbol(op), dtype_name(ct));
    return -1;
}

int op_binary_dtype(OpCode op, DType a, DType b, DType *out) {
    DType ct;
    return binary_types(op, a, b, &ct, out);
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

/* The kernel part of a binary op: `out` already has the result's dtype and shape. */
int op_binary_into(OpCode op, const Tensor *a, const Tensor *b, Tensor *out) {
    DType ct, rt;
    Shape sa, sb;
    shape_of(a, &sa);
    shape_of(b, &sb);
    if (binary_types(op, a->dtype, b->dtype, &ct, &rt)) return -1;
    if (out->size == 0) return 0;
    const DeviceKernels *kern = kernels_for(out->device);
    if (!kern) return -1;
    Tensor *ca = a->dtype == ct ? NULL : op_astype(a, ct);
    Tensor *cb = b->dtype == ct ? NULL : op_astype(b, ct);
    int rc = -1;
    if ((a->dtype != ct && !ca) || (b->dtype != ct && !cb)) goto out;
    const Tensor *xa = ca ? ca : a, *xb = cb ? cb : b;
    if (shape_equal(&sa, &sb)) rc = kern->binary(op, ct, xa->data, 1, xb->data, 1, out->data, out->size);
    else if (a->size == 1 && out->size == b->size) rc = kern->binary(op, ct, xa->data, 0, xb->data, 1, out->data, out->size);
    else if (b->size == 1 && out->size == a->size) rc = kern->binary(op, ct, xa->data, 1, xb->data, 0, out->data, out->size);
    else {
        Shape so;
        shape_of(out, &so);
        BinCtx c = { op, ct, xa->data, xb->data, out->data, dtype_size(ct), dtype_size(rt), 1, 1 };
        BIter it;
        const Shape *ins[2] = { &sa, &sb };
        biter_init(&it, &so, ins, 2);
        c.sa = it.stride[0][it.nd - 1];
        c.sb = it.stride[1][it.nd - 1];
        rc = biter_run(&it, 2, bin_run, &c);
    }
out:
    tensor_release(ca);
    tensor_release(cb);
    return rc;
}

Tensor *op_binary(OpCode op, const Tensor *a, const Tensor *b) {
    DType rt;
    Shape sa, sb, so;
    shape_of(a, &sa);
    shape_of(b, &sb);
    if (infer_binary(op, &sa, a->dtype, &sb, b->dtype, &so, &rt)) return NULL;
    Tensor *r = tensor_new(rt, &so);
    if (r && op_binary_into(op, a, b, r)) {
        tensor_release(r);
        r = NULL;
    }
    return r;
}

/* number (op) tensor: the number takes the tensor's dtype when it fits its kind
 * (PyTorch's rule, spec section 5); comparisons with a non-integral number compare
 * integer tensors in f64, mathematically. */
Tensor *op_binary_scalar(OpCode op, const Tensor *t, double x, bool num_left) {
    Tensor *s = tensor_scalar(scalar_dtype(op, t->dtype, x), x);
    if (!s) return NULL;
    Tensor *r = num_left ? op_binary(op, s, t) : op_binary(op, t, s);
    tensor_release(s);
    return r;
}

/* The scalar is built on the stack: no allocation (the static VM's hot path). */
int op_binary_scalar_into(OpCode op, const Tensor *t, double x, bool num_left, Tensor *out) {
    DType sd = scalar_dtype(op, t->dtype, x);
    Tensor s;
    TBuf buf;
    double storage;
    memset(&s, 0, sizeof s);
    buf.rc = 1;
    buf.bytes = sizeof storage;
    buf.data = &storage;
    s.rc = 1;
    s.dtype = sd;
    s.size = 1;
    s.buf = &buf;
    s.data = &storage;
    tensor_set(&s, 0, x);
    return num_left ? op_binary_into(op, &s, t, out) : op_binary_into(op, t, &s, out);
}

/* ---------- clip, where, comparison ---------- */

Tensor *op_clip(const Tensor *a, double lo, double hi) {
    Tensor *r = tensor_copy(a);
    if (!r) return NULL;
    int64_t n = r->size;
    if (r->dtype == DT_F32) {
        float *x = r->data, l = (float)lo, h = (float)hi;
        for (int64_t i = 0; i < n; i++) x[i] = min_f(max_f(x[i], l), h);
    } else if (r->dtype == DT_F64) {
        double *x = r->data;
        for (int64_t i = 0; i < n; i++) x[i] = min_d(max_d(x[i], lo), hi);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double v = tensor_get(r, i);
            tensor_set(r, i, v < lo ? ceil(lo) : v > hi ? floor(hi) : v);
        }
    }
    return r;
}

Tensor *op_where(const Tensor *c, const Tensor *a, const Tensor *b) {
    Shape sc, sa, sb, s1, so;
    shape_of(c, &sc);
    shape_of(a, &sa);
    shape_of(b, &sb);
    if (shape_broadcast(&sa, &sb, &s1, "where") || shape_broadcast(&sc, &s1, &so, "where")) return NULL;
    DType dt = a->dtype > b->dtype ? a->dtype : b->dtype;
    Tensor *bc = NULL, *ba = NULL, *bb = NULL, *r = NULL, *cc = NULL, *ca = NULL, *cb = NULL;
    if (!(cc = c->dtype == DT_BOOL ? tensor_retain((Tensor *)c) : op_astype(c, DT_BOOL))) goto out;
    if (!(ca = a->dtype == dt ? tensor_retain((Tensor *)a) : op_astype(a, dt))) goto out;
    if (!(cb = b->dtype == dt ? tensor_retain((Tensor *)b) : op_astype(b, dt))) goto out;
    if (!(bc = op_broadcast_to(cc, &so)) || !(ba = op_broadcast_to(ca, &so)) || !(bb = op_broadcast_to(cb, &so))) goto out;
    if (!(r = tensor_new(dt, &so))) goto out;
    size_t esz = dtype_size(dt);
    const uint8_t *m = bc->data;
    for (int64_t i = 0; i < r->size; i++)
        memcpy((char *)r->data + i * (int64_t)esz, (const char *)(m[i] ? ba : bb)->data + i * (int64_t)esz, esz);
out:
    tensor_release(cc); tensor_release(ca); tensor_release(cb);
    tensor_release(bc); tensor_release(ba); tensor_release(bb);
    return r;
}

bool tensor_equal(const Tensor *a, const Tensor *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    if (memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim)) return false;
    return !memcmp(a->data, b->data, (size_t)a->size * dtype_size(a->dtype));
}

int op_allclose(const Tensor *a, const Tensor *b, double rtol, double atol) {
    Shape sa, sb, so;
    shape_of(a, &sa);
    shape_of(b, &sb);
    if (shape_broadcast(&sa, &sb, &so, "allclose")) return -1;
    Tensor *x = op_broadcast_to(a, &so), *y = x ? op_broadcast_to(b, &so) : NULL;
    if (!y) { tensor_release(x); return -1; }
    int ok = 1;
    for (int64_t i = 0; i < x->size && ok; i++) {
        double u = tensor_get(x, i), v = tensor_get(y, i);
        if (u == v) continue;   /* equal infinities */
        ok = fabs(u - v) <= atol + rtol * fabs(v);
    }
    tensor_release(x);
    tensor_release(y);
    return ok;
}
