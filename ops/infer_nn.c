/* infer_nn.c - shapes and dtypes of the neural-network ops of issue 28 (ops.def's last
 * block): activations with number parameters, normalizations, losses, gather and scatter.
 *
 * As in infer.c, each reads operand dtypes and shapes only and raises every error that does
 * not depend on the data (labels and indices out of range are the kernels', ops/cpu/nn.c). */
#include "tops.h"

/* softplus: x's shape; float (i64 and bool compute in f32), as the elementwise DR_FLOAT ops */
int infer_act(const OpCall *c, Shape *out, DType *dt) {
    op_arg_shape(&c->in[0], &out[0]);
    *dt = dtype_is_float((DType)c->in[0].dtype) ? (DType)c->in[0].dtype : DT_F32;
    return 0;
}

static const char *name_of(const OpCall *c) { return op_info[c->op].name; }

static Shape in_shape(const OpCall *c, int k) {
    Shape s;
    op_arg_shape(&c->in[k], &s);
    return s;
}

static bool present(const OpCall *c, int k) { return k < c->nin && c->in[k].kind != ARG_NONE; }

static int fail_shape(const OpCall *c, const char *what, const Shape *got, const Shape *want) {
    char a[96], b[96];
    shape_str(got, a, sizeof a);
    shape_str(want, b, sizeof b);
    op_fail("%s(): %s has shape %s, expected %s", name_of(c), what, a, b);
    return -1;
}

/* Operand k (weight, bias, a running statistic), when given, of shape want. */
static int param_shape(const OpCall *c, int k, const char *what, const Shape *want) {
    if (!present(c, k)) return 0;
    Shape s = in_shape(c, k);
    if (s.ndim != want->ndim) return fail_shape(c, what, &s, want);
    for (int i = 0; i < s.ndim; i++)
        if (s.d[i] != want->d[i]) return fail_shape(c, what, &s, want);
    return 0;
}

/* The channels of an [N, C, ...] operand (group_norm, batch_norm). */
static int channels(const OpCall *c, const Shape *x, Shape *ch) {
    if (x->ndim < 2) {
        op_fail("%s(): x must have at least 2 axes [N, C, ...], got rank %d", name_of(c), x->ndim);
        return -1;
    }
    ch->ndim = 1;
    ch->d[0] = x->d[1];
    return 0;
}

/* layer_norm, rms_norm: x's last axes are normalized_shape; weight and bias have that shape.
 * group_norm: C divisible by num_groups; batch_norm: the running statistics when not
 * training, weight and bias, all [C]. */
int infer_norm(const OpCall *c, Shape *out, DType *dt) {
    Shape x = in_shape(c, 0), ch;
    *out = x;
    *dt = dtype_is_float((DType)c->in[0].dtype) ? (DType)c->in[0].dtype : DT_F32;
    switch (c->op) {
    case OP_LAYER_NORM: case OP_RMS_NORM: {
        const Shape *ns = &c->at->shape;
        bool fits = ns->ndim <= x.ndim;
        for (int i = 0; fits && i < ns->ndim; i++) fits = x.d[x.ndim - ns->ndim + i] == ns->d[i];
        if (!fits) {
            char a[96], b[96];
            shape_str(ns, a, sizeof a);
            shape_str(&x, b, sizeof b);
            op_fail("%s(): normalized_shape %s is not the end of x's shape %s", name_of(c), a, b);
            return -1;
        }
        return param_shape(c, 1, "weight", ns) || (c->op == OP_LAYER_NORM && param_shape(c, 2, "bias", ns)) ? -1 : 0;
    }
    case OP_GROUP_NORM:
        if (channels(c, &x, &ch)) return -1;
        if (c->at->i[0] <= 0 || ch.d[0] % c->at->i[0]) {
            op_fail("group_norm(): %lld channels do not divide into %lld groups", (long long)ch.d[0], (long long)c->at->i[0]);
            return -1;
        }
        return param_shape(c, 1, "weight", &ch) || param_shape(c, 2, "bias", &ch) ? -1 : 0;
    default:   /* batch_norm */
        if (channels(c, &x, &ch)) return -1;
        if (!c->at->flag && (!present(c, 1) || !present(c, 2))) {
            op_fail("batch_norm(): running_mean and running_var are needed when not training");
            return -1;
        }
        return param_shape(c, 1, "running_mean", &ch) || param_shape(c, 2, "running_var", &ch) ||
                       param_shape(c, 3, "weight", &ch) || param_shape(c, 4, "bias", &ch) ? -1 : 0;
    }
}

