/* gpu_matmul.c - matmul and dot on the GPU through cuBLAS. */
#include <math.h>
#include <string.h>
#include "gpu_impl.h"

/* ---------- matmul (cuBLAS) ---------- */

/* matmul and dot in f32/f64 (operands of other dtypes are converted, as on the CPU): 1-D
 * operands as a row or a column, 2-D, and 3-D batches (equal, or one side a single matrix);
 * dot with a 0-d operand is a product. */
bool gpu_matmul_supported(const OpCall *c) {
    if (!dtype_is_float(op_promote(c->in, 2))) return false;
    int nd[2];
    for (int k = 0; k < 2; k++) nd[k] = c->in[k].kind == ARG_TENSOR ? c->in[k].ndim : 0;
    if (nd[0] == 0 || nd[1] == 0) return c->op == OP_DOT;
    if (nd[0] > 3 || nd[1] > 3 || (c->op == OP_MATMUL && c->at->flag && nd[0] < 2)) return false;
    return nd[0] < 3 || nd[1] < 3 || c->in[0].dims[0] == c->in[1].dims[0];
}

int gpu_run_matmul(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    double num[2] = { 0, 0 };
    bool ok = true;
    Tensor *a = gpu_operand(c, 0, dt, num, &ok), *b = ok ? gpu_operand(c, 1, dt, num, &ok) : NULL;
    int rc = -1;
    if (!ok) goto done;
    if (!a || !b || a->ndim == 0 || b->ndim == 0) {   /* dot with a 0-d operand */
        rc = gpu_ew_launch(OP_MUL, dt, 2, (Tensor *[]){ a, b }, num, out, 0);
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
    rc = out->size ? GPU_CALL(gemm, &j) : 0;
done:
    tensor_release(a);
    tensor_release(b);
    return rc;
}
