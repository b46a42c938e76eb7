/* gpu.c - the GPU device: loads the CUDA plugin (ops/cuda/plugin.h) on the first use of
 * the GPU, and is the GPU's entry in the device registry. A call arrives here validated
 * and inferred (ops/op.c); this file chooses the plugin kernel, converts operands to the
 * compute dtype (as the CPU does) and lays out strides. What the plugin has no kernel for
 * is refused by supports_op, so the user reads "NAME() is not supported on device 'gpu'",
 * never a wrong result. See docs/gpu.md. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "gpu.h"
#include "infer.h"
#include "tops.h"
#include "ctx.h"
#include "mem.h"
#include "plugin.h"
#include "cuda/plugin.h"

/* The plugin belongs to the process (one CUDA context), started once under pthread_once. */
static struct {
    pthread_once_t once;
    const TslCudaPlugin *cu;   /* NULL until started */
    char error[600];           /* why it could not start (every later use reports it) */
} gpu = { PTHREAD_ONCE_INIT, NULL, "" };

extern const DeviceImpl gpu_device;

static void gpu_load(void) {
    char path[4096], why[600];
    void *entry;
    plugin_path("TSL_CUDA_PLUGIN", "libtsl_cuda.so", path, sizeof path);
    int rc = plugin_open(path, "tsl_cuda_plugin", &entry, why, sizeof why);
    if (rc) {
        snprintf(gpu.error, sizeof gpu.error, "CUDA runtime not available: %.500s", why);
        return;
    }
    const TslCudaPlugin *p = ((TslCudaPluginFn)entry)();
    if (!p || p->abi != TSL_CUDA_ABI || p->nops != OP__COUNT) {
        snprintf(gpu.error, sizeof gpu.error,
                 "CUDA runtime not available: %.400s is not a CUDA plugin of this build of tsl", path);
        return;
    }
    char err[400] = "";
    switch (p->init(err, sizeof err)) {
    case CUDA_OK:
        gpu.cu = p;
        op_device_register(DEV_GPU, &gpu_device);
        return;
    case CUDA_NO_DEVICE: snprintf(gpu.error, sizeof gpu.error, "no CUDA device found"); return;
    default: snprintf(gpu.error, sizeof gpu.error, "CUDA runtime not available: %.500s", err); return;
    }
}

int gpu_start(void) {
    pthread_once(&gpu.once, gpu_load);
    if (!gpu.cu) {
        op_fail("%s", gpu.error);
        return -1;
    }
    return 0;
}

/* A plugin call's result: 0, or -1 with its message as the op error. */
static int plugin_result(int rc, const char *err) {
    if (rc) op_fail("%s", err);
    return rc ? -1 : 0;
}
#define CALL(fn, ...) (plugin_result(gpu.cu->fn(__VA_ARGS__, err, sizeof err), err))

/* ---------- memory ---------- */

static Tensor *gpu_alloc(DType dt, const Shape *s) {
    int64_t count = shape_count(s), limit = ops_ctx()->max_tensor_bytes, nb;
    if (count < 0) return NULL;
    if (__builtin_mul_overflow(count, (int64_t)dtype_size(dt), &nb) || nb > limit) {   /* as tensor_new */
        char buf[600];
        op_fail("tensor of shape %s (%s) needs more than the limit of %lld bytes (--max-tensor-bytes)",
                shape_str(s, buf, sizeof buf), dtype_name(dt), (long long)limit);
        return NULL;
    }
    size_t bytes = (size_t)nb;
    TBuf *b = mem_try_alloc(sizeof(TBuf));
    Tensor *t = b ? mem_try_alloc(sizeof(Tensor)) : NULL;
    char err[400];
    void *data = NULL;
    if (!t || CALL(alloc, &data, bytes ? bytes : 64)) {
        if (!t) op_fail("out of memory");
        mem_free(t);
        mem_free(b);
        return NULL;
    }
    *b = (TBuf){ .rc = 1, .bytes = bytes, .data = data, .device = DEV_GPU };
    memset(t, 0, sizeof *t);
    t->rc = 1;
    t->dtype = dt;
    t->device = DEV_GPU;
    t->ndim = s->ndim;
    memcpy(t->shape, s->d, sizeof(int64_t) * (size_t)s->ndim);
    t->size = count;
    t->buf = b;
    t->data = data;
    return t;
}

static void gpu_release(TBuf *b) { gpu.cu->free(b->data, b->bytes ? b->bytes : 64); }

