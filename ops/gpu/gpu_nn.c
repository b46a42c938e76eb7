/* gpu_nn.c - the neural-network ops of issue 28 that are not elementwise rows, on the GPU,
 * as the CPU computes them (ops/cpu/nn.c): softplus; layer, rms, group and batch
 * normalization (each group's statistics in f64 on one thread, two passes, then every
 * element in parallel: the CPU's bits); cross_entropy (each row's loss on a thread, their
 * mean in row order on one); gather and scatter along an axis (scatter on one thread, in
 * index order, as the CPU writes); masked_fill. The kernels are
 * ops/gpu/cuda/gen_nn.c's; a label or index out of range is found on the device, read back,
 * and is the CPU's error. */
#include <float.h>
#include <string.h>
#include "gpu_impl.h"

static int nn_launch(int kind, DType dt, const GenNnArgs *a) {
    CudaNn j = { .kind = kind, .dt = dt, .a = *a };
    char err[400];
    return GPU_CALL(nn, &j);
}

/* operand k in dtype dt on the GPU, NULL when absent; *ok false when a conversion failed */
static Tensor *opt_operand(const OpCall *c, int k, DType dt, bool *ok) {
    if (k < 0 || k >= c->nin || c->in[k].kind != ARG_TENSOR) return NULL;
    Tensor *t = gpu_as_dtype(c->in[k].t, dt);
    if (!t) *ok = false;
    return t;
}

static Tensor *scratch(DType dt, int64_t n) {
    Shape s = { .ndim = 1, .d = { n > 0 ? n : 1 } };
    return gpu_alloc(dt, &s);
}

/* the first failing element the kernel reported (waits for the device), or -1; its index
 * value in *v. -2 on a CUDA error. */
static int64_t read_bad(const Tensor *bad, const int64_t *idx, int64_t *v) {
    int64_t k = -1;
    char err[400];
    if (GPU_CALL(to_host, &k, bad->data, sizeof k)) return -2;
    if (k >= 0 && GPU_CALL(to_host, v, idx + k, sizeof *v)) return -2;
    return k;
}

int gpu_run_softplus(const OpCall *c, Tensor *out) {
    Tensor *x = gpu_as_dtype(c->in[0].t, out->dtype);
    if (!x) return -1;
    GenNnArgs a = { .total = out->size, .beta = c->at->f[0], .threshold = c->at->f[1], .x = x->data, .y = out->data };
    int rc = nn_launch(CUDA_SOFTPLUS, out->dtype, &a);
    tensor_release(x);
    return rc;
}

/* ops/cpu/nn.c's plan: groups of k contiguous elements, or batch_norm's channels */
static void norm_plan(const OpCall *c, DType dt, GenNnArgs *a, int *wk, int *bk) {
    const Tensor *x = c->in[0].t;
    a->k = 1, a->n = 1, a->c = 1, a->s = 1, a->center = c->op != OP_RMS_NORM;
    *wk = 1, *bk = c->op == OP_RMS_NORM ? -1 : 2;
    if (c->op == OP_LAYER_NORM || c->op == OP_RMS_NORM) {
        for (int i = 0; i < c->at->shape.ndim; i++) a->k *= c->at->shape.d[i];
        a->total = a->k ? x->size / a->k : 0;
        a->eps = c->op == OP_RMS_NORM && !op_given(c, 3) ? (dt == DT_F32 ? FLT_EPSILON : DBL_EPSILON) : c->at->f[0];
        return;
    }
    a->n = x->shape[0], a->c = x->shape[1];
    for (int i = 2; i < x->ndim; i++) a->s *= x->shape[i];
    if (c->op == OP_GROUP_NORM) {
        a->groups = c->at->i[0];
        a->total = a->n * a->groups, a->k = a->c / a->groups * a->s;
        a->eps = c->at->f[0];
        return;
    }
    a->channels = 1, a->total = a->c;
    *wk = 3, *bk = 4;
    a->eps = c->at->f[1];
}

int gpu_run_norm(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    GenNnArgs a = { 0 };
    int wk, bk;
    norm_plan(c, dt, &a, &wk, &bk);
    if (out->size == 0 || a.total == 0) return 0;
    bool ok = true, running = c->op == OP_BATCH_NORM && !c->at->flag;
    Tensor *t[6] = { gpu_as_dtype(c->in[0].t, dt), opt_operand(c, wk, dt, &ok), opt_operand(c, bk, dt, &ok),
                     running ? opt_operand(c, 1, dt, &ok) : NULL, running ? opt_operand(c, 2, dt, &ok) : NULL,
                     scratch(DT_F64, 2 * a.total) };
    int rc = -1;
    if (ok && t[0] && t[5]) {
        a.x = t[0]->data, a.w = t[1] ? t[1]->data : NULL, a.b = t[2] ? t[2]->data : NULL;
        a.rm = t[3] && t[4] ? t[3]->data : NULL, a.rv = t[3] && t[4] ? t[4]->data : NULL;
        a.stats = t[5]->data, a.y = out->data;
        rc = nn_launch(CUDA_NORM_STATS, dt, &a);
        a.total = out->size;
        if (!rc) rc = nn_launch(CUDA_NORM_APPLY, dt, &a);
    }
    for (int k = 0; k < 6; k++) tensor_release(t[k]);
    return rc;
}

