/* gpu_axis.c - the GPU's ops along axes: reductions (fixed trees, any axes), var, std,
 * norm and logsumexp composed as the CPU's rows compute them, softmax, cumsum, cumprod,
 * trace, diff, take, scatter_add and outer. See gpu.c. */
#include <math.h>
#include <string.h>
#include "gpu_impl.h"
#include "infer.h"

/* ---------- reductions and softmax ---------- */

bool gpu_reduce_op(OpCode op) {
    switch (op) {
    case OP_SUM: case OP_MEAN: case OP_MAX: case OP_MIN: case OP_PROD: case OP_ARGMAX: case OP_ARGMIN:
    case OP_ALL: case OP_ANY: case OP_VAR: case OP_STD: case OP_NORM: case OP_LOGSUMEXP: return true;
    default: return false;
    }
}

/* t's elements permuted into out (out's axis d is t's axis perm[d]). */
int gpu_permute_into(const Tensor *t, const int *perm, Tensor *out) {
    int64_t src[TSL_MAX_RANK], stride[TSL_MAX_RANK], k = 1;
    for (int d = t->ndim - 1; d >= 0; d--) { src[d] = k; k *= t->shape[d]; }
    for (int d = 0; d < t->ndim; d++) stride[d] = src[perm[d]];
    return gpu_gather(t, stride, out);
}

/* A NEW GPU tensor: t's elements permuted. */
Tensor *gpu_permuted(const Tensor *t, const int *perm) {
    Shape s = { t->ndim, { 0 } };
    for (int d = 0; d < t->ndim; d++) s.d[d] = t->shape[perm[d]];
    Tensor *r = gpu_alloc(t->dtype, &s);
    if (r && gpu_permute_into(t, perm, r)) {
        tensor_release(r);
        r = NULL;
    }
    return r;
}

/* The input of a reduction as the view [outer, len, inner] the plugin reduces: t itself
 * (retained) when the reduced axes are one adjacent run, else a copy with them moved last,
 * in order (inner 1), as the CPU's reduction moves them. */
static Tensor *reduce_input(const OpCall *c, const Tensor *t, int64_t *outer, int64_t *len, int64_t *inner) {
    bool mask[TSL_MAX_RANK] = { false };
    int n = t->ndim ? c->at->naxes : -1;   /* a 0-d tensor reduces to itself */
    if (n < 0) for (int d = 0; d < t->ndim; d++) mask[d] = true;
    for (int i = 0; i < n; i++) mask[((c->at->axes[i] % t->ndim) + t->ndim) % t->ndim] = true;
    int lo = 0, hi = t->ndim, perm[TSL_MAX_RANK], np = 0;
    while (lo < t->ndim && !mask[lo]) lo++;
    while (hi > lo && !mask[hi - 1]) hi--;
    bool adjacent = true;
    *outer = *len = *inner = 1;
    for (int d = 0; d < t->ndim; d++) {
        adjacent &= !(d >= lo && d < hi && !mask[d]);
        *(mask[d] ? len : outer) *= t->shape[d];
    }
    if (adjacent) {
        *outer = *len = 1;
        for (int d = 0; d < t->ndim; d++) *(d < lo ? outer : d < hi ? len : inner) *= t->shape[d];
        return tensor_retain((Tensor *)t);
    }
    for (int d = 0; d < t->ndim; d++) if (!mask[d]) perm[np++] = d;
    for (int d = 0; d < t->ndim; d++) if (mask[d]) perm[np++] = d;
    return gpu_permuted(t, perm);
}

/* One reduction of x ([outer, len, inner]) into out (outer * inner elements). */
static int reduce_into(OpCode op, const Tensor *x, Tensor *out, int64_t outer, int64_t len, int64_t inner) {
    CudaReduce j = { .op = op, .dt = x->dtype, .out_dt = out->dtype, .in = x->data, .out = out->data,
                     .outer = outer, .len = len, .inner = inner };
    char err[400];
    return GPU_CALL(reduce, &j);
}

/* x as a tensor of shape [a, b, c] sharing its buffer. */
static Tensor *view3(Tensor *x, int64_t a, int64_t b, int64_t c) {
    Shape s = { 3, { a, b, c } };
    return tensor_view(x, &s);
}

