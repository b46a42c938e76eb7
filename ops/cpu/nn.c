/* nn.c - CPU kernels of the neural-network ops of issue 28 (ops.def's last block) that are
 * not elementwise rows: each a plain loop in the result's dtype, one element's value a
 * function of its inputs alone, so eager and static code give the same bits. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "cpu.h"

/* PyTorch's softplus: x where beta x > threshold, else log1p(exp(beta x)) / beta, in T */
#define SOFTPLUS(T, EXP, LOG1P)                                                  \
    static void softplus_##T(const T *x, T *y, int64_t n, T beta, T threshold) { \
        for (int64_t i = 0; i < n; i++) {                                        \
            T bx = x[i] * beta;                                                  \
            y[i] = bx > threshold ? x[i] : LOG1P(EXP(bx)) / beta;                \
        }                                                                        \
    }
SOFTPLUS(float, expf, log1pf)
SOFTPLUS(double, exp, log1p)

int cpu_act(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    Tensor *tmp;
    ScalarBox box;
    const Tensor *x = operand_as(&c->in[0], dt, &tmp, &box);
    if (!x) return -1;
    if (dt == DT_F32) softplus_float(x->data, out[0]->data, x->size, (float)c->at->f[0], (float)c->at->f[1]);
    else softplus_double(x->data, out[0]->data, x->size, c->at->f[0], c->at->f[1]);
    tensor_release(tmp);
    return 0;
}

/* ---------- normalizations ---------- */

/* Where a normalization's groups lie in x: `rows` groups of `k` elements, each contiguous
 * (layer_norm, rms_norm, group_norm); or, for batch_norm, a channel's elements: n blocks of
 * s apart by c * s. The affine parameters are per element of a row (layer, rms) or per
 * channel (group, batch). */
typedef struct {
    int64_t rows, k;          /* contiguous groups */
    int64_t n, c, s;          /* [N, C, S] (group_norm: the channel of a row's element) */
    int64_t groups;           /* group_norm's G */
    bool center;              /* subtract the mean (all but rms_norm) */
    double eps;
} NormPlan;

