/* tensor.c - tensor allocation, dtypes, shapes, limits and the op error buffer. */
#include <malloc.h>
#include <pthread.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensor.h"
#include "opcall.h"
#include "tops.h"
#include "mem.h"
#include "ctx.h"
#include "cpu/cpu.h"

int64_t mem_budget_left(void) {
    OpsCtx *c = ops_ctx();
    if (!c->max_live) return INT64_MAX;
    int64_t left = c->max_live - c->tensor_live_bytes - c->obj_live_bytes;
    return left > 0 ? left : 0;
}

bool mem_charge(int64_t bytes) {
    OpsCtx *c = ops_ctx();
    if (bytes > 0 && bytes > mem_budget_left() && !(c->reclaim && c->reclaim(c->reclaim_ud) > 0 && bytes <= mem_budget_left())) {
        op_failk(ERRK_MEMORY, MAX_MEMORY_MSG, (long long)c->max_live);
        return false;
    }
    c->obj_live_bytes += bytes;
    return true;
}

bool mem_over_budget(void) {
    OpsCtx *c = ops_ctx();
    return c->max_live && c->tensor_live_bytes + c->obj_live_bytes > c->max_live;
}

static const char *const errkind_names[] = {
#define X(name, text) text,
    ERRK_LIST(X)
#undef X
};

const char *errkind_name(ErrKind k) { return k >= 0 && k < ERRK__COUNT ? errkind_names[k] : "value"; }

int errkind_parse(const char *s) {
    for (int k = 0; k < ERRK__COUNT; k++)
        if (!strcmp(s, errkind_names[k])) return k;
    return -1;
}

void op_failk(ErrKind k, const char *fmt, ...) {
    OpsCtx *c = ops_ctx();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    c->err_kind = (int)k;
}

void op_fail(const char *fmt, ...) {
    OpsCtx *c = ops_ctx();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    c->err_kind = ERRK_VALUE;
}

const char *op_error(void) { return ops_ctx()->err; }
ErrKind op_error_kind(void) { return (ErrKind)ops_ctx()->err_kind; }


const char *dtype_name(DType t) {
    static const char *names[] = { "bool", "i64", "f32", "f64" };
    return names[t];
}

int dtype_parse(const char *s, DType *out) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, dtype_name((DType)i))) { *out = (DType)i; return 0; }
    return -1;
}

int dtype_is_float(DType t) { return t == DT_F32 || t == DT_F64; }

int64_t shape_count(const Shape *s) {
    int64_t n = 1;
    if (s->ndim > TSL_MAX_RANK || s->ndim < 0) {
        op_failk(ERRK_SHAPE, "rank %d is above the limit of %d", s->ndim, TSL_MAX_RANK);
        return -1;
    }
    for (int i = 0; i < s->ndim; i++) {
        if (s->d[i] < 0) {
            op_failk(ERRK_SHAPE, "negative dimension %lld in shape", (long long)s->d[i]);
            return -1;
        }
    }
    /* the non-zero dims must multiply without overflow even when a 0 makes the count 0
     * (NumPy's "array is too big"): strides and offsets are products of those dims */
    bool empty = false;
    for (int i = 0; i < s->ndim; i++) {
        if (s->d[i] == 0) { empty = true; continue; }
        if (__builtin_mul_overflow(n, s->d[i], &n)) {
            char buf[600];
            op_failk(ERRK_SHAPE, "shape %s is too large (element count overflows)", shape_str(s, buf, sizeof buf));
            return -1;
        }
    }
    return empty ? 0 : n;
}

int shape_equal(const Shape *a, const Shape *b) {
    return a->ndim == b->ndim && !memcmp(a->d, b->d, sizeof(int64_t) * (size_t)a->ndim);
}

void shape_of(const Tensor *t, Shape *s) {
    s->ndim = t->ndim;
    memcpy(s->d, t->shape, sizeof(int64_t) * (size_t)t->ndim);
}

const char *shape_str(const Shape *s, char *buf, size_t n) {
    size_t len = 0;
    len += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < s->ndim && len < n; i++)
        len += s->d[i] == SHAPE_RT ? (size_t)snprintf(buf + len, n - len, i ? ", ?" : "?")
                                   : (size_t)snprintf(buf + len, n - len, i ? ", %lld" : "%lld", (long long)s->d[i]);
    if (len < n) snprintf(buf + len, n - len, "]");
    return buf;
}