/* var, std and norm, as the CPU's rows compute them: the mean, the squared deviations and
 * their mean (the square root for std); the squares and their sum, then its root (norm). */
static int composite_into(OpCode op, Tensor *x, Tensor *res, int64_t outer, int64_t len, int64_t inner) {
    DType dt = x->dtype;
    Shape sq = { 3, { outer, len, inner } }, sm = { 3, { outer, 1, inner } };
    Tensor *xv = view3(x, outer, len, inner), *tmp = xv ? gpu_alloc(dt, &sq) : NULL, *m = NULL;
    double num[2] = { 0, 0 };
    int rc = tmp ? 0 : -1;
    if (rc == 0 && op != OP_NORM) {   /* tmp = (x - mean)^2 */
        rc = (m = gpu_alloc(dt, &sm)) ? reduce_into(OP_MEAN, xv, m, outer, len, inner) : -1;
        if (rc == 0) rc = gpu_ew_launch(OP_SUB, dt, 2, (Tensor *[]){ xv, m }, num, tmp, 0);
        if (rc == 0) rc = gpu_ew_launch(OP_MUL, dt, 2, (Tensor *[]){ tmp, tmp }, num, tmp, 0);
    } else if (rc == 0) {             /* tmp = x^2 */
        rc = gpu_ew_launch(OP_MUL, dt, 2, (Tensor *[]){ xv, xv }, num, tmp, 0);
    }
    if (rc == 0) rc = reduce_into(op == OP_NORM ? OP_SUM : OP_MEAN, tmp, res, outer, len, inner);
    if (rc == 0 && op != OP_VAR) rc = gpu_ew_launch(OP_SQRT, dt, 1, (Tensor *[]){ res }, num, res, 0);
    tensor_release(m);
    tensor_release(tmp);
    tensor_release(xv);
    return rc;
}

/* logsumexp as the CPU's rows: m = max (NaN wins); m where it is not finite (NaN, +-inf, and
 * -inf for an empty axis), else m + log(sum(exp(x - m))). */
static int logsumexp_into(Tensor *x, Tensor *res, int64_t outer, int64_t len, int64_t inner) {
    DType dt = x->dtype;
    Shape sq = { 3, { outer, len, inner } }, sm = { 3, { outer, 1, inner } };
    Tensor *xv = view3(x, outer, len, inner), *tmp = xv ? gpu_alloc(dt, &sq) : NULL;
    Tensor *m = tmp ? gpu_alloc(dt, &sm) : NULL, *fin = m ? gpu_alloc(DT_BOOL, &sm) : NULL;
    double num[2] = { 0, 0 };
    int rc = fin ? reduce_into(OP_MAX, xv, m, outer, len, inner) : -1;
    if (len == 0 && rc == 0) rc = gpu_ew_launch(OP_SUB, dt, 2, (Tensor *[]){ NULL, NULL }, (double[]){ 0, INFINITY }, m, 0);
    if (rc == 0) rc = gpu_ew_launch(OP_SUB, dt, 2, (Tensor *[]){ xv, m }, num, tmp, 0);
    if (rc == 0) rc = gpu_ew_launch(OP_EXP, dt, 1, (Tensor *[]){ tmp }, num, tmp, 0);
    if (rc == 0) rc = reduce_into(OP_SUM, tmp, res, outer, len, inner);
    if (rc == 0) rc = gpu_ew_launch(OP_LOG, dt, 1, (Tensor *[]){ res }, num, res, 0);
    if (rc == 0) rc = gpu_ew_launch(OP_ADD, dt, 2, (Tensor *[]){ m, res }, num, res, 0);
    if (rc == 0) rc = gpu_ew_launch(OP_ISFINITE, dt, 1, (Tensor *[]){ m }, num, fin, 0);
    char err[400];
    if (rc == 0) {
        int64_t st[3][TSL_MAX_RANK] = { { 1 }, { 1 }, { 1 } };
        rc = GPU_CALL(where, (int)dtype_size(dt), 1, (int64_t[]){ res->size }, (const int64_t(*)[TSL_CUDA_MAX_RANK])st,
                  fin->data, res->data, m->data, res->data, res->size);
    }
    tensor_release(fin);
    tensor_release(m);
    tensor_release(tmp);
    tensor_release(xv);
    return rc;
}