/* cross_entropy: logits [N, C] float, labels [N] i64; a 0-d result. */
int infer_xent(const OpCall *c, Shape *out, DType *dt) {
    Shape x = in_shape(c, 0), l = in_shape(c, 1);
    if (x.ndim != 2 || l.ndim != 1 || l.d[0] != x.d[0]) {
        char a[96], b[96];
        shape_str(&x, a, sizeof a);
        shape_str(&l, b, sizeof b);
        op_fail("cross_entropy(): logits must be [N, C] and labels [N], got %s and %s", a, b);
        return -1;
    }
    if (c->in[1].dtype != DT_I64) {
        op_fail("cross_entropy(): labels must be i64 class indices, got %s", dtype_name((DType)c->in[1].dtype));
        return -1;
    }
    if (!(c->at->f[0] >= 0 && c->at->f[0] <= 1)) {
        op_fail("cross_entropy(): label_smoothing must be in [0, 1], got %g", c->at->f[0]);
        return -1;
    }
    out->ndim = 0;
    *dt = dtype_is_float((DType)c->in[0].dtype) ? (DType)c->in[0].dtype : DT_F32;
    return 0;
}

/* gather: the index's shape; scatter: x's. index is i64 of x's rank, no longer than x on
 * every other axis (and than src on every axis); src of scatter is 0-d or of x's rank. */
int infer_gather_axis(const OpCall *c, Shape *out, DType *dt) {
    Shape x = in_shape(c, 0), ix = in_shape(c, 1);
    int ax = c->at->axis < 0 ? c->at->axis + x.ndim : c->at->axis;
    if (ax < 0 || ax >= (x.ndim ? x.ndim : 1)) {
        op_fail("%s(): axis %d is out of range for a tensor of rank %d", name_of(c), c->at->axis, x.ndim);
        return -1;
    }
    if (c->in[1].dtype != DT_I64) {
        op_fail("%s(): index must be an i64 tensor, got %s", name_of(c), dtype_name((DType)c->in[1].dtype));
        return -1;
    }
    if (ix.ndim != x.ndim) {
        op_fail("%s(): index has rank %d, x rank %d: they must be equal", name_of(c), ix.ndim, x.ndim);
        return -1;
    }
    for (int d = 0; d < x.ndim; d++)
        if (d != ax && ix.d[d] > x.d[d]) {
            op_fail("%s(): index is longer than x on axis %d (%lld > %lld)", name_of(c), d, (long long)ix.d[d], (long long)x.d[d]);
            return -1;
        }
    *dt = (DType)c->in[0].dtype;
    *out = c->op == OP_GATHER ? ix : x;
    if (c->op == OP_GATHER) return 0;
    Shape s = in_shape(c, 2);
    if (s.ndim != 0 && s.ndim != x.ndim) {
        op_fail("scatter(): src has rank %d: it must be 0-d or of x's rank %d", s.ndim, x.ndim);
        return -1;
    }
    for (int d = 0; d < s.ndim; d++)
        if (ix.d[d] > s.d[d]) {
            op_fail("scatter(): index is longer than src on axis %d (%lld > %lld)", d, (long long)ix.d[d], (long long)s.d[d]);
            return -1;
        }
    return 0;
}

/* masked_fill: x's shape and dtype; a bool mask that broadcasts to x. */
int infer_masked_fill(const OpCall *c, Shape *out, DType *dt) {
    Shape x = in_shape(c, 0), m = in_shape(c, 1), b;
    if (c->in[1].dtype != DT_BOOL) {
        op_fail("masked_fill(): mask must be a bool tensor, got %s", dtype_name((DType)c->in[1].dtype));
        return -1;
    }
    if (shape_broadcast(&x, &m, &b, "masked_fill")) return -1;
    if (b.ndim != x.ndim || shape_count(&b) != shape_count(&x)) {
        char a1[96], a2[96];
        shape_str(&m, a1, sizeof a1);
        shape_str(&x, a2, sizeof a2);
        op_fail("masked_fill(): mask of shape %s does not broadcast to x's shape %s", a1, a2);
        return -1;
    }
    *out = x;
    *dt = (DType)c->in[0].dtype;
    return 0;
}