static size_t nbytes(const Tensor *t) { return (size_t)t->size * dtype_size(t->dtype); }

static int gpu_to_host(const Tensor *t, void *dst) {
    char err[400];
    return CALL(to_host, dst, t->data, nbytes(t));
}

static Tensor *gpu_from_host(const Tensor *h) {
    Shape s;
    shape_of(h, &s);
    Tensor *t = gpu_alloc(h->dtype, &s);
    char err[400];
    if (t && CALL(to_device, t->data, h->data, nbytes(h))) {
        tensor_release(t);
        t = NULL;
    }
    return t;
}

static Tensor *gpu_clone(const Tensor *a) {
    Shape s;
    shape_of(a, &s);
    Tensor *t = gpu_alloc(a->dtype, &s);
    char err[400];
    if (t && CALL(copy, t->data, a->data, nbytes(a))) {
        tensor_release(t);
        t = NULL;
    }
    return t;
}

static void gpu_synchronize(void) {
    char err[400];
    plugin_result(gpu.cu->synchronize(err, sizeof err), err);
}

Tensor *gpu_to(const Tensor *t, Device d) {
    if (t->device == d) return tensor_retain((Tensor *)t);
    if (d == DEV_CPU) return tensor_host(t);
    if (gpu_start()) return NULL;
    return gpu_from_host(t);
}

Tensor *gpu_index_any(Tensor *t, const void *items, int n, const Tensor *v, bool set) {
    const IndexItem *idx = items;
    if (t->device == DEV_CPU && (!v || v->device == DEV_CPU))
        return set ? op_index_set(t, idx, n, v) : op_index(t, idx, n);
    Tensor *h = tensor_host(t), *hv = v && h ? tensor_host(v) : NULL;
    Tensor *r = h && (!v || hv) ? (set ? op_index_set(h, idx, n, hv) : op_index(h, idx, n)) : NULL;
    tensor_release(h);
    tensor_release(hv);
    Tensor *moved = r ? gpu_to(r, t->device) : NULL;
    tensor_release(r);
    return moved;
}

bool gpu_equal_any(const Tensor *a, const Tensor *b) {
    if (a->device == DEV_CPU && b->device == DEV_CPU) return tensor_equal(a, b);
    Tensor *x = tensor_host(a), *y = x ? tensor_host(b) : NULL;
    bool same = x && y && tensor_equal(x, y);   /* a copy that failed (a lost device) compares unequal */
    tensor_release(x);
    tensor_release(y);
    return same;
}

Tensor *gpu_transpose_any(const Tensor *t) {
    if (t->device == DEV_CPU) return op_transpose(t, NULL, -1);
    OpAttrs at;
    memset(&at, 0, sizeof at);
    at.naxes = -1;
    OpArg in = op_arg_tensor(t);
    OpCall c = { OP_TRANSPOSE, 1, &in, &at };
    Tensor *out = NULL;
    return op_run(&c, &out) ? NULL : out;
}

/* a (on the GPU) in dtype dt: a itself retained, or a converted copy */
static Tensor *as_dtype(const Tensor *a, DType dt) {
    if (a->dtype == dt) return tensor_retain((Tensor *)a);
    Shape s;
    shape_of(a, &s);
    Tensor *r = gpu_alloc(dt, &s);
    char err[400];
    if (r && CALL(astype, a->dtype, dt, a->data, r->data, a->size)) {
        tensor_release(r);
        r = NULL;
    }
    return r;
}

/* ---------- elementwise ---------- */

/* An i64/bool tensor compared with a number outside its kind (the CPU compares exactly). */
static bool exact_compare(const OpCall *c) {
    if (op_info[c->op].kind != K_COMPARE) return false;
    for (int k = 0; k < 2; k++) {
        const OpArg *n = &c->in[k], *t = &c->in[1 - k];
        if (n->kind == ARG_NUM && !n->is_bool && t->kind == ARG_TENSOR && !dtype_is_float(t->dtype) &&
            !(n->x == floor(n->x) && double_fits_i64(n->x)))
            return true;
    }
    return false;
}

static bool ew_supported(const OpCall *c) {
    DType ct, rt;
    if (ew_types(c, &ct, &rt) || exact_compare(c)) return false;
    return gpu.cu->has_ew(c->op, ct);
}

