/* shape.c - the data movement of transpose and broadcast_to, used by their kernels
 * (kernels.c) and by other kernels that need a permuted or broadcast copy. */
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"
#include "infer.h"

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

/* The last two axes swapped, batch by batch, in 16 x 16 tiles so that reads and writes both
 * stay in cache lines (a matmul's gradient transposes one of its operands every time). */
#define TILED_SWAP(T)                                                                            \
    do {                                                                                       \
        const T *src = (const T *)a->data;                                                     \
        T *dst = (T *)r->data;                                                                 \
        for (int64_t bi = 0; bi < batch; bi++, src += rows * cols, dst += rows * cols)         \
            for (int64_t i0 = 0; i0 < rows; i0 += 16)                                          \
                for (int64_t j0 = 0; j0 < cols; j0 += 16) {                                    \
                    int64_t i1 = i0 + 16 < rows ? i0 + 16 : rows, j1 = j0 + 16 < cols ? j0 + 16 : cols; \
                    for (int64_t j = j0; j < j1; j++)                                          \
                        for (int64_t i = i0; i < i1; i++) dst[j * rows + i] = src[i * cols + j]; \
                }                                                                              \
    } while (0)

static bool swaps_last_two(const int *perm, int nd) {
    if (nd < 2 || perm[nd - 2] != nd - 1 || perm[nd - 1] != nd - 2) return false;
    for (int i = 0; i < nd - 2; i++)
        if (perm[i] != i) return false;
    return true;
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
    if (swaps_last_two(perm, nd) && (esz == 4 || esz == 8)) {
        int64_t rows = a->shape[nd - 2], cols = a->shape[nd - 1], batch = a->size / (rows * cols);
        if (esz == 4) TILED_SWAP(uint32_t);
        else TILED_SWAP(uint64_t);
        return 0;
    }
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



/* The result shape and dtype of concat (stack == false) or stack of n tensors. */



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
        /* typed runs: a stride-0 source fills, a stride-1 one copies (a gradient broadcast back) */
        const char *src = (const char *)a->data + off * (int64_t)esz;
        if (esz == 4 && st == 0) {
            uint32_t v;
            memcpy(&v, src, 4);
            for (int64_t j = 0; j < inner; j++) ((uint32_t *)out)[o + j] = v;
        } else if (esz == 8 && st == 0) {
            uint64_t v;
            memcpy(&v, src, 8);
            for (int64_t j = 0; j < inner; j++) ((uint64_t *)out)[o + j] = v;
        } else if (st == 1) {
            memcpy(out + o * (int64_t)esz, src, (size_t)inner * esz);
        } else {
            for (int64_t j = 0; j < inner; j++) memcpy(out + (o + j) * (int64_t)esz, src + j * st * (int64_t)esz, esz);
        }
        for (int d = it.nd - 2; d >= 0; d--) {
            idx[d]++;
            off += it.stride[0][d];
            if (idx[d] < it.shape[d]) break;
            off -= it.stride[0][d] * it.shape[d];
            idx[d] = 0;
        }
    }
}





