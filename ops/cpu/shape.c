/* shape.c - shape ops: reshape, transpose, expand_dims, squeeze, concat, stack,
 * broadcast_to; and construction: full, arange, linspace, eye.
 * Ops that only change the shape share the input's buffer (tensors are immutable). */
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"
#include "infer.h"

Tensor *op_reshape(Tensor *a, const Shape *s) {
    Shape sa, t;
    shape_of(a, &sa);
    if (shape_reshape(&sa, s, &t)) return NULL;
    return tensor_view(a, &t);
}

Tensor *op_transpose(const Tensor *a, const int *perm_in, int n) {
    int perm[TSL_MAX_RANK];
    Shape sa, so;
    shape_of(a, &sa);
    if (shape_transpose(&sa, perm_in, n, perm, &so)) return NULL;
    Tensor *r = tensor_new(a->dtype, &so);
    if (r && op_transpose_into(a, perm_in, n, r)) {
        tensor_release(r);
        r = NULL;
    }
    return r;
}

/* The permuted copy into r, which has the result's dtype and shape (and is not a). */
int op_transpose_into(const Tensor *a, const int *perm_in, int n, Tensor *r) {
    int perm[TSL_MAX_RANK];
    Shape sa, so;
    shape_of(a, &sa);
    if (shape_transpose(&sa, perm_in, n, perm, &so)) return -1;
    int64_t src_stride[TSL_MAX_RANK], s = 1;
    for (int i = a->ndim - 1; i >= 0; i--) { src_stride[i] = s; s *= a->shape[i]; }
    if (r->size == 0) return 0;
    size_t esz = dtype_size(a->dtype);
    int nd = a->ndim;
    int64_t idx[TSL_MAX_RANK] = { 0 }, off = 0;
    int64_t inner = nd ? so.d[nd - 1] : 1, istr = nd ? src_stride[perm[nd - 1]] : 1;
    char *out = r->data;
    const char *in = a->data;
    for (int64_t o = 0; o < r->size; o += inner) {
        if (esz == 4) for (int64_t j = 0; j < inner; j++) ((float *)out)[o + j] = ((const float *)in)[off + j * istr];
        else if (esz == 8) for (int64_t j = 0; j < inner; j++) ((int64_t *)out)[o + j] = ((const int64_t *)in)[off + j * istr];
        else for (int64_t j = 0; j < inner; j++) out[o + j] = in[off + j * istr];
        for (int d = nd - 2; d >= 0; d--) {
            idx[d]++;
            off += src_stride[perm[d]];
            if (idx[d] < so.d[d]) break;
            off -= src_stride[perm[d]] * so.d[d];
            idx[d] = 0;
        }
    }
    return 0;
}

Tensor *op_expand_dims(Tensor *a, int axis) {
    Shape sa, s;
    shape_of(a, &sa);
    if (infer_expand_dims(&sa, axis, &s)) return NULL;
    return tensor_view(a, &s);
}

Tensor *op_squeeze(Tensor *a, const int *axes, int n) {
    Shape sa, s;
    shape_of(a, &sa);
    if (infer_squeeze(&sa, axes, n, &s)) return NULL;
    return tensor_view(a, &s);
}

/* The result shape and dtype of concat (stack == false) or stack of n tensors. */
static int infer_joined(Tensor *const *ts, int n, int axis, bool stack, Shape *so, DType *dt) {
    Shape *shapes = mem_alloc(sizeof(Shape) * (size_t)(n + 1));
    const Shape **ptrs = mem_alloc(sizeof(Shape *) * (size_t)(n + 1));
    DType *dts = mem_alloc(sizeof(DType) * (size_t)(n + 1));
    for (int k = 0; k < n; k++) {
        shape_of(ts[k], &shapes[k]);
        ptrs[k] = &shapes[k];
        dts[k] = ts[k]->dtype;
    }
    int rc = stack ? infer_stack(ptrs, dts, n, axis, so, dt) : infer_concat(ptrs, dts, n, axis, so, dt);
    mem_free(shapes);
    mem_free(ptrs);
    mem_free(dts);
    return rc;
}

Tensor *op_concat(Tensor *const *ts, int n, int axis) {
    Shape so;
    DType dt;
    if (infer_joined(ts, n, axis, false, &so, &dt)) return NULL;
    int ax = axis < 0 ? axis + ts[0]->ndim : axis;
    Tensor *r = tensor_new(dt, &so);
    if (!r) return NULL;
    int64_t outer = 1;
    for (int i = 0; i < ax; i++) outer *= so.d[i];
    size_t esz = dtype_size(dt);
    int64_t row = (int64_t)esz * (r->size / (outer ? outer : 1) / (so.d[ax] ? so.d[ax] : 1));
    char *dst = r->data;
    for (int64_t o = 0; o < outer; o++)
        for (int k = 0; k < n; k++) {
            Tensor *c = ts[k]->dtype == dt ? tensor_retain(ts[k]) : op_astype(ts[k], dt);
            if (!c) { tensor_release(r); return NULL; }
            int64_t bytes = row * ts[k]->shape[ax];
            memcpy(dst, (const char *)c->data + o * bytes, (size_t)bytes);
            dst += bytes;
            tensor_release(c);
        }
    return r;
}