/* Keep freed tensor buffers in the heap (below glibc's 32 MiB mmap ceiling) rather than
 * returning them to the kernel, so a loop that makes same-sized tensors reuses warm pages
 * instead of page-faulting fresh ones on every op. A process-wide malloc setting, made once. */
static void heap_tune_once(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

static void heap_tune(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, heap_tune_once);
}

int tensor_nbytes(DType dt, const Shape *s, int64_t count, int64_t *bytes) {
    int64_t limit = ops_ctx()->max_tensor_bytes;
    if (__builtin_mul_overflow(count, (int64_t)dtype_size(dt), bytes) || *bytes > limit) {
        char buf[600];
        op_failk(ERRK_MEMORY, "tensor of shape %s (%s) needs more than the limit of %lld bytes (--max-tensor-bytes)",
                shape_str(s, buf, sizeof buf), dtype_name(dt), (long long)limit);
        return -1;
    }
    return 0;
}

void tensor_init(Tensor *t, DType dt, const Shape *s, int64_t count, TBuf *b) {
    t->rc = 1;
    t->dtype = dt;
    t->device = b->device;
    t->ndim = s->ndim;
    memcpy(t->shape, s->d, sizeof(int64_t) * (size_t)s->ndim);
    t->size = count;
    t->buf = b;
    t->data = b->data;
}

/* Whether a tensor of `bytes` fits the limits; else the error is set. */
static bool within_limits(OpsCtx *c, const Shape *s, DType dt, int64_t count, int64_t *bytes) {
    if (tensor_nbytes(dt, s, count, bytes)) return false;
    if (*bytes > mem_budget_left() && !(c->reclaim && c->reclaim(c->reclaim_ud) > 0 && *bytes <= mem_budget_left())) {
        op_failk(ERRK_MEMORY, MAX_MEMORY_MSG, (long long)c->max_live);
        return false;
    }
    return true;
}

Tensor *tensor_new(DType dt, const Shape *s) {
    heap_tune();
    OpsCtx *c = ops_ctx();
    int64_t count = shape_count(s), bytes;
    if (count < 0 || !within_limits(c, s, dt, count, &bytes)) return NULL;
    /* 64-byte aligned data so SIMD kernels see aligned rows */
    TBuf *b = mem_try_alloc(sizeof(TBuf));
    void *data = b ? mem_try_alloc_aligned((size_t)(bytes ? bytes : 64), 64) : NULL;
    Tensor *t = data ? mem_try_alloc(sizeof(Tensor)) : NULL;
    if (!t) {
        mem_free(data);
        mem_free(b);
        op_failk(ERRK_MEMORY, "out of memory allocating a tensor of %lld bytes", (long long)bytes);
        return NULL;
    }
    c->tensor_alloc_count++;
    b->rc = 1;
    b->device = DEV_CPU;
    b->bytes = (size_t)bytes;
    b->data = data;
    c->tensor_live_bytes += bytes;
    if (c->tensor_live_bytes > c->tensor_peak_bytes) c->tensor_peak_bytes = c->tensor_live_bytes;
    tensor_init(t, dt, s, count, b);
    return t;
}

Tensor *tensor_zeros(DType dt, const Shape *s) {
    Tensor *t = tensor_new(dt, s);
    if (t) memset(t->data, 0, t->buf->bytes);
    return t;
}

Tensor *tensor_scalar(DType dt, double v) {
    Shape s = { 0, { 0 } };
    Tensor *t = tensor_new(dt, &s);
    if (t) tensor_set(t, 0, v);
    return t;
}

Tensor *tensor_view(Tensor *t, const Shape *s) {
    if (shape_count(s) < 0) return NULL;   /* every shape a tensor gets is checked, views too */
    Tensor *v = mem_try_alloc(sizeof(Tensor));
    if (!v) { op_failk(ERRK_MEMORY, "out of memory"); return NULL; }
    *v = *t;
    v->rc = 1;
    v->ndim = s->ndim;
    memcpy(v->shape, s->d, sizeof(int64_t) * (size_t)s->ndim);
    t->buf->rc++;
    return v;
}

