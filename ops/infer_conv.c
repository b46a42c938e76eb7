/* infer_conv.c - shapes and dtypes of the convolution and pooling ops, and the geometry
 * (ops/conv.h) their kernels and gradients read.
 *
 * As everywhere in inference, only operand shapes and dtypes are read (no data while
 * compiling), so eager and static code reject the same calls with the same words. The
 * rules are PyTorch's: NCHW operands, OIHW weights ([in, out / groups, kh, kw] for the
 * transposed convolution), out = (in + pads - dilation * (k - 1) - 1) / stride + 1. */
#include <string.h>
#include "conv.h"

static const char *name_of(const OpCall *c) { return op_info[c->op].name; }

static Shape in_shape(const OpCall *c, int k) {
    Shape s;
    op_arg_shape(&c->in[k], &s);
    return s;
}

static const OpParam *param(OpCode op, const char *name) {
    const OpDef *d = op_def(op);
    for (int p = 0; p < d->nparams; p++)
        if (!strcmp(d->params[p].name, name)) return &d->params[p];
    return NULL;
}

/* ---------- attributes ---------- */

OpAttrs conv_attrs(OpCode op) {
    OpAttrs at;
    memset(&at, 0, sizeof at);
    at.naxes = -1;
    at.dtype = -1;
    const OpDef *d = op_def(op);
    for (int p = 0; p < d->nparams; p++) {
        const OpParam *pp = &d->params[p];
        if (pp->type == P_INT) at.i[pp->slot] = (int64_t)pp->default_num;
        if (pp->type != P_WIN && pp->type != P_PADW) continue;
        int64_t v = pp->default_nil ? WIN_NIL : (int64_t)pp->default_num;
        for (int k = 0; k < (pp->type == P_PADW ? 2 : 1); k++) at.pairs[pp->slot + k][0] = at.pairs[pp->slot + k][1] = v;
        if (at.npairs < pp->slot + 1 + (pp->type == P_PADW)) at.npairs = pp->slot + 1 + (pp->type == P_PADW);
    }
    return at;
}

void conv_set_win(OpAttrs *at, OpCode op, const char *name, int64_t h, int64_t w) {
    const OpParam *pp = param(op, name);
    at->pairs[pp->slot][0] = h;
    at->pairs[pp->slot][1] = w;
}

void conv_set_pad(OpAttrs *at, OpCode op, int64_t t, int64_t b, int64_t l, int64_t r) {
    const OpParam *pp = param(op, "padding");
    at->pairs[pp->slot][0] = t;
    at->pairs[pp->slot][1] = b;
    at->pairs[pp->slot + 1][0] = l;
    at->pairs[pp->slot + 1][1] = r;
}

/* The [h, w] of window attribute `name`; false when the op has none. */
static bool win_of(const OpCall *c, const char *name, int64_t *h, int64_t *w) {
    const OpParam *pp = param(c->op, name);
    if (!pp) return false;
    *h = c->at->pairs[pp->slot][0];
    *w = c->at->pairs[pp->slot][1];
    return true;
}

/* ---------- checks ---------- */

static int want_rank(const OpCall *c, int k, const char *what, int rank) {
    if (c->in[k].ndim == rank) return 0;
    op_fail("%s(): %s must be %d-D (%s), got a tensor of rank %d", name_of(c), what, rank,
            rank == 4 ? "batch, channels, height, width" : "batch, channels, length", c->in[k].ndim);
    return -1;
}

/* Every operand a tensor of x's float dtype. */
static int want_floats(const OpCall *c, const char *const *names) {
    DType dt = (DType)c->in[0].dtype;
    if (c->in[0].kind != ARG_TENSOR || (dt != DT_F32 && dt != DT_F64)) {
        op_fail("%s(): %s must be an f32 or f64 tensor, got %s", name_of(c), names[0],
                c->in[0].kind == ARG_TENSOR ? dtype_name(dt) : "a number");
        return -1;
    }
    for (int k = 1; k < c->nin; k++) {
        if (c->in[k].kind == ARG_NONE) continue;
        if (c->in[k].kind != ARG_TENSOR || c->in[k].dtype != dt) {
            op_fail("%s(): %s must be a %s tensor like %s, got %s", name_of(c), names[k], dtype_name(dt), names[0],
                    c->in[k].kind == ARG_TENSOR ? dtype_name((DType)c->in[k].dtype) : "a number");
            return -1;
        }
    }
    return 0;
}

