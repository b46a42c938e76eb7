/* shape.c - shape ops: reshape, transpose, expand_dims, squeeze, concat, stack,
 * broadcast_to; and construction: full, arange, linspace, eye.
 * Ops that only change the shape share the input's buffer (tensors are immutable). */
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"

static int norm_axis(int axis, int ndim, const char *name) {
    int ax = axis < 0 ? axis + ndim : axis;
    if (ax < 0 || ax >= ndim) {
        op_fail("%s: axis %d is out of range for rank %d", name, axis, ndim);
        return -1;
    }
    return ax;
}

Tensor *op_reshape(Tensor *a, const Shape *s) {
    Shape t = *s;
    int infer = -1;
    int64_t known = 1;
    char b1[600], b2[600];
    if (t.ndim > TSL_MAX_RANK) { op_fail("reshape: rank %d is above the limit of %d", t.ndim, TSL_MAX_RANK); return NULL; }
    for (int i = 0; i < t.ndim; i++) {
        if (t.d[i] == -1) {
            if (infer >= 0) { op_fail("reshape: only one dimension can be -1"); return NULL; }
            infer = i;
        } else if (t.d[i] < 0) {
            op_fail("reshape: negative dimension %lld", (long long)t.d[i]);
            return NULL;
        } else if (__builtin_mul_overflow(known, t.d[i], &known)) {
            op_fail("reshape: shape %s is too large (element count overflows)", shape_str(&t, b1, sizeof b1));
            return NULL;
        }
    }
    if (infer >= 0) {
        if (known == 0 || a->size % known) {
            Shape sa;
            shape_of(a, &sa);
            op_fail("cannot reshape a tensor of shape %s into %s", shape_str(&sa, b1, sizeof b1), shape_str(&t, b2, sizeof b2));
            return NULL;
        }
        t.d[infer] = a->size / known;
        known = a->size;
    }
    if (known != a->size) {
        Shape sa;
        shape_of(a, &sa);
        op_fail("cannot reshape a tensor of shape %s (%lld elements) into %s", shape_str(&sa, b1, sizeof b1),
                (long long)a->size, shape_str(&t, b2, sizeof b2));
        return NULL;
    }
    return tensor_view(a, &t);
}

Tensor *op_transpose(const Tensor *a, const int *perm_in, int n) {
    int perm[TSL_MAX_RANK];
    bool seen[TSL_MAX_RANK] = { false };
    if (!perm_in) {
        for (int i = 0; i < a->ndim; i++) perm[i] = a->ndim - 1 - i;
    } else {
        if (n != a->ndim) { op_fail("transpose: axes has %d entries for a tensor of rank %d", n, a->ndim); return NULL; }
        for (int i = 0; i < n; i++) {
            int ax = norm_axis(perm_in[i], a->ndim, "transpose");
            if (ax < 0) return NULL;
            if (seen[ax]) { op_fail("transpose: axis %d is repeated", perm_in[i]); return NULL; }
            seen[ax] = true;
            perm[i] = ax;
        }
    }
    Shape so = { a->ndim, { 0 } };
    int64_t src_stride[TSL_MAX_RANK], s = 1;
    for (int i = a->ndim - 1; i >= 0; i--) { src_stride[i] = s; s *= a->shape[i]; }
    for (int i = 0; i < a->ndim; i++) so.d[i] = a->shape[perm[i]];
    Tensor *r = tensor_new(a->dtype, &so);
    if (!r || r->size == 0) return r;
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
    return r;
}

Tensor *op_expand_dims(Tensor *a, int axis) {
    int ax = norm_axis(axis, a->ndim + 1, "expand_dims");
    if (ax < 0) return NULL;
    if (a->ndim + 1 > TSL_MAX_RANK) { op_fail("expand_dims: rank would exceed %d", TSL_MAX_RANK); return NULL; }
    Shape s = { a->ndim + 1, { 0 } };
    for (int i = 0, k = 0; i < s.ndim; i++) s.d[i] = i == ax ? 1 : a->shape[k++];
    return tensor_view(a, &s);
}

Tensor *op_squeeze(Tensor *a, const int *axes, int n) {
    bool drop[TSL_MAX_RANK] = { false };
    if (n < 0) {
        for (int i = 0; i < a->ndim; i++) drop[i] = a->shape[i] == 1;
    } else {
        for (int k = 0; k < n; k++) {
            int ax = norm_axis(axes[k], a->ndim, "squeeze");
            if (ax < 0) return NULL;
            if (a->shape[ax] != 1) {
                op_fail("squeeze: axis %d has size %lld, not 1", axes[k], (long long)a->shape[ax]);
                return NULL;
            }
            drop[ax] = true;
        }
    }
    Shape s = { 0, { 0 } };
    for (int i = 0; i < a->ndim; i++)
        if (!drop[i]) s.d[s.ndim++] = a->shape[i];
    return tensor_view(a, &s);
}

Tensor *op_concat(Tensor *const *ts, int n, int axis) {
    if (n == 0) { op_fail("concat needs at least one tensor"); return NULL; }
    const Tensor *f = ts[0];
    if (f->ndim == 0) { op_fail("concat: zero-dimensional tensors cannot be concatenated"); return NULL; }
    int ax = norm_axis(axis, f->ndim, "concat");
    if (ax < 0) return NULL;
    DType dt = f->dtype;
    Shape so;
    shape_of(f, &so);
    so.d[ax] = 0;
    for (int k = 0; k < n; k++) {
        if (ts[k]->ndim != f->ndim) {
            op_fail("concat: all tensors must have the same rank (got %d and %d)", f->ndim, ts[k]->ndim);
            return NULL;
        }
        for (int i = 0; i < f->ndim; i++)
            if (i != ax && ts[k]->shape[i] != f->shape[i]) {
                char b1[600], b2[600];
                Shape s1, s2;
                shape_of(f, &s1);
                shape_of(ts[k], &s2);
                op_fail("concat: shapes %s and %s differ outside axis %d", shape_str(&s1, b1, sizeof b1),
                        shape_str(&s2, b2, sizeof b2), axis);
                return NULL;
            }
        if (ts[k]->dtype > dt) dt = ts[k]->dtype;
        so.d[ax] += ts[k]->shape[ax];
    }
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
    if (n == 0) { op_fail("stack needs at least one tensor"); return NULL; }
    for (int k = 1; k < n; k++) {
        Shape s0, sk;
        shape_of(ts[0], &s0);
        shape_of(ts[k], &sk);
        if (!shape_equal(&s0, &sk)) {
            char b1[600], b2[600];
            op_fail("stack: all tensors must have the same shape (got %s and %s)", shape_str(&s0, b1, sizeof b1),
                    shape_str(&sk, b2, sizeof b2));
            return NULL;
        }
    }
    int ax = norm_axis(axis, ts[0]->ndim + 1, "stack");
    if (ax < 0) return NULL;
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
    Shape sa, so;
    shape_of(a, &sa);
    char b1[600], b2[600];
    if (shape_broadcast(&sa, s, &so, "broadcast_to") || !shape_equal(&so, s) || sa.ndim > s->ndim) {
        op_fail("cannot broadcast a tensor of shape %s to %s", shape_str(&sa, b1, sizeof b1), shape_str(s, b2, sizeof b2));
        return NULL;
    }
    if (shape_equal(&sa, s)) return tensor_retain((Tensor *)a);
    Tensor *r = tensor_new(a->dtype, s);
    if (!r || r->size == 0) return r;
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
    return r;
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
