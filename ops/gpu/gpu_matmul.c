/* gpu_matmul.c - matmul and dot on the GPU with the CPU's rules (ops/cpu/linalg.c): 1-D
 * operands as a row or a column, batches of any rank that broadcast against each other,
 * transpose_a (transpose_b: b's transposed copy, made on the GPU first); f32/f64 through cuBLAS (one strided-batched call when each operand's batch is
 * the whole batch or a single matrix, else one call per matrix), i64 and bool through the
 * plugin's integer kernel (wrapping i64 sums; bool computes in i64 and converts at the end,
 * as the CPU). dot with a 0-d operand is a product. */
#include <math.h>
#include <string.h>
#include "gpu_impl.h"

bool gpu_matmul_supported(const OpCall *c) {
    DType dt = op_promote(c->in, 2);
    for (int k = 0; k < 2; k++)
        if (c->in[k].kind != ARG_TENSOR || c->in[k].ndim == 0) return c->op == OP_DOT && gpu_cu->has_ew(OP_MUL, dt);
    return c->in[0].ndim <= TSL_CUDA_MAX_RANK && c->in[1].ndim <= TSL_CUDA_MAX_RANK;
}

/* The product's layout as the CPU computes it: a as [batch.., m, k] (a vector is one row),
 * b as [batch.., k, n] (a vector is one column), the batch broadcast; each operand's offset
 * per batch axis in elements (0 where it is broadcast). */
typedef struct {
    int64_t m, n, k, nbatch;
    bool ta;
    int nbd;
    int64_t bshape[TSL_MAX_RANK], astr[TSL_MAX_RANK], bstr[TSL_MAX_RANK];
} Layout;

/* t's batch axes (all but its last two) aligned at the right with the nbd result axes. */
static void batch_strides(const Tensor *t, int64_t mat, int nbd, const int64_t *bshape, int64_t *str) {
    int tb = t->ndim > 2 ? t->ndim - 2 : 0;
    int64_t s = mat;
    for (int d = nbd - 1; d >= 0; d--) {
        int e = d - (nbd - tb);
        int64_t len = e >= 0 ? t->shape[e] : 1;
        str[d] = len == bshape[d] && len != 1 ? s : 0;
        s *= len;
    }
}

static Layout layout_of(const Tensor *a, bool ta, const Tensor *b) {
    Layout L;
    memset(&L, 0, sizeof L);
    L.ta = ta && a->ndim >= 2;   /* a vector is the same either way */
    int64_t ar = a->ndim == 1 ? 1 : a->shape[a->ndim - 2], ac = a->shape[a->ndim - 1];
    L.m = L.ta ? ac : ar;
    L.k = L.ta ? ar : ac;
    L.n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    int ab = a->ndim > 2 ? a->ndim - 2 : 0, bb = b->ndim > 2 ? b->ndim - 2 : 0;
    L.nbd = ab > bb ? ab : bb;
    L.nbatch = 1;
    for (int d = 0; d < L.nbd; d++) {
        int ea = d - (L.nbd - ab), eb = d - (L.nbd - bb);
        int64_t la = ea >= 0 ? a->shape[ea] : 1, lb = eb >= 0 ? b->shape[eb] : 1;
        L.bshape[d] = la == 1 ? lb : la;   /* infer checked that they broadcast */
        L.nbatch *= L.bshape[d];
    }
    batch_strides(a, L.m * L.k, L.nbd, L.bshape, L.astr);
    batch_strides(b, L.k * L.n, L.nbd, L.bshape, L.bstr);
    return L;
}

/* Whether an operand's batch offsets are those of a contiguous walk over the whole batch
 * (every axis its own) or all zero (one matrix for every batch): one strided cuBLAS call. */
static bool strided(const Layout *L, const int64_t *str, int64_t mat, int64_t *stride) {
    bool zero = true, whole = true;
    int64_t s = mat;
    for (int d = L->nbd - 1; d >= 0; d--) {
        zero &= str[d] == 0;
        whole &= str[d] == s || L->bshape[d] == 1;
        s *= L->bshape[d];
    }
    *stride = zero ? 0 : mat;
    return zero || whole;
}