static int positive(const OpCall *c, const char *what, int64_t h, int64_t w) {
    if (h >= 1 && w >= 1) return 0;
    op_fail("%s(): %s must be at least 1", name_of(c), what);
    return -1;
}

/* The output length of one axis; -1 with the error when the window does not fit. */
static int64_t out_len(const OpCall *c, int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t d, int64_t s) {
    int64_t span = in + p0 + p1 - d * (k - 1) - 1;
    if (span < 0) {
        op_fail("%s(): the kernel (%lld with dilation %lld) is larger than the padded input (%lld)", name_of(c),
                (long long)k, (long long)d, (long long)(in + p0 + p1));
        return -1;
    }
    return span / s + 1;
}

static int groups_of(const OpCall *c, ConvGeom *g, int64_t in_ch, int64_t out_ch) {
    g->groups = c->at->i[0];
    if (g->groups < 1) {
        op_fail("%s(): groups must be at least 1, got %lld", name_of(c), (long long)g->groups);
        return -1;
    }
    if (in_ch % g->groups || out_ch % g->groups) {
        op_fail("%s(): groups (%lld) must divide the input channels (%lld) and the output channels (%lld)", name_of(c),
                (long long)g->groups, (long long)in_ch, (long long)out_ch);
        return -1;
    }
    return 0;
}

/* stride, dilation and padding of a convolution ("same" sized here: PyTorch's, the extra
 * one at the end). 1-D calls keep the height at one tap. */
static int conv_window(const OpCall *c, ConvGeom *g, bool one_d) {
    win_of(c, "stride", &g->sh, &g->sw);
    win_of(c, "dilation", &g->dh, &g->dw);
    const OpParam *pp = param(c->op, "padding");
    const int64_t(*pad)[2] = (const int64_t(*)[2])c->at->pairs[pp->slot];
    g->pt = pad[0][0], g->pb = pad[0][1], g->pl = pad[1][0], g->pr = pad[1][1];
    if (one_d && (g->sh != g->sw || g->dh != g->dw || g->pt != g->pl)) {   /* a list of two: [h, w] */
        op_fail("%s(): stride, padding and dilation must be a number or a list of one", name_of(c));
        return -1;
    }
    if (one_d) g->sh = g->dh = 1, g->pt = g->pb = 0;
    if (positive(c, "stride", g->sh, g->sw) || positive(c, "dilation", g->dh, g->dw)) return -1;
    if (g->pl == CONV_PAD_SAME) {   /* (left: 1-D calls have no top) */
        if (c->op == OP_CONV_TRANSPOSE2D || g->sh != 1 || g->sw != 1) {
            op_fail("%s(): padding=\"same\" needs stride 1 (and a convolution that is not transposed)", name_of(c));
            return -1;
        }
        int64_t th = g->dh * (g->kh - 1), tw = g->dw * (g->kw - 1);
        g->pt = th / 2, g->pb = th - th / 2, g->pl = tw / 2, g->pr = tw - tw / 2;
        if (one_d) g->pt = g->pb = 0;
    }
    return 0;
}

/* conv1d / conv2d(x, w, b): x [n, c, (h,) w], w [o, c / groups, (kh,) kw], b [o]. */
static int geom_conv(const OpCall *c, ConvGeom *g) {
    static const char *const names[] = { "x", "w", "b" };
    bool one_d = c->op == OP_CONV1D;
    int rank = one_d ? 3 : 4;
    if (want_floats(c, names) || want_rank(c, 0, "x", rank) || want_rank(c, 1, "w", rank)) return -1;
    Shape x = in_shape(c, 0), w = in_shape(c, 1);
    g->n = x.d[0], g->c = x.d[1], g->h = one_d ? 1 : x.d[2], g->w = x.d[rank - 1];
    g->o = w.d[0], g->kh = one_d ? 1 : w.d[2], g->kw = w.d[rank - 1];
    if (groups_of(c, g, g->c, g->o)) return -1;
    if (w.d[1] * g->groups != g->c) {
        op_fail("%s(): x has %lld channels but w expects %lld (w's %lld x groups %lld)", name_of(c), (long long)g->c,
                (long long)(w.d[1] * g->groups), (long long)w.d[1], (long long)g->groups);
        return -1;
    }
    if (positive(c, "the kernel size", g->kh, g->kw) || conv_window(c, g, one_d)) return -1;
    if (c->nin > 2 && c->in[2].kind == ARG_TENSOR && (c->in[2].ndim != 1 || c->in[2].dims[0] != g->o)) {
        op_fail("%s(): b must have shape [%lld] (one per output channel)", name_of(c), (long long)g->o);
        return -1;
    }
    g->oh = out_len(c, g->h, g->pt, g->pb, g->kh, g->dh, g->sh);
    g->ow = g->oh < 0 ? -1 : out_len(c, g->w, g->pl, g->pr, g->kw, g->dw, g->sw);
    return g->ow < 0 ? -1 : 0;
}