Tensor *op_stack(Tensor *const *ts, int n, int axis) {
    Shape so;
    DType dt;
    if (infer_joined(ts, n, axis, true, &so, &dt)) return NULL;
    int ax = axis < 0 ? axis + ts[0]->ndim + 1 : axis;
    Tensor **ex = mem_alloc(sizeof(Tensor *) * (size_t)n);
    int made = 0;
    Tensor *r = NULL;
    for (; made < n; made++)
        if (!(ex[made] = op_expand_dims(ts[made], ax))) goto out;
    r = op_concat(ex, n, ax);
out:
    for (int k = 0; k < made; k++) tensor_release(ex[k]);
    mem_free(ex);
    return r;
}

Tensor *op_broadcast_to(const Tensor *a, const Shape *s) {
    Shape sa;
    shape_of(a, &sa);
    if (shape_broadcast_to(&sa, s)) return NULL;
    if (shape_equal(&sa, s)) return tensor_retain((Tensor *)a);
    Tensor *r = tensor_new(a->dtype, s);
    if (r) op_broadcast_into(a, r);
    return r;
}

/* a repeated over r's shape (a broadcasts to it; r has a's dtype and is not a). */
void op_broadcast_into(const Tensor *a, Tensor *r) {
    Shape sa, so;
    shape_of(a, &sa);
    shape_of(r, &so);
    const Shape *s = &so;
    if (r->size == 0) return;
    if (a->size == r->size) {
        memcpy(r->data, a->data, (size_t)r->size * dtype_size(a->dtype));
        return;
    }
    BIter it;
    const Shape *ins[1] = { &sa };
    biter_init(&it, s, ins, 1);
    size_t esz = dtype_size(a->dtype);
    int64_t idx[TSL_MAX_RANK] = { 0 }, off = 0, inner = it.shape[it.nd - 1], st = it.stride[0][it.nd - 1];
    char *out = r->data;
    for (int64_t o = 0; o < r->size; o += inner) {
        for (int64_t j = 0; j < inner; j++)
            memcpy(out + (o + j) * (int64_t)esz, (const char *)a->data + (off + j * st) * (int64_t)esz, esz);
        for (int d = it.nd - 2; d >= 0; d--) {
            idx[d]++;
            off += it.stride[0][d];
            if (idx[d] < it.shape[d]) break;
            off -= it.stride[0][d] * it.shape[d];
            idx[d] = 0;
        }
    }
}

/* ---------- construction ---------- */

Tensor *op_full(const Shape *s, double v, DType dt) {
    Tensor *r = tensor_new(dt, s);
    if (!r) return NULL;
    if (dt == DT_F32) { float x = (float)v; for (int64_t i = 0; i < r->size; i++) ((float *)r->data)[i] = x; }
    else for (int64_t i = 0; i < r->size; i++) tensor_set(r, i, v);
    return r;
}

Tensor *op_arange(double start, double stop, double step, DType dt) {
    if (step == 0 || isnan(step) || isnan(start) || isnan(stop)) { op_fail("arange: step must be a non-zero number"); return NULL; }
    double count = ceil((stop - start) / step);
    if (count < 0) count = 0;
    if (count > 9e15) { op_fail("arange: %g elements is too many", count); return NULL; }
    Shape s = { 1, { (int64_t)count } };
    Tensor *r = tensor_new(dt, &s);
    if (!r) return NULL;
    for (int64_t i = 0; i < r->size; i++) tensor_set(r, i, start + (double)i * step);
    return r;
}

/* As NumPy: start + i*step, with the last element exactly b. */
Tensor *op_linspace(double a, double b, int64_t n) {
    if (n < 0) { op_fail("linspace: number of samples %lld must be non-negative", (long long)n); return NULL; }
    Shape s = { 1, { n } };
    Tensor *r = tensor_new(DT_F32, &s);
    if (!r) return NULL;
    double step = n > 1 ? (b - a) / (double)(n - 1) : 0;
    for (int64_t i = 0; i < n; i++) tensor_set(r, i, a + (double)i * step);
    if (n > 1) tensor_set(r, n - 1, b);
    return r;
}

Tensor *op_eye(int64_t n) {
    if (n < 0) { op_fail("eye: size %lld must be non-negative", (long long)n); return NULL; }
    Shape s = { 2, { n, n } };
    Tensor *r = tensor_zeros(DT_F32, &s);
    if (!r) return NULL;
    for (int64_t i = 0; i < n; i++) ((float *)r->data)[i * n + i] = 1;
    return r;
}
