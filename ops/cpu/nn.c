/* nn.c - CPU kernels of the neural-network ops of issue 28 (ops.def's last block) that are
 * not elementwise rows: each a plain loop in the result's dtype, one element's value a
 * function of its inputs alone, so eager and static code give the same bits. */
#include <math.h>
#include "cpu.h"

/* PyTorch's softplus: x where beta x > threshold, else log1p(exp(beta x)) / beta, in T */
#define SOFTPLUS(T, EXP, LOG1P)                                                  \
    static void softplus_##T(const T *x, T *y, int64_t n, T beta, T threshold) { \
        for (int64_t i = 0; i < n; i++) {                                        \
            T bx = x[i] * beta;                                                  \
            y[i] = bx > threshold ? x[i] : LOG1P(EXP(bx)) / beta;                \
        }                                                                        \
    }
SOFTPLUS(float, expf, log1pf)
SOFTPLUS(double, exp, log1p)

int cpu_act(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    Tensor *tmp;
    ScalarBox box;
    const Tensor *x = operand_as(&c->in[0], dt, &tmp, &box);
    if (!x) return -1;
    if (dt == DT_F32) softplus_float(x->data, out[0]->data, x->size, (float)c->at->f[0], (float)c->at->f[1]);
    else softplus_double(x->data, out[0]->data, x->size, c->at->f[0], c->at->f[1]);
    tensor_release(tmp);
    return 0;
}