/* NumPy's power_of_ten as the CPU's round uses it (ops/cpu/ew.c). */
static double power_of_ten(uint64_t k) {
    static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8 };
    if (k < 9) return p10[k];
    double r = 1e9;
    for (uint64_t i = 9; i < k && !isinf(r); i++) r *= 10.0;
    return r;
}

/* Element strides of t broadcast to out's shape (0 on stretched axes). */
static void broadcast_strides(const Tensor *t, const Tensor *out, int64_t *stride) {
    int64_t s = 1;
    for (int d = out->ndim - 1, e = t->ndim - 1; d >= 0; d--, e--) {
        int64_t len = e >= 0 ? t->shape[e] : 1;
        stride[d] = len == out->shape[d] && len != 1 ? s : 0;
        s *= len;
    }
}

/* One elementwise launch: op over operands already in ct, each a tensor x[k] (broadcast to
 * out's shape) or, where x[k] is NULL, the number num[k]. */
static int ew_launch(OpCode op, DType ct, int nin, Tensor *const *x, const double *num, Tensor *out, int64_t decimals) {
    CudaEw j;
    memset(&j, 0, sizeof j);
    j.op = op;
    j.ct = ct;
    j.out_dt = out->dtype;
    j.nin = nin;
    j.n = out->size;
    j.out = out->data;
    j.p = power_of_ten(decimals < 0 ? 0 - (uint64_t)decimals : (uint64_t)decimals);
    j.q = decimals >= 0;
    bool contiguous = true;
    for (int k = 0; k < nin; k++) {
        j.num[k] = num[k];
        if (!x[k]) continue;
        j.in[k] = x[k]->data;
        j.inner[k] = x[k]->size == out->size ? 1 : 0;
        contiguous &= x[k]->size == out->size || x[k]->size == 1;
    }
    j.form = contiguous ? 'c' : 's';
    j.ndim = out->ndim;
    for (int d = 0; d < out->ndim; d++) j.shape[d] = out->shape[d];
    for (int k = 0; k < nin && !contiguous; k++)
        if (x[k]) broadcast_strides(x[k], out, j.stride[k]);
    char err[400];
    return CALL(ew, &j);
}

/* Operand k of c in dtype dt: a NEW GPU tensor (NULL for a number, whose value goes to
 * num[k]). *ok is false when a conversion failed. */
static Tensor *operand(const OpCall *c, int k, DType dt, double *num, bool *ok) {
    num[k] = c->in[k].x;
    if (c->in[k].kind != ARG_TENSOR) return NULL;
    Tensor *t = as_dtype(c->in[k].t, dt);
    *ok &= t != NULL;
    return t;
}

static int run_ew(const OpCall *c, Tensor *out) {
    DType ct, rt;
    if (ew_types(c, &ct, &rt)) return -1;
    Tensor *x[2] = { NULL, NULL };
    double num[2] = { 0, 0 };
    bool ok = true;
    for (int k = 0; k < c->nin && ok; k++) x[k] = operand(c, k, ct, num, &ok);
    int rc = ok ? ew_launch(c->op, ct, c->nin, x, num, out, c->op == OP_ROUND ? c->at->i[0] : 0) : -1;
    tensor_release(x[0]);
    tensor_release(x[1]);
    return rc;
}

/* clip as the CPU computes it: t broadcast into out, then maximum with lo and minimum with
 * hi, in place (nil bounds are open). */
static int run_clip(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    double num[3] = { 0, 0, 0 };
    bool ok = true;
    Tensor *t = operand(c, 0, dt, num, &ok);
    if (!ok) return -1;
    int rc;
    if (!t) {   /* a number: every element is it (the maximum of it and itself) */
        rc = ew_launch(OP_MAXIMUM, dt, 2, (Tensor *[]){ NULL, NULL }, (double[]){ num[0], num[0] }, out, 0);
    } else if (t->size == out->size) {
        char err[400];
        rc = CALL(copy, out->data, t->data, nbytes(t));
    } else {
        int64_t stride[TSL_MAX_RANK];
        broadcast_strides(t, out, stride);
        char err[400];
        rc = CALL(gather_strided, (int)dtype_size(dt), out->ndim, out->shape, stride, t->data, out->data, out->size);
    }
    tensor_release(t);
    for (int k = 1; k < 3 && rc == 0; k++) {
        if (c->in[k].kind == ARG_NONE) continue;
        Tensor *b = operand(c, k, dt, num, &ok);
        rc = ok ? ew_launch(k == 1 ? OP_MAXIMUM : OP_MINIMUM, dt, 2, (Tensor *[]){ out, b }, (double[]){ 0, num[k] },
                            out, 0)
                : -1;
        tensor_release(b);
    }
    return rc;
}

