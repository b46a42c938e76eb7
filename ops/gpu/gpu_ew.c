/* gpu_ew.c - the GPU's elementwise ops: one generated kernel per (op, compute dtype,
 * form) launched over operands converted as the CPU converts them, clip built from such
 * launches, and where (a strided family kernel). See gpu.c. */
#include <math.h>
#include <string.h>
#include "gpu_impl.h"
#include "infer.h"
#include "cpu/cpu.h"

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

bool gpu_ew_supported(const OpCall *c) {
    DType ct, rt;
    if (ew_types(c, &ct, &rt)) return false;
    return exact_compare(c) || gpu_cu->has_ew(c->op, ct);
}

/* An integer tensor (op) a number x that is NaN, past i64's range or between two integers,
 * as the CPU plans it (ops/cpu/ew.c compare_plan): a constant, or a[i] <= k / a[i] > k for
 * k = floor(x), an exact comparison with an integral number the kernels already make. */
static int run_exact_compare(const OpCall *c, Tensor *out) {
    int kn = c->in[0].kind == ARG_NUM ? 0 : 1;
    OpCode op = c->op;
    int64_t k = 0;
    CmpPlan plan = cpu_compare_plan(&op, c->in[kn].x, kn == 0, &k);
    if (plan == CMP_TRUE || plan == CMP_FALSE)   /* every element compares the same */
        return gpu_ew_launch(plan == CMP_TRUE ? OP_EQ : OP_NE, DT_I64, 2, (Tensor *[]){ NULL, NULL }, (double[]){ 0, 0 },
                             out, 0);
    OpArg in[2] = { c->in[1 - kn], c->in[kn] };
    in[1].x = (double)k;   /* an integer in range: the kernels compare it exactly */
    OpCall kc = *c;
    kc.op = plan == CMP_LE_K ? OP_LE : plan == CMP_GT_K ? OP_GT : op;
    kc.in = in;
    return gpu_run_ew(&kc, out);
}

/* Element strides of t broadcast to out's shape (0 on stretched axes). */
void gpu_broadcast_strides(const Tensor *t, const Tensor *out, int64_t *stride) {
    int64_t s = 1;
    for (int d = out->ndim - 1, e = t->ndim - 1; d >= 0; d--, e--) {
        int64_t len = e >= 0 ? t->shape[e] : 1;
        stride[d] = len == out->shape[d] && len != 1 ? s : 0;
        s *= len;
    }
}

/* One elementwise launch: op over operands already in ct, each a tensor x[k] (broadcast to
 * out's shape) or, where x[k] is NULL, the number num[k]. */
int gpu_ew_launch(OpCode op, DType ct, int nin, Tensor *const *x, const double *num, Tensor *out, int64_t decimals) {
    CudaEw j;
    memset(&j, 0, sizeof j);
    j.op = op;
    j.ct = ct;
    j.out_dt = out->dtype;
    j.nin = nin;
    j.n = out->size;
    j.out = out->data;
    j.p = cpu_power_of_ten(decimals < 0 ? 0 - (uint64_t)decimals : (uint64_t)decimals);
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
        if (x[k]) gpu_broadcast_strides(x[k], out, j.stride[k]);
    char err[400];
    return GPU_CALL(ew, &j);
}

/* Operand k of c in dtype dt: a NEW GPU tensor (NULL for a number, whose value goes to
 * num[k]). *ok is false when a conversion failed. */
Tensor *gpu_operand(const OpCall *c, int k, DType dt, double *num, bool *ok) {
    num[k] = c->in[k].x;
    if (c->in[k].kind != ARG_TENSOR) return NULL;
    Tensor *t = gpu_as_dtype(c->in[k].t, dt);
    *ok &= t != NULL;
    return t;
}

int gpu_run_ew(const OpCall *c, Tensor *out) {
    DType ct, rt;
    if (exact_compare(c)) return run_exact_compare(c, out);
    if (ew_types(c, &ct, &rt)) return -1;
    Tensor *x[2] = { NULL, NULL };
    double num[2] = { 0, 0 };
    bool ok = true;
    for (int k = 0; k < c->nin && ok; k++) x[k] = gpu_operand(c, k, ct, num, &ok);
    int rc = ok ? gpu_ew_launch(c->op, ct, c->nin, x, num, out, c->op == OP_ROUND ? c->at->i[0] : 0) : -1;
    tensor_release(x[0]);
    tensor_release(x[1]);
    return rc;
}

/* clip as the CPU computes it: t broadcast into out, then maximum with lo and minimum with
 * hi, in place (nil bounds are open). */
int gpu_run_clip(const OpCall *c, Tensor *out) {
    DType dt = out->dtype;
    double num[3] = { 0, 0, 0 };
    bool ok = true;
    Tensor *t = gpu_operand(c, 0, dt, num, &ok);
    if (!ok) return -1;
    int rc;
    if (!t) {   /* a number: every element is it (the maximum of it and itself) */
        rc = gpu_ew_launch(OP_MAXIMUM, dt, 2, (Tensor *[]){ NULL, NULL }, (double[]){ num[0], num[0] }, out, 0);
    } else if (t->size == out->size) {
        char err[400];
        rc = GPU_CALL(copy, out->data, t->data, gpu_nbytes(t));
    } else {
        int64_t stride[TSL_MAX_RANK];
        gpu_broadcast_strides(t, out, stride);
        char err[400];
        rc = GPU_CALL(gather_strided, (int)dtype_size(dt), out->ndim, out->shape, stride, t->data, out->data, out->size);
    }
    tensor_release(t);
    for (int k = 1; k < 3 && k < c->nin && rc == 0; k++) {
        if (c->in[k].kind == ARG_NONE) continue;
        Tensor *b = gpu_operand(c, k, dt, num, &ok);
        rc = ok ? gpu_ew_launch(k == 1 ? OP_MAXIMUM : OP_MINIMUM, dt, 2, (Tensor *[]){ out, b }, (double[]){ 0, num[k] },
                            out, 0)
                : -1;
        tensor_release(b);
    }
    return rc;
}

/* A number operand of where as a one-element GPU tensor of dtype dt. */
Tensor *gpu_number_tensor(DType dt, double x) {
    Tensor *h = tensor_scalar(dt, x), *t = h ? gpu_from_host(h) : NULL;
    tensor_release(h);
    return t;
}

/* where(cond, a, b): cond as bool, a and b in the result's dtype, each broadcast by strides. */
int gpu_run_where(const OpCall *c, Tensor *out) {
    Tensor *x[3] = { NULL, NULL, NULL };
    int rc = -1;
    for (int k = 0; k < 3; k++) {
        DType dt = k ? out->dtype : DT_BOOL;
        x[k] = c->in[k].kind == ARG_TENSOR ? gpu_as_dtype(c->in[k].t, dt) : gpu_number_tensor(dt, c->in[k].x);
        if (!x[k]) goto done;
    }
    int64_t stride[3][TSL_MAX_RANK];
    for (int k = 0; k < 3; k++) gpu_broadcast_strides(x[k], out, stride[k]);
    char err[400];
    rc = GPU_CALL(where, (int)dtype_size(out->dtype), out->ndim, out->shape, (const int64_t(*)[TSL_CUDA_MAX_RANK])stride,
              x[0]->data, x[1]->data, x[2]->data, out->data, out->size);
done:
    for (int k = 0; k < 3; k++) tensor_release(x[k]);
    return rc;
}