/* conv_transpose2d(x, w, b): x [n, in, h, w], w [in, out / groups, kh, kw], b [out]. The
 * description is of the convolution it reverses: x is its output side. */
static int geom_conv_transpose(const OpCall *c, ConvGeom *g) {
    static const char *const names[] = { "x", "w", "b" };
    if (want_floats(c, names) || want_rank(c, 0, "x", 4) || want_rank(c, 1, "w", 4)) return -1;
    Shape x = in_shape(c, 0), w = in_shape(c, 1);
    g->n = x.d[0], g->o = x.d[1], g->oh = x.d[2], g->ow = x.d[3];
    g->kh = w.d[2], g->kw = w.d[3];
    if (w.d[0] != g->o) {
        op_fail("%s(): x has %lld channels but w expects %lld (w's first axis)", name_of(c), (long long)g->o, (long long)w.d[0]);
        return -1;
    }
    if (c->at->i[0] >= 1) g->c = w.d[1] * c->at->i[0];
    if (groups_of(c, g, g->o, g->c) || positive(c, "the kernel size", g->kh, g->kw) || conv_window(c, g, false)) return -1;
    int64_t oph, opw;
    win_of(c, "output_padding", &oph, &opw);
    if (oph >= g->sh || opw >= g->sw) {
        op_fail("%s(): output_padding must be smaller than stride", name_of(c));
        return -1;
    }
    if (c->nin > 2 && c->in[2].kind == ARG_TENSOR && (c->in[2].ndim != 1 || c->in[2].dims[0] != g->c)) {
        op_fail("%s(): b must have shape [%lld] (one per output channel)", name_of(c), (long long)g->c);
        return -1;
    }
    g->h = (g->oh - 1) * g->sh - g->pt - g->pb + g->dh * (g->kh - 1) + oph + 1;
    g->w = (g->ow - 1) * g->sw - g->pl - g->pr + g->dw * (g->kw - 1) + opw + 1;
    if (g->h < 1 || g->w < 1) {
        op_fail("%s(): the padding leaves no output (%lld x %lld)", name_of(c), (long long)g->h, (long long)g->w);
        return -1;
    }
    return 0;
}

/* conv2d_weight_grad(x, gy, kernel_size): the gradient of conv2d's w, gy the result's. */
static int geom_weight_grad(const OpCall *c, ConvGeom *g) {
    static const char *const names[] = { "x", "gy" };
    if (want_floats(c, names) || want_rank(c, 0, "x", 4) || want_rank(c, 1, "gy", 4)) return -1;
    Shape x = in_shape(c, 0), gy = in_shape(c, 1);
    g->n = x.d[0], g->c = x.d[1], g->h = x.d[2], g->w = x.d[3], g->o = gy.d[1];
    win_of(c, "kernel_size", &g->kh, &g->kw);
    if (groups_of(c, g, g->c, g->o) || positive(c, "kernel_size", g->kh, g->kw) || conv_window(c, g, false)) return -1;
    g->oh = out_len(c, g->h, g->pt, g->pb, g->kh, g->dh, g->sh);
    g->ow = g->oh < 0 ? -1 : out_len(c, g->w, g->pl, g->pr, g->kw, g->dw, g->sw);
    if (g->ow < 0) return -1;
    if (gy.d[0] != g->n || gy.d[2] != g->oh || gy.d[3] != g->ow) {
        op_fail("%s(): gy must have shape [%lld, %lld, %lld, %lld] (the convolution's result)", name_of(c), (long long)g->n,
                (long long)g->o, (long long)g->oh, (long long)g->ow);
        return -1;
    }
    return 0;
}