/* A number operand of where as a one-element GPU tensor of dtype dt. */
static Tensor *number_tensor(DType dt, double x) {
    Tensor *h = tensor_scalar(dt, x), *t = h ? gpu_from_host(h) : NULL;
    tensor_release(h);
    return t;
}

/* where(cond, a, b): cond as bool, a and b in the result's dtype, each broadcast by strides. */
static int run_where(const OpCall *c, Tensor *out) {
    Tensor *x[3] = { NULL, NULL, NULL };
    int rc = -1;
    for (int k = 0; k < 3; k++) {
        DType dt = k ? out->dtype : DT_BOOL;
        x[k] = c->in[k].kind == ARG_TENSOR ? as_dtype(c->in[k].t, dt) : number_tensor(dt, c->in[k].x);
        if (!x[k]) goto done;
    }
    int64_t stride[3][TSL_MAX_RANK];
    for (int k = 0; k < 3; k++) broadcast_strides(x[k], out, stride[k]);
    char err[400];
    rc = CALL(where, (int)dtype_size(out->dtype), out->ndim, out->shape, (const int64_t(*)[TSL_CUDA_MAX_RANK])stride,
              x[0]->data, x[1]->data, x[2]->data, out->data, out->size);
done:
    for (int k = 0; k < 3; k++) tensor_release(x[k]);
    return rc;
}

/* ---------- reductions and softmax ---------- */

static bool reduce_op(OpCode op) {
    switch (op) {
    case OP_SUM: case OP_MEAN: case OP_MAX: case OP_MIN: case OP_PROD: case OP_ARGMAX: case OP_ARGMIN:
    case OP_ALL: case OP_ANY: case OP_VAR: case OP_STD: case OP_NORM: case OP_LOGSUMEXP: return true;
    default: return false;
    }
}

static int gather(const Tensor *t, const int64_t *stride, Tensor *out);

/* t's elements permuted into out (out's axis d is t's axis perm[d]). */
static int permute_into(const Tensor *t, const int *perm, Tensor *out) {
    int64_t src[TSL_MAX_RANK], stride[TSL_MAX_RANK], k = 1;
    for (int d = t->ndim - 1; d >= 0; d--) { src[d] = k; k *= t->shape[d]; }
    for (int d = 0; d < t->ndim; d++) stride[d] = src[perm[d]];
    return gather(t, stride, out);
}