int gpu_run_xent(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    Tensor *x = gpu_as_dtype(c->in[0].t, dt), *rows = scratch(DT_F64, x ? x->shape[0] : 0);
    Tensor *bad = scratch(DT_I64, 1);
    const int64_t *lab = c->in[1].t->data;
    int rc = -1;
    if (x && rows && bad) {
        GenNnArgs a = { .n = x->shape[0], .k = x->shape[1], .eps = c->at->f[0], .x = x->data, .idx = (const long long *)lab,
                        .stats = rows->data, .bad = bad->data, .y = out->data };
        int64_t v = 0, r = nn_launch(CUDA_XENT_ROWS, dt, &a) || nn_launch(CUDA_XENT_SUM, dt, &a) ? -2 : read_bad(bad, lab, &v);
        if (r >= 0) op_fail("cross_entropy(): label %lld is out of range for %lld classes", (long long)v, (long long)a.k);
        rc = r == -1 ? 0 : -1;
    }
    tensor_release(x);
    tensor_release(rows);
    tensor_release(bad);
    return rc;
}

static void strides_of(const int64_t *d, int nd, long long *st) {
    long long s = 1;
    for (int i = nd - 1; i >= 0; i--) st[i] = s, s *= d[i];
}

int gpu_run_gather_axis(const OpCall *c, Tensor *out) {
    const Tensor *x = c->in[0].t, *ix = c->in[1].t;
    DType dt = x->dtype;
    bool gather = c->op == OP_GATHER, ok = true;
    double num[3] = { 0 };   /* gpu_operand writes num[k] */
    Tensor *src = gather ? NULL : gpu_operand(c, 2, dt, num, &ok);
    if (!gather && ok && !src) src = gpu_number_tensor(dt, num[2]);
    Tensor *bad = scratch(DT_I64, 1);
    int nd = x->ndim, ax = c->at->axis < 0 ? c->at->axis + nd : c->at->axis, rc = -1;
    char err[400];
    if (bad && (gather || src) && (gather || !GPU_CALL(copy, out->data, x->data, gpu_nbytes(out)))) {
        GenNnArgs a = { .total = ix->size, .ndim = nd, .axis = ax, .add = !gather && c->at->i[0] == 1,
                        .src_scalar = !src || src->ndim == 0, .extent = nd ? x->shape[ax] : 1, .x = x->data,
                        .idx = ix->data, .src = src ? src->data : NULL, .y = out->data, .bad = bad->data };
        strides_of(x->shape, nd, a.xs);
        strides_of(ix->shape, nd, a.is);
        if (src && src->ndim) strides_of(src->shape, nd, a.ss);
        int64_t v = 0, r = gather ? (nn_launch(CUDA_IDX_CHECK, dt, &a) || nn_launch(CUDA_GATHER_AXIS, dt, &a))
                                  : nn_launch(CUDA_SCATTER_AXIS, dt, &a);
        r = r ? -2 : read_bad(bad, ix->data, &v);
        if (r >= 0)
            op_fail("%s(): index %lld is out of range for axis %d of size %lld", op_info[c->op].name, (long long)v, ax,
                    (long long)a.extent);
        rc = r == -1 ? 0 : -1;
    }
    tensor_release(src);
    tensor_release(bad);
    return rc;
}

/* masked_fill: the value in x's dtype, a number converted on the host by the CPU's rule and
 * passed by value (nothing uploaded, so a CUDA Graph can capture it), or a GPU tensor */
int gpu_run_masked_fill(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    bool num = c->in[2].kind != ARG_TENSOR;
    if (!num && c->in[2].t->size != 1) {
        op_fail("masked_fill(): value must be a number or a one-element tensor, got %lld elements",
                (long long)c->in[2].t->size);
        return -1;
    }
    Tensor *v = num ? tensor_scalar(dt, c->in[2].x) : gpu_as_dtype(c->in[2].t, dt);
    Tensor *m = v ? gpu_as_dtype(c->in[1].t, DT_BOOL) : NULL;
    int rc = -1;
    if (m) {
        GenNnArgs a = { .total = out->size, .ndim = out->ndim, .x = c->in[0].t->data, .y = out->data,
                        .mask = m->data, .src = num ? NULL : v->data };
        if (num) memcpy(&a.value, v->data, dtype_size(dt));
        int64_t st[TSL_MAX_RANK];
        gpu_broadcast_strides(m, out, st);
        for (int d = 0; d < out->ndim; d++) a.xs[d] = out->shape[d], a.ss[d] = st[d];
        rc = nn_launch(CUDA_MASKED_FILL, dt, &a);
    }
    tensor_release(v);
    tensor_release(m);
    return rc;
}