/* Float: cuBLAS, in one call when the batch allows it, else one call per matrix. */
static int float_matmul(const Layout *L, DType dt, const Tensor *a, const Tensor *b, Tensor *out) {
    CudaGemm j = { .dt = dt, .trans_a = L->ta, .m = L->m, .n = L->n, .k = L->k, .a = a->data, .b = b->data,
                   .c = out->data, .batch = L->nbatch };
    char err[400];
    if (strided(L, L->astr, L->m * L->k, &j.a_stride) && strided(L, L->bstr, L->k * L->n, &j.b_stride))
        return GPU_CALL(gemm, &j);
    size_t esz = dtype_size(dt);
    j.batch = 1;
    j.a_stride = j.b_stride = 0;
    for (int64_t bi = 0; bi < L->nbatch; bi++) {
        int64_t rem = bi, oa = 0, ob = 0;
        for (int d = L->nbd - 1; d >= 0; d--) {
            int64_t q = rem % L->bshape[d];
            rem /= L->bshape[d];
            oa += q * L->astr[d];
            ob += q * L->bstr[d];
        }
        j.a = (const char *)a->data + (size_t)oa * esz;
        j.b = (const char *)b->data + (size_t)ob * esz;
        j.c = (char *)out->data + (size_t)(bi * L->m * L->n) * esz;
        if (GPU_CALL(gemm, &j)) return -1;
    }
    return 0;
}

/* i64 (bool operands already converted): the plugin's integer kernel into r. */
static int int_matmul(const Layout *L, const Tensor *a, const Tensor *b, Tensor *r) {
    CudaImatmul j = { .m = L->m, .n = L->n, .k = L->k, .trans_a = L->ta, .nbd = L->nbd, .a = a->data, .b = b->data,
                      .c = r->data };
    for (int d = 0; d < L->nbd; d++) {
        j.bshape[d] = L->bshape[d];
        j.a_stride[d] = L->astr[d];
        j.b_stride[d] = L->bstr[d];
    }
    char err[400];
    return GPU_CALL(imatmul, &j);
}

/* The product of GPU tensors a and b (both in ct) into out (dtype dt: ct, or bool from i64). */
static int matmul_into(const Layout *L, DType ct, const Tensor *a, const Tensor *b, Tensor *out) {
    Shape so;
    shape_of(out, &so);
    Tensor *r = ct == out->dtype ? tensor_retain(out) : gpu_alloc(ct, &so);
    if (!r) return -1;
    int rc;
    if (L->k == 0)   /* an empty sum: zeros (cuBLAS is not asked about k = 0) */
        rc = gpu_ew_launch(OP_MUL, ct, 2, (Tensor *[]){ NULL, NULL }, (double[]){ 0, 0 }, r, 0);
    else rc = dtype_is_float(ct) ? float_matmul(L, ct, a, b, r) : int_matmul(L, a, b, r);
    char err[400];
    if (rc == 0 && r != out) rc = GPU_CALL(astype, ct, out->dtype, r->data, out->data, out->size);
    tensor_release(r);
    return rc;
}

int gpu_run_matmul(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    bool product = false;   /* dot with a 0-d operand */
    for (int k = 0; k < 2; k++) product |= c->in[k].kind != ARG_TENSOR || c->in[k].ndim == 0;
    DType ct = product || dtype_is_float(dt) ? dt : DT_I64;
    double num[2] = { 0, 0 };
    bool ok = true;
    Tensor *a = gpu_operand(c, 0, ct, num, &ok), *b = ok ? gpu_operand(c, 1, ct, num, &ok) : NULL;
    int rc = -1;
    if (ok && product) rc = gpu_ew_launch(OP_MUL, dt, 2, (Tensor *[]){ a, b }, num, out, 0);
    else if (ok && out->size == 0) rc = 0;
    else if (ok && c->op == OP_MATMUL && c->at->flag2 && b->ndim >= 2) {   /* transpose_b: b^T copied */
        int perm[TSL_MAX_RANK];
        for (int d = 0; d < b->ndim; d++) perm[d] = d;
        perm[b->ndim - 2] = b->ndim - 1;
        perm[b->ndim - 1] = b->ndim - 2;
        Tensor *bt = gpu_permuted(b, perm);
        if (bt) {
            Layout L = layout_of(a, c->at->flag, bt);
            rc = matmul_into(&L, ct, a, bt, out);
        }
        tensor_release(bt);
    } else if (ok) {
        Layout L = layout_of(a, c->op == OP_MATMUL && c->at->flag, b);
        rc = matmul_into(&L, ct, a, b, out);
    }
    tensor_release(a);
    tensor_release(b);
    return rc;
}