/* A NEW GPU tensor: t's elements permuted. */
static Tensor *permuted(const Tensor *t, const int *perm) {
    Shape s = { t->ndim, { 0 } };
    for (int d = 0; d < t->ndim; d++) s.d[d] = t->shape[perm[d]];
    Tensor *r = gpu_alloc(t->dtype, &s);
    if (r && permute_into(t, perm, r)) {
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
    return permuted(t, perm);
}

/* One reduction of x ([outer, len, inner]) into out (outer * inner elements). */
static int reduce_into(OpCode op, const Tensor *x, Tensor *out, int64_t outer, int64_t len, int64_t inner) {
    CudaReduce j = { .op = op, .dt = x->dtype, .out_dt = out->dtype, .in = x->data, .out = out->data,
                     .outer = outer, .len = len, .inner = inner };
    char err[400];
    return CALL(reduce, &j);
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
        if (rc == 0) rc = ew_launch(OP_SUB, dt, 2, (Tensor *[]){ xv, m }, num, tmp, 0);
        if (rc == 0) rc = ew_launch(OP_MUL, dt, 2, (Tensor *[]){ tmp, tmp }, num, tmp, 0);
    } else if (rc == 0) {             /* tmp = x^2 */
        rc = ew_launch(OP_MUL, dt, 2, (Tensor *[]){ xv, xv }, num, tmp, 0);
    }
    if (rc == 0) rc = reduce_into(op == OP_NORM ? OP_SUM : OP_MEAN, tmp, res, outer, len, inner);
    if (rc == 0 && op != OP_VAR) rc = ew_launch(OP_SQRT, dt, 1, (Tensor *[]){ res }, num, res, 0);
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
    if (len == 0 && rc == 0) rc = ew_launch(OP_SUB, dt, 2, (Tensor *[]){ NULL, NULL }, (double[]){ 0, INFINITY }, m, 0);
    if (rc == 0) rc = ew_launch(OP_SUB, dt, 2, (Tensor *[]){ xv, m }, num, tmp, 0);
    if (rc == 0) rc = ew_launch(OP_EXP, dt, 1, (Tensor *[]){ tmp }, num, tmp, 0);
    if (rc == 0) rc = reduce_into(OP_SUM, tmp, res, outer, len, inner);
    if (rc == 0) rc = ew_launch(OP_LOG, dt, 1, (Tensor *[]){ res }, num, res, 0);
    if (rc == 0) rc = ew_launch(OP_ADD, dt, 2, (Tensor *[]){ m, res }, num, res, 0);
    if (rc == 0) rc = ew_launch(OP_ISFINITE, dt, 1, (Tensor *[]){ m }, num, fin, 0);
    char err[400];
    if (rc == 0) {
        int64_t st[3][TSL_MAX_RANK] = { { 1 }, { 1 }, { 1 } };
        rc = CALL(where, (int)dtype_size(dt), 1, (int64_t[]){ res->size }, (const int64_t(*)[TSL_CUDA_MAX_RANK])st,
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
static int run_reduce(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int64_t outer, len, inner;
    Tensor *x = reduce_input(c, t, &outer, &len, &inner);
    if (!x) return -1;
    bool floats = c->op == OP_MEAN || c->op == OP_VAR || c->op == OP_STD || c->op == OP_NORM || c->op == OP_LOGSUMEXP;
    DType in = floats && !dtype_is_float(t->dtype) ? DT_F64 : t->dtype;
    Tensor *xc = as_dtype(x, in), *res = NULL;
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
        if (rc == 0 && res != out) rc = CALL(astype, res->dtype, out->dtype, res->data, out->data, out->size);
    }
    tensor_release(res);
    tensor_release(xc);
    return rc;
}

static bool softmax_supported(const OpCall *c) {
    const Tensor *t = c->in[0].t;
    return dtype_is_float(t->dtype) && t->ndim > 0;
}

/* softmax and log_softmax along the last axis; along another one the axis is moved last
 * first and back after. */
static int run_softmax(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int nd = t->ndim, ax = c->at->axis < 0 ? c->at->axis + nd : c->at->axis;
    int64_t len = t->shape[ax], rows = len ? t->size / len : 0;
    char err[400];
    if (ax == nd - 1) return CALL(softmax, c->op, t->dtype, t->data, out->data, rows, len);
    int perm[TSL_MAX_RANK], back[TSL_MAX_RANK], np = 0;
    for (int d = 0; d < nd; d++) if (d != ax) perm[np++] = d;
    perm[np] = ax;
    for (int d = 0; d < nd; d++) back[perm[d]] = d;
    Tensor *x = permuted(t, perm), *y = NULL;
    Shape s;
    if (x) shape_of(x, &s);
    int rc = x && (y = gpu_alloc(x->dtype, &s)) ? CALL(softmax, c->op, t->dtype, x->data, y->data, rows, len) : -1;
    if (rc == 0) rc = permute_into(y, back, out);
    tensor_release(x);
    tensor_release(y);
    return rc;
}

/* ---------- along an axis ---------- */

/* cumsum and cumprod: each line along the axis in order (the CPU's bits). */
static int run_cum(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int ax = c->at->axis < 0 ? c->at->axis + t->ndim : c->at->axis;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++) outer *= t->shape[d];
    for (int d = ax + 1; d < t->ndim; d++) inner *= t->shape[d];
    if (t->size == 0) return 0;
    char err[400];
    return CALL(lines, c->op == OP_CUMPROD, t->dtype, outer, t->shape[ax], inner, 0, t->data, out->data);
}

/* trace: for each trailing position r, t[k, k, r] summed over k in order (the CPU's bits). */
static int run_trace(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int64_t d0 = t->shape[0], d1 = t->shape[1], rest = out->size;
    char err[400];
    return CALL(lines, 2, t->dtype, 1, d0 < d1 ? d0 : d1, rest, (d1 + 1) * rest, t->data, out->data);
}

/* diff: t one step along the axis minus t (bool: not equal), as one strided elementwise
 * launch over two offsets of t's own buffer. */
static int run_diff(const OpCall *c, Tensor *out) {
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
    return out->size ? CALL(ew, &j) : 0;
}

/* The CPU's message for position k of idx that is out of range for n elements. */
static int bad_position(const OpCall *c, const Tensor *idx, int64_t k, int64_t n) {
    int64_t p = 0;
    char err[400];
    if (CALL(to_host, &p, (const int64_t *)idx->data + k, sizeof p)) return -1;
    op_fail("%s(): index %lld is out of bounds for a tensor of %lld element%s", op_info[c->op].name, (long long)p,
            (long long)n, n == 1 ? "" : "s");
    return -1;
}

static int run_take(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t, *idx = c->in[1].t;
    int64_t k = 0;
    char err[400];
    int rc = gpu.cu->take((int)dtype_size(t->dtype), t->data, t->size, idx->data, out->data, idx->size, &k, err, sizeof err);
    if (rc < 0) op_fail("%s", err);
    return rc == 1 ? bad_position(c, idx, k, t->size) : rc;
}

/* scatter_add: a copy of t, then v added at the positions in order (one thread: the CPU's
 * order and bits). */
static int run_scatter_add(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    const Tensor *idx = c->in[1].t;
    double num[3] = { 0, 0, 0 };
    bool ok = true;
    Tensor *base = operand(c, 0, dt, num, &ok), *v = ok ? operand(c, 2, dt, num, &ok) : NULL;
    if (ok && !v) ok = (v = number_tensor(dt, num[2])) != NULL;
    int rc = -1;
    char err[400];
    if (ok && base && (rc = CALL(copy, out->data, base->data, nbytes(out))) == 0) {
        int64_t k = 0;
        rc = gpu.cu->scatter_add(dt, out->data, out->size, idx->data, v->data, idx->size, v->size == 1, &k, err, sizeof err);
        if (rc < 0) op_fail("%s", err);
        if (rc == 1) rc = bad_position(c, idx, k, out->size);
    }
    tensor_release(base);
    tensor_release(v);
    return rc;
}

/* outer: a's elements as a column times b's as a row, as the CPU broadcasts them. */
static int run_outer(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    double num[2] = { 0, 0 };
    bool ok = true;
    Tensor *a = operand(c, 0, dt, num, &ok), *b = operand(c, 1, dt, num, &ok);
    Shape sc = { 2, { a ? a->size : 0, 1 } }, sr = { 2, { 1, b ? b->size : 0 } };
    Tensor *col = ok ? tensor_view(a, &sc) : NULL, *row = col ? tensor_view(b, &sr) : NULL;
    int rc = row ? ew_launch(OP_MUL, dt, 2, (Tensor *[]){ col, row }, num, out, 0) : -1;
    tensor_release(col);
    tensor_release(row);
    tensor_release(a);
    tensor_release(b);
    return rc;
}

/* ---------- matmul (cuBLAS) ---------- */

/* matmul and dot in f32/f64 (operands of other dtypes are converted, as on the CPU): 1-D
 * operands as a row or a column, 2-D, and 3-D batches (equal, or one side a single matrix);
 * dot with a 0-d operand is a product. */
static bool matmul_supported(const OpCall *c) {
    if (!dtype_is_float(op_promote(c->in, 2))) return false;
    int nd[2];
    for (int k = 0; k < 2; k++) nd[k] = c->in[k].kind == ARG_TENSOR ? c->in[k].ndim : 0;
    if (nd[0] == 0 || nd[1] == 0) return c->op == OP_DOT;
    if (nd[0] > 3 || nd[1] > 3 || (c->op == OP_MATMUL && c->at->flag && nd[0] < 2)) return false;
    return nd[0] < 3 || nd[1] < 3 || c->in[0].dims[0] == c->in[1].dims[0];
}

static int run_matmul(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    double num[2] = { 0, 0 };
    bool ok = true;
    Tensor *a = operand(c, 0, dt, num, &ok), *b = ok ? operand(c, 1, dt, num, &ok) : NULL;
    int rc = -1;
    if (!ok) goto done;
    if (!a || !b || a->ndim == 0 || b->ndim == 0) {   /* dot with a 0-d operand */
        rc = ew_launch(OP_MUL, dt, 2, (Tensor *[]){ a, b }, num, out, 0);
        goto done;
    }
    bool ta = c->op == OP_MATMUL && c->at->flag;
    /* a as [batch?, rows, cols] (a vector is one row), b as [batch?, k, n] (a vector is one column) */
    int64_t ar = a->ndim == 1 ? 1 : a->shape[a->ndim - 2], ac = a->shape[a->ndim - 1];
    int64_t bk = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2], bn = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    CudaGemm j = { .dt = dt, .trans_a = ta, .a = a->data, .b = b->data, .c = out->data };
    j.m = ta ? ac : ar;
    j.k = ta ? ar : ac;
    j.n = bn;
    j.batch = a->ndim == 3 ? a->shape[0] : b->ndim == 3 ? b->shape[0] : 1;
    j.a_stride = a->ndim == 3 ? ar * ac : 0;
    j.b_stride = b->ndim == 3 ? bk * bn : 0;
    char err[400];
    rc = out->size ? CALL(gemm, &j) : 0;
done:
    tensor_release(a);
    tensor_release(b);
    return rc;
}