/* The statistics of one group: mean (0 for rms) and 1 / sqrt(var + eps), in f64, two passes. */
#define NORM_KERNELS(T)                                                                           \
    static void stats_##T(const T *x, int64_t count, int64_t block, int64_t stride, bool center,    \
                          double eps, double *mean, double *rstd) {                              \
        double sum = 0, sq = 0;                                                                   \
        for (int64_t i = 0; i < count; i++) sum += x[(i / block) * stride + i % block];           \
        double mu = center && count ? sum / (double)count : 0;                                    \
        for (int64_t i = 0; i < count; i++) {                                                     \
            double d = x[(i / block) * stride + i % block] - mu;                                  \
            sq += d * d;                                                                          \
        }                                                                                         \
        *mean = mu;                                                                               \
        *rstd = 1 / sqrt(sq / (double)count + eps);                                               \
    }                                                                                             \
    static void rows_##T(const NormPlan *p, const T *x, const T *w, const T *b, T *y) {           \
        for (int64_t r = 0; r < p->rows; r++) {                                                   \
            const T *xr = x + r * p->k;                                                           \
            double mu, rs;                                                                        \
            stats_##T(xr, p->k, p->k, 0, p->center, p->eps, &mu, &rs);                            \
            for (int64_t i = 0; i < p->k; i++) {                                                  \
                int64_t a = p->groups ? (r % p->groups) * (p->c / p->groups) + i / p->s : i;      \
                double v = (xr[i] - mu) * rs;                                                     \
                if (w) v *= w[a];                                                                 \
                if (b) v += b[a];                                                                 \
                y[r * p->k + i] = (T)v;                                                           \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static void channels_##T(const NormPlan *p, const T *x, const T *rm, const T *rv, const T *w, \
                             const T *b, T *y) {                                                  \
        for (int64_t ch = 0; ch < p->c; ch++) {                                                   \
            double mu, rs;                                                                        \
            if (rm) mu = rm[ch], rs = 1 / sqrt((double)rv[ch] + p->eps);                          \
            else stats_##T(x + ch * p->s, p->n * p->s, p->s, p->c * p->s, true, p->eps, &mu, &rs); \
            for (int64_t j = 0; j < p->n * p->s; j++) {                                           \
                int64_t at = (j / p->s) * p->c * p->s + ch * p->s + j % p->s;                     \
                double v = (x[at] - mu) * rs;                                                     \
                if (w) v *= w[ch];                                                                \
                if (b) v += b[ch];                                                                \
                y[at] = (T)v;                                                                     \
            }                                                                                     \
        }                                                                                         \
    }
NORM_KERNELS(float)
NORM_KERNELS(double)

/* Operand k in dtype dt, or NULL when absent (*ok false on a failed conversion). */
static const void *opt_data(const OpCall *c, int k, DType dt, Tensor **tmp, ScalarBox *box, bool *ok) {
    *tmp = NULL;
    if (k >= c->nin || c->in[k].kind == ARG_NONE) return NULL;
    const Tensor *t = operand_as(&c->in[k], dt, tmp, box);
    if (!t) *ok = false;
    return t ? t->data : NULL;
}

int cpu_norm(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    const Tensor *x0 = c->in[0].t;
    NormPlan p = { .rows = 1, .k = 1, .n = 1, .c = 1, .s = 1, .center = c->op != OP_RMS_NORM };
    /* operand slots: layer (w 1, b 2), rms (w 1), group (w 1, b 2), batch (rm 1, rv 2, w 3, b 4) */
    int wk = 1, bk = c->op == OP_RMS_NORM ? -1 : 2;
    if (c->op == OP_LAYER_NORM || c->op == OP_RMS_NORM) {
        for (int i = 0; i < c->at->shape.ndim; i++) p.k *= c->at->shape.d[i];
        p.rows = p.k ? x0->size / p.k : 0;
        p.eps = c->op == OP_RMS_NORM && !op_given(c, 3) ? (dt == DT_F32 ? FLT_EPSILON : DBL_EPSILON)
                                                         : c->at->f[0];
    } else {
        p.n = x0->shape[0], p.c = x0->shape[1];
        for (int i = 2; i < x0->ndim; i++) p.s *= x0->shape[i];
        if (c->op == OP_GROUP_NORM) {
            p.groups = c->at->i[0];
            p.rows = p.n * p.groups, p.k = p.c / p.groups * p.s;
            p.eps = c->at->f[0];
        } else {
            wk = 3, bk = 4;
            p.eps = c->at->f[1];
        }
    }
    bool ok = true;
    Tensor *tmp[5] = { NULL };
    ScalarBox box[5];
    const void *x = opt_data(c, 0, dt, &tmp[0], &box[0], &ok), *w = opt_data(c, wk, dt, &tmp[1], &box[1], &ok),
               *b = bk > 0 ? opt_data(c, bk, dt, &tmp[2], &box[2], &ok) : NULL, *rm = NULL, *rv = NULL;
    if (c->op == OP_BATCH_NORM && !c->at->flag) {   /* the running statistics: only when evaluating */
        rm = opt_data(c, 1, dt, &tmp[3], &box[3], &ok);
        rv = opt_data(c, 2, dt, &tmp[4], &box[4], &ok);
    }
    if (ok && c->op == OP_BATCH_NORM) {
        if (dt == DT_F32) channels_float(&p, x, rm, rv, w, b, out[0]->data);
        else channels_double(&p, x, rm, rv, w, b, out[0]->data);
    } else if (ok) {
        if (dt == DT_F32) rows_float(&p, x, w, b, out[0]->data);
        else rows_double(&p, x, w, b, out[0]->data);
    }
    for (int k = 0; k < 5; k++) tensor_release(tmp[k]);
    return ok ? 0 : -1;
}

/* ---------- cross_entropy ---------- */

/* Per row, in f64: lse = m + log(sum(exp(x - m))); the loss (1 - e) (lse - x[label]) +
 * e (lse - mean(x)) (PyTorch's label smoothing), averaged over the rows. */
#define XENT(T)                                                                                    \
    static int xent_##T(const T *x, const int64_t *lab, int64_t n, int64_t k, double eps, T *out) { \
        double total = 0;                                                                          \
        for (int64_t r = 0; r < n; r++) {                                                          \
            const T *xr = x + r * k;                                                               \
            if (lab[r] < 0 || lab[r] >= k) {                                                       \
                op_fail("cross_entropy(): label %lld is out of range for %lld classes",             \
                        (long long)lab[r], (long long)k);                                           \
                return -1;                                                                         \
            }                                                                                      \
            double m = -INFINITY, s = 0, sx = 0;                                                   \
            for (int64_t j = 0; j < k; j++) m = xr[j] > m ? xr[j] : m;                             \
            for (int64_t j = 0; j < k; j++) s += exp(xr[j] - m), sx += xr[j];                      \
            double lse = m + log(s);                                                               \
            total += (1 - eps) * (lse - xr[lab[r]]) + (eps > 0 ? eps * (lse - sx / (double)k) : 0); \
        }                                                                                          \
        *out = (T)(total / (double)n);                                                             \
        return 0;                                                                                  \
    }
XENT(float)
XENT(double)

