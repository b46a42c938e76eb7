/* api_tensor.c - tensors through the public API: build, read, .npy files.
 *
 * A tsl_Tensor is the ops layer's Tensor behind an opaque name, so handing one to TSL or
 * back costs a reference count, never a copy. Failures of the ops layer (a shape too large,
 * a file that is no .npy) arrive in op_error() and are moved into the state. */
#include <string.h>
#include "api.h"
#include "tops.h"

_Static_assert((int)TSL_BOOL == (int)DT_BOOL && (int)TSL_I64 == (int)DT_I64 && (int)TSL_F32 == (int)DT_F32 &&
                   (int)TSL_F64 == (int)DT_F64,
               "tsl_DType and DType number the dtypes alike");

static const Tensor *T(const tsl_Tensor *t) { return (const Tensor *)t; }

tsl_Status tsl_tensor_new(tsl_State *S, tsl_DType dtype, int ndim, const int64_t *shape, const void *data,
                          tsl_Tensor **out) {
    if (!out) return TSL_BADARG;
    *out = NULL;
    if ((int)dtype < TSL_BOOL || dtype > TSL_F64) return api_fail(S, TSL_BADARG, "unknown dtype %d", (int)dtype);
    if (ndim < 0 || ndim > TSL_MAX_DIMS || (ndim && !shape))
        return api_fail(S, TSL_BADARG, "a tensor has 0 to %d dimensions, not %d", TSL_MAX_DIMS, ndim);
    Shape s = { .ndim = ndim };
    for (int i = 0; i < ndim; i++) s.d[i] = shape[i];
    if (shape_count(&s) < 0) return api_fail(S, TSL_BADARG, "%s", op_error());
    Tensor *t = data ? tensor_new((DType)dtype, &s) : tensor_zeros((DType)dtype, &s);
    if (!t) return api_fail(S, TSL_ERROR, "%s", op_error());
    if (data) memcpy(t->data, data, (size_t)t->size * dtype_size(t->dtype));
    *out = (tsl_Tensor *)t;
    return TSL_OK;
}

void tsl_tensor_free(tsl_Tensor *t) { tensor_release((Tensor *)t); }
/* The accessors cannot fail, so NULL (or a dimension out of range) answers -1, never a crash. */
tsl_DType tsl_tensor_dtype(const tsl_Tensor *t) { return t ? (tsl_DType)T(t)->dtype : (tsl_DType)-1; }
int tsl_tensor_ndim(const tsl_Tensor *t) { return t ? T(t)->ndim : -1; }
int64_t tsl_tensor_dim(const tsl_Tensor *t, int i) { return t && i >= 0 && i < T(t)->ndim ? T(t)->shape[i] : -1; }
int64_t tsl_tensor_size(const tsl_Tensor *t) { return t ? T(t)->size : -1; }
const void *tsl_tensor_data(const tsl_Tensor *t) { return t && T(t)->device == DEV_CPU ? T(t)->data : NULL; }

tsl_Status tsl_tensor_copy_data(tsl_State *S, const tsl_Tensor *t, void *dst, size_t cap) {
    if (!t || (!dst && cap)) return TSL_BADARG;
    size_t bytes = (size_t)T(t)->size * dtype_size(T(t)->dtype);
    if (bytes > cap) return api_fail(S, TSL_BADARG, "the tensor's %zu bytes do not fit in %zu", bytes, cap);
    if (T(t)->device != DEV_CPU) {   /* through a host copy */
        Tensor *h = tensor_host(T(t));
        if (!h) return api_fail(S, TSL_ERROR, "%s", op_error());
        if (bytes) memcpy(dst, h->data, bytes);
        tensor_release(h);
        return TSL_OK;
    }
    if (bytes) memcpy(dst, T(t)->data, bytes);
    return TSL_OK;
}

tsl_Status tsl_npy_read(tsl_State *S, const char *path, tsl_Tensor **out) {
    if (!path || !out) return TSL_BADARG;
    Tensor *t = npy_load(path);
    *out = (tsl_Tensor *)t;
    return t ? TSL_OK : api_fail(S, TSL_IO, "%s", op_error());
}

tsl_Status tsl_npy_write(tsl_State *S, const char *path, const tsl_Tensor *t) {
    if (!path || !t) return TSL_BADARG;
    Tensor *h = tensor_host(T(t));   /* a GPU tensor is written from a host copy */
    int rc = h ? npy_save(path, h) : -1;
    tensor_release(h);
    return rc == 0 ? TSL_OK : api_fail(S, h ? TSL_IO : TSL_ERROR, "%s", op_error());
}