Tensor *tensor_copy(const Tensor *t) {
    if (t->device != DEV_CPU) {
        const DeviceImpl *d = op_device(t->device);
        return d ? d->clone(t) : NULL;
    }
    Shape s;
    shape_of(t, &s);
    Tensor *c = tensor_new(t->dtype, &s);
    if (c) memcpy(c->data, t->data, (size_t)t->size * dtype_size(t->dtype));
    return c;
}

Tensor *tensor_host(const Tensor *t) {
    if (t->device == DEV_CPU) return tensor_retain((Tensor *)t);
    const DeviceImpl *d = op_device(t->device);
    Shape s;
    shape_of(t, &s);
    Tensor *h = d ? tensor_new(t->dtype, &s) : NULL;
    if (h && d->to_host(t, h->data)) {
        tensor_release(h);
        h = NULL;
    }
    return h;
}

Tensor *tensor_to(const Tensor *t, Device d) {
    if (t->device == d) return tensor_retain((Tensor *)t);
    if (d == DEV_CPU) return tensor_host(t);
    return device_start(d) ? NULL : op_device(d)->from_host(t);
}

Tensor *tensor_astype(const Tensor *t, DType dt) {
    OpAttrs at;
    memset(&at, 0, sizeof at);
    at.dtype = (int)dt;
    OpArg in = op_arg_tensor(t);
    Tensor *out = NULL;
    return op_run_with(OP_ASTYPE, &in, 1, &at, &out) ? NULL : out;
}

bool tensor_equal(const Tensor *a, const Tensor *b) {
    if (a->device == DEV_CPU && b->device == DEV_CPU) return cpu_same_bits(a, b);
    Tensor *x = tensor_host(a), *y = x ? tensor_host(b) : NULL;
    bool same = x && y && cpu_same_bits(x, y);
    tensor_release(x);
    tensor_release(y);
    return same;
}

Tensor *tensor_index(Tensor *t, const IndexItem *idx, int n, const Tensor *v, bool set) {
    if (t->device == DEV_CPU && (!v || v->device == DEV_CPU))
        return set ? op_index_set(t, idx, n, v) : op_index(t, idx, n);
    Tensor *h = tensor_host(t), *hv = v && h ? tensor_host(v) : NULL;
    Tensor *r = h && (!v || hv) ? (set ? op_index_set(h, idx, n, hv) : op_index(h, idx, n)) : NULL;
    tensor_release(h);
    tensor_release(hv);
    Tensor *moved = r ? tensor_to(r, t->device) : NULL;
    tensor_release(r);
    return moved;
}

int tensor_first(const Tensor *t, double *x) {
    Tensor *h = tensor_host(t);
    if (!h) return -1;
    *x = tensor_get(h, 0);
    tensor_release(h);
    return 0;
}

Tensor *tensor_retain(Tensor *t) {
    t->rc++;
    return t;
}

void tensor_release(Tensor *t) {
    if (!t || --t->rc > 0) return;
    if (--t->buf->rc == 0) {
        if (t->buf->device == DEV_CPU) {
            ops_ctx()->tensor_live_bytes -= (int64_t)t->buf->bytes;
            mem_free(t->buf->data);
        } else {   /* registered before the buffer existed, and never unregistered */
            op_device(t->buf->device)->release(t->buf);
        }
        mem_free(t->buf);
    }
    mem_free(t);
}

double tensor_get(const Tensor *t, int64_t i) {
    switch (t->dtype) {
    case DT_BOOL: return ((const uint8_t *)t->data)[i];
    case DT_I64: return (double)((const int64_t *)t->data)[i];
    case DT_F32: return ((const float *)t->data)[i];
    default: return ((const double *)t->data)[i];
    }
}

void tensor_set(Tensor *t, int64_t i, double v) {
    switch (t->dtype) {
    case DT_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    case DT_I64: ((int64_t *)t->data)[i] = double_fits_i64(v) ? (int64_t)v : INT64_MIN; break;
    case DT_F32: ((float *)t->data)[i] = (float)v; break;
    default: ((double *)t->data)[i] = v; break;
    }
}