/* The pools: x [n, c, h, w]; the backward rows take x and the result's gradient gy. */
static int geom_pool(const OpCall *c, ConvGeom *g) {
    static const char *const names[] = { "x", "gy" };
    if (want_floats(c, names) || want_rank(c, 0, "x", 4)) return -1;
    Shape x = in_shape(c, 0);
    g->n = x.d[0], g->c = g->o = g->groups = x.d[1], g->h = x.d[2], g->w = x.d[3];
    g->dh = g->dw = 1;
    bool adaptive = c->op == OP_ADAPTIVE_AVG_POOL2D || c->op == OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    if (adaptive) {
        g->kh = g->kw = g->sh = g->sw = 1;
        g->pt = g->pb = g->pl = g->pr = 0;
        if (c->op == OP_ADAPTIVE_AVG_POOL2D) {
            win_of(c, "output_size", &g->oh, &g->ow);
            if (positive(c, "output_size", g->oh, g->ow)) return -1;
        } else if (c->in[1].ndim == 4) {
            g->oh = c->in[1].dims[2], g->ow = c->in[1].dims[3];
        }
        if (g->oh < 1 || g->ow < 1 || g->h < 1 || g->w < 1) {
            op_fail("%s(): the input and the output must not be empty", name_of(c));
            return -1;
        }
    } else {
        win_of(c, "kernel_size", &g->kh, &g->kw);
        win_of(c, "stride", &g->sh, &g->sw);
        win_of(c, "padding", &g->pt, &g->pl);
        if (g->sh == WIN_NIL && g->sw == WIN_NIL) g->sh = g->kh, g->sw = g->kw;
        g->pb = g->pt, g->pr = g->pl;
        if (positive(c, "kernel_size", g->kh, g->kw) || positive(c, "stride", g->sh, g->sw)) return -1;
        if (2 * g->pt > g->kh || 2 * g->pl > g->kw) {
            op_fail("%s(): padding must be at most half the kernel size", name_of(c));
            return -1;
        }
        g->oh = out_len(c, g->h, g->pt, g->pb, g->kh, 1, g->sh);
        g->ow = g->oh < 0 ? -1 : out_len(c, g->w, g->pl, g->pr, g->kw, 1, g->sw);
        if (g->ow < 0) return -1;
    }
    bool backward = c->op == OP_MAX_POOL2D_BACKWARD || c->op == OP_AVG_POOL2D_BACKWARD || c->op == OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    if (backward) {
        Shape gy = in_shape(c, 1);
        if (gy.ndim != 4 || gy.d[0] != g->n || gy.d[1] != g->c || gy.d[2] != g->oh || gy.d[3] != g->ow) {
            op_fail("%s(): gy must have shape [%lld, %lld, %lld, %lld] (the pool's result)", name_of(c), (long long)g->n,
                    (long long)g->c, (long long)g->oh, (long long)g->ow);
            return -1;
        }
    }
    return 0;
}

int conv_geom(const OpCall *c, ConvGeom *g) {
    memset(g, 0, sizeof *g);
    switch (c->op) {
    case OP_CONV1D: case OP_CONV2D: return geom_conv(c, g);
    case OP_CONV_TRANSPOSE2D: return geom_conv_transpose(c, g);
    case OP_CONV2D_WEIGHT_GRAD: return geom_weight_grad(c, g);
    default: return geom_pool(c, g);
    }
}

static Shape shape4(int64_t a, int64_t b, int64_t h, int64_t w) { return (Shape){ 4, { a, b, h, w } }; }

int infer_conv(const OpCall *c, Shape *out, DType *dt) {
    ConvGeom g;
    if (conv_geom(c, &g)) return -1;
    switch (c->op) {
    case OP_CONV1D: out[0] = (Shape){ 3, { g.n, g.o, g.ow } }; break;
    case OP_CONV2D: out[0] = shape4(g.n, g.o, g.oh, g.ow); break;
    case OP_CONV_TRANSPOSE2D: out[0] = shape4(g.n, g.c, g.h, g.w); break;
    default: out[0] = shape4(g.o, g.c / g.groups, g.kh, g.kw); break;
    }
    dt[0] = (DType)c->in[0].dtype;
    return shape_count(&out[0]) < 0 ? -1 : 0;
}

int infer_pool(const OpCall *c, Shape *out, DType *dt) {
    ConvGeom g;
    if (conv_geom(c, &g)) return -1;
    bool backward = c->op == OP_MAX_POOL2D_BACKWARD || c->op == OP_AVG_POOL2D_BACKWARD || c->op == OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    out[0] = backward ? shape4(g.n, g.c, g.h, g.w) : shape4(g.n, g.c, g.oh, g.ow);
    dt[0] = (DType)c->in[0].dtype;
    return 0;
}
