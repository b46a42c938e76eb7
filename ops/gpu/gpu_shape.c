/* gpu_shape.c - the GPU's shape ops and conversions: views, transpose, broadcast_to,
 * astype, concat/stack, and equal/allclose (one truth value, compared on the host). */
#include <math.h>
#include <string.h>
#include "gpu_impl.h"
#include "infer.h"
#include "cpu/cpu.h"   /* equal and allclose compare on the host */

/* ---------- shapes and conversions ---------- */

int gpu_run_view(const OpCall *c, Tensor **out) {
    Shape s[OP_MAX_OUT];
    DType dt[OP_MAX_OUT];
    if (op_infer(c, s, dt)) return -1;
    return (out[0] = tensor_view((Tensor *)c->in[0].t, &s[0])) ? 0 : -1;
}

int gpu_gather(const Tensor *t, const int64_t *stride, Tensor *out) {
    char err[400];
    return GPU_CALL(gather_strided, (int)dtype_size(t->dtype), out->ndim, out->shape, stride, t->data, out->data,
                out->size);
}

int gpu_run_transpose(const OpCall *c, Tensor *out) {
    int perm[TSL_MAX_RANK];
    Shape sa, so;
    shape_of(c->in[0].t, &sa);
    if (shape_transpose(&sa, c->at->naxes < 0 ? NULL : c->at->axes, c->at->naxes, perm, &so)) return -1;
    return gpu_permute_into(c->in[0].t, perm, out);
}

int gpu_run_broadcast(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int64_t stride[TSL_MAX_RANK], s = 1;
    for (int d = out->ndim - 1, e = t->ndim - 1; d >= 0; d--, e--) {
        int64_t len = e >= 0 ? t->shape[e] : 1;
        stride[d] = len == out->shape[d] && len != 1 ? s : 0;
        s *= len;
    }
    return gpu_gather(t, stride, out);
}

int gpu_run_astype(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    char err[400];
    if (t->dtype == out->dtype) return GPU_CALL(copy, out->data, t->data, gpu_nbytes(t));
    return GPU_CALL(astype, t->dtype, out->dtype, t->data, out->data, t->size);
}

/* concat/stack: for each index before the axis, each operand's block in turn (as the CPU's
 * cpu_join): one 2-D copy per operand, its blocks strided by the result's row. */
int gpu_run_join(const OpCall *c, Tensor *r) {
    int ax = c->at->axis < 0 ? c->at->axis + r->ndim : c->at->axis;
    int64_t outer = 1, row = (int64_t)dtype_size(r->dtype), total = 0;
    for (int i = 0; i < ax; i++) outer *= r->shape[i];
    for (int i = ax + 1; i < r->ndim; i++) row *= r->shape[i];
    for (int k = 0; k < c->nin; k++) total += row * (c->op == OP_STACK ? 1 : c->in[k].t->shape[ax]);
    char err[400];
    int64_t at = 0;
    for (int k = 0; k < c->nin; k++) {
        Tensor *t = gpu_as_dtype(c->in[k].t, r->dtype);
        if (!t) return -1;
        int64_t bytes = row * (c->op == OP_STACK ? 1 : t->shape[ax]);
        int rc = r->size ? GPU_CALL(copy2d, (char *)r->data + at, (size_t)total, t->data, (size_t)bytes, (size_t)bytes,
                                (size_t)outer) : 0;
        tensor_release(t);
        if (rc) return -1;
        at += bytes;
    }
    return 0;
}

/* equal and allclose answer one truth value: the operands are compared on the host. */
int gpu_run_equal(const OpCall *c, Tensor *out) {
    Tensor *a = tensor_host(c->in[0].t), *b = a ? tensor_host(c->in[1].t) : NULL;
    int r = !b ? -1 : c->op == OP_EQUAL ? tensor_equal(a, b) : op_allclose(a, b, c->at->f[0], c->at->f[1]);
    tensor_release(a);
    tensor_release(b);
    if (r < 0) return -1;
    uint8_t v = (uint8_t)r;
    char err[400];
    return GPU_CALL(to_device, out->data, &v, 1);
}

/* The remap of tile and repeat: the input index along output axis d is
 * (index / div[d]) % mod[d], at the input's stride[d]. */
static int remap(const Tensor *t, Tensor *out, const int64_t *div, const int64_t *mod, const int64_t *stride) {
    char err[400];
    return out->size ? GPU_CALL(remap, (int)dtype_size(t->dtype), out->ndim, out->shape, div, mod, stride, t->data,
                                out->data, out->size)
                     : 0;
}

/* tile: t's shape aligned at the last axes (leading 1s), each output index modulo t's. */
int gpu_run_tile(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    int64_t div[TSL_MAX_RANK], mod[TSL_MAX_RANK], stride[TSL_MAX_RANK], s = 1;
    for (int d = out->ndim - 1; d >= 0; d--) {
        int e = d - (out->ndim - t->ndim);
        div[d] = 1;
        mod[d] = e >= 0 ? t->shape[e] : 1;
        stride[d] = s;
        s *= mod[d];
    }
    return remap(t, out, div, mod, stride);
}

/* repeat: each element n times along the axis, or of the flattened tensor without one. */
int gpu_run_repeat(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    const OpDef *d = op_def(c->op);
    bool axis_given = false;
    for (int p = 0; p < d->nparams; p++)
        if (!strcmp(d->params[p].name, "axis")) axis_given = op_given(c, p);
    int64_t n = c->at->i[0], div[TSL_MAX_RANK], mod[TSL_MAX_RANK], stride[TSL_MAX_RANK], s = 1;
    if (!axis_given) {   /* out is 1-D: element k of it is t's flat element k / n */
        div[0] = n;
        mod[0] = t->size ? t->size : 1;
        stride[0] = 1;
        return remap(t, out, div, mod, stride);
    }
    int ax = c->at->axis < 0 ? c->at->axis + t->ndim : c->at->axis;
    for (int k = t->ndim - 1; k >= 0; k--) {
        div[k] = k == ax ? n : 1;
        mod[k] = t->shape[k] ? t->shape[k] : 1;
        stride[k] = s;
        s *= t->shape[k];
    }
    return remap(t, out, div, mod, stride);
}

/* full with a GPU tensor as its value (zeros, ones and full of a number have no tensor
 * operand: the CPU makes them): the value read as the CPU's cpu_full reads it, converted as
 * its tensor_set converts it, then spread by a strided copy with every stride 0. */
int gpu_run_full(const OpCall *c, Tensor *out) {
    double v = c->op == OP_ONES;
    if (c->op == OP_FULL && c->in[0].kind == ARG_NUM) v = c->in[0].x;
    else if (c->op == OP_FULL && tensor_first(c->in[0].t, &v)) return -1;
    if (out->dtype == DT_I64 && !double_fits_i64(v)) {   /* as astype: never a wrapped integer */
        op_fail("cannot convert %s to i64", isnan(v) ? "nan" : isinf(v) ? (v > 0 ? "inf" : "-inf") : "an out-of-range value");
        return -1;
    }
    if (out->size == 0) return 0;
    Tensor *one = gpu_number_tensor(out->dtype, v);
    int64_t stride[TSL_MAX_RANK] = { 0 };
    int rc = one ? gpu_gather(one, stride, out) : -1;
    tensor_release(one);
    return rc;
}