/* ---------- shapes and conversions ---------- */

static int run_view(const OpCall *c, Tensor **out) {
    Shape s[OP_MAX_OUT];
    DType dt[OP_MAX_OUT];
    if (op_infer(c, s, dt)) return -1;
    return (out[0] = tensor_view((Tensor *)c->in[0].t, &s[0])) ? 0 : -1;
}

static int gather(const Tensor *t, const int64_t *stride, Tensor *out) {
    char err[400];
    return CALL(gather_strided, (int)dtype_size(t->dtype), out->ndim, out->shape, stride, t->data, out->data,
                out->size);
}

static int run_transpose(const OpCall *c, Tensor *out) {
    int perm[TSL_MAX_RANK];
    Shape sa, so;
    shape_of(c->in[0].t, &sa);
    if (shape_transpose(&sa, c->at->naxes < 0 ? NULL : c->at->axes, c->at->naxes, perm, &so)) return -1;
    return permute_into(c->in[0].t, perm, out);
}

static int run_broadcast(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int64_t stride[TSL_MAX_RANK], s = 1;
    for (int d = out->ndim - 1, e = t->ndim - 1; d >= 0; d--, e--) {
        int64_t len = e >= 0 ? t->shape[e] : 1;
        stride[d] = len == out->shape[d] && len != 1 ? s : 0;
        s *= len;
    }
    return gather(t, stride, out);
}