/* Reductions over any axes. mean, var, std and norm of integers compute in f64 and round to
 * the result's f32, as the CPU does. */
int gpu_run_reduce(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int64_t outer, len, inner;
    Tensor *x = reduce_input(c, t, &outer, &len, &inner);
    if (!x) return -1;
    bool floats = c->op == OP_MEAN || c->op == OP_VAR || c->op == OP_STD || c->op == OP_NORM || c->op == OP_LOGSUMEXP;
    DType in = floats && !dtype_is_float(t->dtype) ? DT_F64 : t->dtype;
    Tensor *xc = gpu_as_dtype(x, in), *res = NULL;
    tensor_release(x);
    if (!xc) return -1;
    Shape rs = { 1, { outer * inner } };
    res = floats && in != out->dtype ? gpu_alloc(in, &rs) : tensor_retain(out);
    int rc = -1;
    if (res) {
        bool composite = c->op == OP_VAR || c->op == OP_STD || c->op == OP_NORM;
        rc = c->op == OP_LOGSUMEXP ? logsumexp_into(xc, res, outer, len, inner)
             : composite ? composite_into(c->op, xc, res, outer, len, inner)
                         : reduce_into(c->op, xc, res, outer, len, inner);
        char err[400];
        if (rc == 0 && res != out) rc = GPU_CALL(astype, res->dtype, out->dtype, res->data, out->data, out->size);
    }
    tensor_release(res);
    tensor_release(xc);
    return rc;
}

bool gpu_softmax_supported(const OpCall *c) {
    const Tensor *t = c->in[0].t;
    return dtype_is_float(t->dtype) && t->ndim > 0;
}

/* softmax and log_softmax along the last axis; along another one the axis is moved last
 * first and back after. */
int gpu_run_softmax(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int nd = t->ndim, ax = c->at->axis < 0 ? c->at->axis + nd : c->at->axis;
    int64_t len = t->shape[ax], rows = len ? t->size / len : 0;
    char err[400];
    if (ax == nd - 1) return GPU_CALL(softmax, c->op, t->dtype, t->data, out->data, rows, len);
    int perm[TSL_MAX_RANK], back[TSL_MAX_RANK], np = 0;
    for (int d = 0; d < nd; d++) if (d != ax) perm[np++] = d;
    perm[np] = ax;
    for (int d = 0; d < nd; d++) back[perm[d]] = d;
    Tensor *x = gpu_permuted(t, perm), *y = NULL;
    Shape s;
    if (x) shape_of(x, &s);
    int rc = x && (y = gpu_alloc(x->dtype, &s)) ? GPU_CALL(softmax, c->op, t->dtype, x->data, y->data, rows, len) : -1;
    if (rc == 0) rc = gpu_permute_into(y, back, out);
    tensor_release(x);
    tensor_release(y);
    return rc;
}

/* ---------- along an axis ---------- */

/* cumsum and cumprod: each line along the axis in order (the CPU's bits). */
int gpu_run_cum(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int ax = c->at->axis < 0 ? c->at->axis + t->ndim : c->at->axis;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++) outer *= t->shape[d];
    for (int d = ax + 1; d < t->ndim; d++) inner *= t->shape[d];
    if (t->size == 0) return 0;
    char err[400];
    return GPU_CALL(lines, c->op == OP_CUMPROD, t->dtype, outer, t->shape[ax], inner, 0, t->data, out->data);
}

/* trace: for each trailing position r, t[k, k, r] summed over k in order (the CPU's bits). */
int gpu_run_trace(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int64_t d0 = t->shape[0], d1 = t->shape[1], rest = out->size;
    char err[400];
    return GPU_CALL(lines, 2, t->dtype, 1, d0 < d1 ? d0 : d1, rest, (d1 + 1) * rest, t->data, out->data);
}

/* diff: t one step along the axis minus t (bool: not equal), as one strided elementwise
 * launch over two offsets of t's own buffer. */
