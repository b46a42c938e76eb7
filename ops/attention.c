/* attention.c - scaled_dot_product_attention's shape rule and its composed form.
 *
 * The op (ops.def SDPA) follows PyTorch's F.scaled_dot_product_attention: q [..., L, D],
 * k [..., S, D], v [..., S, Dv] give [..., L, Dv]; the leading (batch) axes broadcast; the
 * scale is 1/sqrt(D); a bool mask keeps the scores where it is true, a float mask is added;
 * causal keeps key j for query i when j <= i (top-left aligned, as torch's tril). The CPU
 * kernel (ops/cpu/attention.c) never makes the L x S matrix; the composed form here does
 * (scores, then softmax), and is what the backward rule (ops/grad.c r_sdpa) and the GPU
 * (ops/gpu/gpu.c) build with ops. */
#include <math.h>
#include <string.h>
#include "attention.h"
#include "infer.h"

/* The batch axes (all but the last two) of s into *b. */
static void batch_of(const Shape *s, Shape *b) {
    b->ndim = s->ndim - 2;
    memcpy(b->d, s->d, sizeof(int64_t) * (size_t)b->ndim);
}

static int attn_fail(const char *what, const Shape *a, const Shape *b) {
    char s1[600], s2[600];
    op_fail("scaled_dot_product_attention: %s, got %s and %s", what, shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2));
    return -1;
}

int infer_attention(const OpCall *c, Shape *out, DType *dt) {
    Shape q, k, v, bq, bk, bv, b1, b;
    op_arg_shape(&c->in[0], &q);
    op_arg_shape(&c->in[1], &k);
    op_arg_shape(&c->in[2], &v);
    if (q.ndim < 2 || k.ndim < 2 || v.ndim < 2) {
        const Shape *s = q.ndim < 2 ? &q : k.ndim < 2 ? &k : &v;
        char s1[600];
        op_fail("scaled_dot_product_attention: q, k and v need at least 2 dimensions [..., T, D], got %s", shape_str(s, s1, sizeof s1));
        return -1;
    }
    if (q.d[q.ndim - 1] != k.d[k.ndim - 1]) return attn_fail("q and k must have the same last dimension", &q, &k);
    if (k.d[k.ndim - 2] != v.d[v.ndim - 2]) return attn_fail("k and v must have the same number of keys (dimension -2)", &k, &v);
    batch_of(&q, &bq);
    batch_of(&k, &bk);
    batch_of(&v, &bv);
    if (shape_broadcast(&bq, &bk, &b1, "scaled_dot_product_attention") || shape_broadcast(&b1, &bv, &b, "scaled_dot_product_attention"))
        return -1;
    DType p = op_promote(c->in, 3);
    *dt = dtype_is_float(p) ? p : DT_F32;
    if (c->nin > 3 && c->in[3].kind != ARG_NONE) {
        Shape m, full = b;
        op_arg_shape(&c->in[3], &m);
        full.d[full.ndim++] = q.d[q.ndim - 2];
        full.d[full.ndim++] = k.d[k.ndim - 2];
        if (c->in[3].dtype == DT_I64) {
            op_fail("scaled_dot_product_attention: mask must be bool (keep where true) or float (added), got i64");
            return -1;
        }
        Shape r;
        char s1[600], s2[600];
        /* the mask may add batch axes, as PyTorch's added scores do */
        if (shape_broadcast(&m, &full, &r, "scaled_dot_product_attention") || r.d[r.ndim - 2] != full.d[full.ndim - 2] ||
            r.d[r.ndim - 1] != full.d[full.ndim - 1]) {
            op_fail("scaled_dot_product_attention: mask of shape %s does not broadcast to the scores' shape %s",
                    shape_str(&m, s1, sizeof s1), shape_str(&full, s2, sizeof s2));
            return -1;
        }
        b = r;
        b.ndim -= 2;
    }
    *out = b;
    out->d[out->ndim++] = q.d[q.ndim - 2];
    out->d[out->ndim++] = v.d[v.ndim - 1];
    return 0;
}

double attn_scale(int64_t d) { return 1.0 / sqrt((double)d); }

/* An i64 [n, 1] (axis 0) or [1, n] (axis 1) column of 1..n. */
static GVal iota(GradBuilder *b, int64_t n, int axis) {
    OpAttrs at = attrs_default();
    at.shape.ndim = 2;
    at.shape.d[0] = axis == 0 ? n : 1;
    at.shape.d[1] = axis == 0 ? 1 : n;
    at.dtype = DT_I64;
    GVal ones = gb_op(b, OP_ONES, NULL, 0, &at);
    OpAttrs ca = attrs_default();
    ca.axis = axis;
    return gb_op(b, OP_CUMSUM, &ones, 1, &ca);
}

GVal attn_probs(GradBuilder *b, GVal q, GVal k, GVal mask, bool causal) {
    if (!q.ok || !k.ok) return gb_none();
    OpAttrs kt = attrs_default();   /* q @ k^T: matmul(q, k, transpose_b=true), no copy of k^T */
    kt.flag2 = true;
    kt.given = 1u << 3;
    GVal in[2] = { q, k };
    GVal s = gb_mul(b, gb_op(b, OP_MATMUL, in, 2, &kt), gb_num(attn_scale(q.shape.d[q.shape.ndim - 1])));
    if (mask.ok && mask.dtype == DT_BOOL) {
        GVal w[3] = { mask, s, gb_num(-INFINITY) };
        s = gb_op(b, OP_WHERE, w, 3, NULL);
    } else if (mask.ok) {
        s = gb_add(b, s, mask);
    }
    if (causal) {   /* keep j <= i: 1..S along the keys against 1..L down the queries */
        GVal keep = gb_op(b, OP_LE, (GVal[2]){ iota(b, k.shape.d[k.shape.ndim - 2], 1), iota(b, q.shape.d[q.shape.ndim - 2], 0) }, 2, NULL);
        GVal w[3] = { keep, s, gb_num(-INFINITY) };
        s = gb_op(b, OP_WHERE, w, 3, NULL);
    }
    OpAttrs at = attrs_default();
    at.axis = -1;
    return gb_op(b, OP_SOFTMAX, &s, 1, &at);
}

GVal attn_composed(GradBuilder *b, GVal q, GVal k, GVal v, GVal mask, bool causal) {
    GVal in[2] = { attn_probs(b, q, k, mask, causal), v };
    return gb_op(b, OP_MATMUL, in, 2, NULL);
}
