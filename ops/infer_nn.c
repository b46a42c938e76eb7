/* infer_nn.c - shapes and dtypes of the neural-network ops of issue 28 (ops.def's last
 * block): activations with number parameters, normalizations, losses, gather and scatter.
 *
 * As in infer.c, each reads operand dtypes and shapes only and raises every error that does
 * not depend on the data (labels and indices out of range are the kernels', ops/cpu/nn.c). */
#include "opcall.h"

/* softplus: x's shape; float (i64 and bool compute in f32), as the elementwise DR_FLOAT ops */
int infer_act(const OpCall *c, Shape *out, DType *dt) {
    op_arg_shape(&c->in[0], &out[0]);
    *dt = dtype_is_float((DType)c->in[0].dtype) ? (DType)c->in[0].dtype : DT_F32;
    return 0;
}
