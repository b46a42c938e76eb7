/* gpu_attention.c - scaled_dot_product_attention on the GPU: composed from the device's
 * matmul, where and softmax kernels (ops/attention.c attn_composed, the form the backward
 * rule uses), so it makes the L x S scores, unlike the CPU's blocked kernel. */
#include "gpu_impl.h"
#include "attention.h"

int gpu_run_attention(const OpCall *c, Tensor *out) {
    GradBuilder b;
    gb_init(&b);
    GVal in[4] = { gb_none(), gb_none(), gb_none(), gb_none() };
    for (int k = 0; k < c->nin && k < 4; k++) {
        if (c->in[k].kind != ARG_TENSOR) continue;
        const Tensor *t = c->in[k].t;
        Tensor *x = k < 3 || t->dtype != DT_BOOL ? gpu_as_dtype(t, out->dtype) : tensor_retain((Tensor *)t);
        if (!x) {
            gb_free(&b);
            return -1;
        }
        in[k] = gb_tensor(&b, x);
        tensor_release(x);
    }
    GVal r = attn_composed(&b, in[0], in[1], in[2], in[3], c->at->flag);
    char err[400];
    int rc = gb_ok(r) ? GPU_CALL(copy, out->data, r.t->data, gpu_nbytes(out)) : -1;
    gb_free(&b);
    return rc;
}