int gpu_run_diff(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int ax = c->at->axis < 0 ? c->at->axis + t->ndim : c->at->axis;
    CudaEw j;
    memset(&j, 0, sizeof j);
    j.op = t->dtype == DT_BOOL ? OP_NE : OP_SUB;
    j.ct = t->dtype;
    j.out_dt = out->dtype;
    j.nin = 2;
    j.form = 's';
    j.n = out->size;
    j.ndim = out->ndim;
    j.p = 1;
    j.q = 1;
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        j.shape[d] = out->shape[d];
        j.stride[0][d] = j.stride[1][d] = s;
        s *= t->shape[d];
    }
    j.in[0] = (const char *)t->data + (size_t)j.stride[0][ax] * dtype_size(t->dtype);   /* the next element */
    j.in[1] = t->data;
    j.out = out->data;
    char err[400];
    return out->size ? GPU_CALL(ew, &j) : 0;
}

/* The CPU's message for position k of idx that is out of range for n elements. */
static int bad_position(const OpCall *c, const Tensor *idx, int64_t k, int64_t n) {
    int64_t p = 0;
    char err[400];
    if (GPU_CALL(to_host, &p, (const int64_t *)idx->data + k, sizeof p)) return -1;
    op_failk(ERRK_INDEX, "%s(): index %lld is out of bounds for a tensor of %lld element%s", op_info[c->op].name, (long long)p,
            (long long)n, n == 1 ? "" : "s");
    return -1;
}

int gpu_run_take(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t, *idx = c->in[1].t;
    int64_t k = 0;
    char err[400];
    int rc = gpu_cu->take((int)dtype_size(t->dtype), t->data, t->size, idx->data, out->data, idx->size, &k, err, sizeof err);
    if (rc < 0) op_fail("%s", err);
    return rc == 1 ? bad_position(c, idx, k, t->size) : rc;
}

/* scatter_add: a copy of t, then v added at the positions in order (one thread: the CPU's
 * order and bits). */
int gpu_run_scatter_add(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    const Tensor *idx = c->in[1].t;
    double num[3] = { 0, 0, 0 };
    bool ok = true;
    Tensor *base = gpu_operand(c, 0, dt, num, &ok), *v = ok ? gpu_operand(c, 2, dt, num, &ok) : NULL;
    if (ok && !v) ok = (v = gpu_number_tensor(dt, num[2])) != NULL;
    int rc = -1;
    char err[400];
    if (ok && base && (rc = GPU_CALL(copy, out->data, base->data, gpu_nbytes(out))) == 0) {
        int64_t k = 0;
        rc = gpu_cu->scatter_add(dt, out->data, out->size, idx->data, v->data, idx->size, v->size == 1, &k, err, sizeof err);
        if (rc < 0) op_fail("%s", err);
        if (rc == 1) rc = bad_position(c, idx, k, out->size);
    }
    tensor_release(base);
    tensor_release(v);
    return rc;
}

/* outer: a's elements as a column times b's as a row, as the CPU broadcasts them. */
int gpu_run_outer(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    double num[2] = { 0, 0 };
    bool ok = true;
    Tensor *a = gpu_operand(c, 0, dt, num, &ok), *b = gpu_operand(c, 1, dt, num, &ok);
    Shape sc = { 2, { a ? a->size : 0, 1 } }, sr = { 2, { 1, b ? b->size : 0 } };
    Tensor *col = ok ? tensor_view(a, &sc) : NULL, *row = col ? tensor_view(b, &sr) : NULL;
    int rc = row ? gpu_ew_launch(OP_MUL, dt, 2, (Tensor *[]){ col, row }, num, out, 0) : -1;
    tensor_release(col);
    tensor_release(row);
    tensor_release(a);
    tensor_release(b);
    return rc;
}

/* one_hot: a row of n f32 per label; a label out of [0, n) is the CPU's error. */
int gpu_run_one_hot(const OpCall *c, Tensor *out) {
    const Tensor *lab = c->in[0].t;
    int64_t n = c->at->i[0], k = 0, bad = 0;
    char err[400];
    int rc = gpu_cu->one_hot(lab->data, lab->size, n, out->data, &k, err, sizeof err);
    if (rc < 0) op_fail("%s", err);
    if (rc != 1) return rc;
    if (GPU_CALL(to_host, &bad, (const int64_t *)lab->data + k, sizeof bad)) return -1;
    op_failk(ERRK_INDEX, "one_hot(): label %lld is out of range for n = %lld (labels must be in [0, n))", (long long)bad, (long long)n);
    return -1;
}