static int run_astype(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    char err[400];
    if (t->dtype == out->dtype) return CALL(copy, out->data, t->data, nbytes(t));
    return CALL(astype, t->dtype, out->dtype, t->data, out->data, t->size);
}

/* concat/stack: for each index before the axis, each operand's block in turn (as the CPU's
 * cpu_join): one 2-D copy per operand, its blocks strided by the result's row. */
static int run_join(const OpCall *c, Tensor *r) {
    int ax = c->at->axis < 0 ? c->at->axis + r->ndim : c->at->axis;
    int64_t outer = 1, row = (int64_t)dtype_size(r->dtype), total = 0;
    for (int i = 0; i < ax; i++) outer *= r->shape[i];
    for (int i = ax + 1; i < r->ndim; i++) row *= r->shape[i];
    for (int k = 0; k < c->nin; k++) total += row * (c->op == OP_STACK ? 1 : c->in[k].t->shape[ax]);
    char err[400];
    int64_t at = 0;
    for (int k = 0; k < c->nin; k++) {
        Tensor *t = as_dtype(c->in[k].t, r->dtype);
        if (!t) return -1;
        int64_t bytes = row * (c->op == OP_STACK ? 1 : t->shape[ax]);
        int rc = r->size ? CALL(copy2d, (char *)r->data + at, (size_t)total, t->data, (size_t)bytes, (size_t)bytes,
                                (size_t)outer) : 0;
        tensor_release(t);
        if (rc) return -1;
        at += bytes;
    }
    return 0;
}

/* equal and allclose answer one truth value: the operands are compared on the host. */
static int run_equal(const OpCall *c, Tensor *out) {
    Tensor *a = tensor_host(c->in[0].t), *b = a ? tensor_host(c->in[1].t) : NULL;
    int r = !b ? -1 : c->op == OP_EQUAL ? tensor_equal(a, b) : op_allclose(a, b, c->at->f[0], c->at->f[1]);
    tensor_release(a);
    tensor_release(b);
    if (r < 0) return -1;
    uint8_t v = (uint8_t)r;
    char err[400];
    return CALL(to_device, out->data, &v, 1);
}

/* ---------- random numbers ---------- */

/* rand, randn, randint on the GPU draw the CPU's stream (ops/cpu/random.c): element i of a
 * draw uses Philox block (seed, counter + i), and the counter advances by the count, so
 * the same seed gives the same numbers on either device. */