int cpu_xent(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    Tensor *tmp;
    ScalarBox box;
    const Tensor *x = operand_as(&c->in[0], dt, &tmp, &box);
    if (!x) return -1;
    const int64_t *lab = c->in[1].t->data;
    int64_t n = x->shape[0], k = x->shape[1];
    int rc = dt == DT_F32 ? xent_float(x->data, lab, n, k, c->at->f[0], out[0]->data)
                          : xent_double(x->data, lab, n, k, c->at->f[0], out[0]->data);
    tensor_release(tmp);
    return rc;
}

/* ---------- gather, scatter along an axis ---------- */

/* Row-major strides of a shape, in elements. */
static void strides_of(const int64_t *d, int nd, int64_t *st) {
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) st[i] = s, s *= d[i];
}

/* Adds v into *p, in dtype dt (bool: or). */
static void add_into(DType dt, char *p, const char *v) {
    switch (dt) {
    case DT_F32: *(float *)p += *(const float *)v; break;
    case DT_F64: *(double *)p += *(const double *)v; break;
    case DT_I64: *(int64_t *)p = (int64_t)((uint64_t) * (int64_t *)p + (uint64_t) * (const int64_t *)v); break;
    default: *(uint8_t *)p = *(uint8_t *)p | *(const uint8_t *)v; break;
    }
}

/* Walks every element of the index: gather copies x's element at the index into out;
 * scatter writes (or adds) src's element there in out, a copy of x. */
int cpu_gather_axis(const OpCall *c, Tensor **out) {
    const Tensor *x = c->in[0].t, *ix = c->in[1].t;
    DType dt = x->dtype;
    size_t es = dtype_size(dt);
    int nd = x->ndim, ax = c->at->axis < 0 ? c->at->axis + nd : c->at->axis;
    bool gather = c->op == OP_GATHER, add = !gather && c->at->i[0] == 1;
    Tensor *tmp = NULL;
    ScalarBox box;
    const Tensor *src = gather ? NULL : operand_as(&c->in[2], dt, &tmp, &box);
    if (!gather && !src) return -1;
    if (!gather) memcpy(out[0]->data, x->data, (size_t)x->size * es);
    int64_t xs[TSL_MAX_RANK], is[TSL_MAX_RANK], ss[TSL_MAX_RANK], co[TSL_MAX_RANK] = { 0 };
    strides_of(x->shape, nd, xs);
    strides_of(ix->shape, nd, is);
    if (src && src->ndim) strides_of(src->shape, nd, ss);
    const int64_t *idx = ix->data;
    int64_t extent = nd ? x->shape[ax] : 1;   /* a 0-d x: one element, index 0 */
    int rc = 0;
    for (int64_t e = 0; e < ix->size; e++) {
        int64_t rest = e, xo = 0, so = 0;
        for (int d = 0; d < nd; d++) co[d] = rest / is[d], rest %= is[d];
        int64_t v = idx[e];
        if (v < 0 || v >= extent) {
            op_fail("%s(): index %lld is out of range for axis %d of size %lld", op_info[c->op].name, (long long)v, ax,
                    (long long)extent);
            rc = -1;
            break;
        }
        for (int d = 0; d < nd; d++) {
            xo += (d == ax ? v : co[d]) * xs[d];   /* (0-d: no axes, offset 0) */
            if (src && src->ndim) so += co[d] * ss[d];
        }
        if (gather) memcpy((char *)out[0]->data + e * (int64_t)es, (const char *)x->data + xo * (int64_t)es, es);
        else if (add) add_into(dt, (char *)out[0]->data + xo * (int64_t)es, (const char *)src->data + so * (int64_t)es);
        else memcpy((char *)out[0]->data + xo * (int64_t)es, (const char *)src->data + so * (int64_t)es, es);
    }
    tensor_release(tmp);
    return rc;
}

/* ---------- masked_fill ---------- */

int cpu_masked_fill(const OpCall *c, Tensor **out) {
    const Tensor *x = c->in[0].t;
    DType dt = x->dtype;
    size_t es = dtype_size(dt);
    Tensor *tv = NULL;
    ScalarBox box;
    const Tensor *v = operand_as(&c->in[2], dt, &tv, &box);
    if (!v) return -1;
    if (v->size != 1) {
        tensor_release(tv);
        op_fail("masked_fill(): value must be a number or a one-element tensor, got %lld elements", (long long)v->size);
        return -1;
    }
    Shape s;
    shape_of(x, &s);
    const Tensor *m = c->in[1].t;
    Tensor *full = m->size == x->size ? NULL : op_broadcast_to(m, &s);
    if (m->size != x->size && !full) {
        tensor_release(tv);
        return -1;
    }
    const uint8_t *mk = (full ? full : m)->data;
    char *y = out[0]->data;
    if (y != x->data) memcpy(y, x->data, (size_t)x->size * es);
    for (int64_t i = 0; i < x->size; i++)
        if (mk[i]) memcpy(y + i * (int64_t)es, v->data, es);
    tensor_release(full);
    tensor_release(tv);
    return 0;
}