static int run_random(const OpCall *c, Tensor *out) {
    uint64_t key, counter;
    rng_get_state(&key, &counter);
    int kind = c->op == OP_RAND ? 0 : c->op == OP_RANDN ? 1 : 2;
    char err[400];
    if (CALL(random, kind, key, counter, c->at->i[0], c->at->i[1], out->data, out->size)) return -1;
    rng_set_state(key, counter + (uint64_t)out->size);
    return 0;
}

/* ---------- the registry entry ---------- */

static bool all_tensors(const OpCall *c) {
    for (int k = 0; k < c->nin; k++)
        if (c->in[k].kind != ARG_TENSOR) return false;
    return true;
}

static bool gpu_supports_op(const OpCall *c) {
    const OpDef *d = &op_info[c->op];
    if (d->kind == K_UNARY || d->kind == K_BINARY || d->kind == K_COMPARE) return ew_supported(c);
    if (c->op == OP_RAND || c->op == OP_RANDN || c->op == OP_RANDINT) return true;
    if (c->nin < 1 || c->in[0].kind != ARG_TENSOR) return false;
    if (reduce_op(c->op)) return true;
    switch (c->op) {
    case OP_SOFTMAX: case OP_LOG_SOFTMAX: return softmax_supported(c);
    case OP_MATMUL: case OP_DOT: return matmul_supported(c);
    case OP_RESHAPE: case OP_FLATTEN: case OP_EXPAND_DIMS: case OP_SQUEEZE:
    case OP_TRANSPOSE: case OP_BROADCAST_TO: case OP_ASTYPE: case OP_CLIP: case OP_WHERE: return true;
    case OP_CONCAT: case OP_STACK: case OP_EQUAL: case OP_ALLCLOSE: case OP_OUTER: return all_tensors(c);
    case OP_CUMSUM: case OP_CUMPROD: case OP_TRACE: case OP_DIFF: return true;
    case OP_TAKE: return c->in[1].kind == ARG_TENSOR;
    case OP_SCATTER_ADD: return c->in[1].kind == ARG_TENSOR;
    default: return false;
    }
}

static bool gpu_allocates(OpCode op) { return op_info[op].flags & F_VIEW; }

static int gpu_run(const OpCall *c, Tensor **out) {
    const OpDef *d = &op_info[c->op];
    if (d->kind == K_UNARY || d->kind == K_BINARY || d->kind == K_COMPARE) return run_ew(c, out[0]);
    if (reduce_op(c->op)) return run_reduce(c, out[0]);
    switch (c->op) {
    case OP_SOFTMAX: case OP_LOG_SOFTMAX: return run_softmax(c, out[0]);
    case OP_MATMUL: case OP_DOT: return run_matmul(c, out[0]);
    case OP_RESHAPE: case OP_FLATTEN: case OP_EXPAND_DIMS: case OP_SQUEEZE: return run_view(c, out);
    case OP_TRANSPOSE: return run_transpose(c, out[0]);
    case OP_BROADCAST_TO: return run_broadcast(c, out[0]);
    case OP_ASTYPE: return run_astype(c, out[0]);
    case OP_RAND: case OP_RANDN: case OP_RANDINT: return run_random(c, out[0]);
    case OP_CONCAT: case OP_STACK: return run_join(c, out[0]);
    case OP_CLIP: return run_clip(c, out[0]);
    case OP_CUMSUM: case OP_CUMPROD: return run_cum(c, out[0]);
    case OP_TRACE: return run_trace(c, out[0]);
    case OP_DIFF: return run_diff(c, out[0]);
    case OP_TAKE: return run_take(c, out[0]);
    case OP_SCATTER_ADD: return run_scatter_add(c, out[0]);
    case OP_OUTER: return run_outer(c, out[0]);
    case OP_WHERE: return run_where(c, out[0]);
    case OP_EQUAL: case OP_ALLCLOSE: return run_equal(c, out[0]);
    default: op_fail("%s() is not supported on device 'gpu'", d->name); return -1;
    }
}

const DeviceImpl gpu_device = {
    .name = "gpu",
    .supports_op = gpu_supports_op,
    .alloc = gpu_alloc,
    .run = gpu_run,
    .allocates = gpu_allocates,
    .synchronize = gpu_synchronize,
    .release = gpu_release,
    .to_host = gpu_to_host,
    .from_host = gpu_from_host,
    .clone = gpu_clone,
};
