/* gen_nn.h - CUDA source of the neural-network kernels of issue 28 that are not elementwise
 * rows (ops/cpu/nn.c): softplus, the normalizations (layer, rms, group, batch), cross_entropy,
 * gather and scatter along an axis. One module of hand-written kernels, compiled by
 * ops/gpu/cuda/nvrtc.c with the prelude of gen.h and by tests/gpu/ptx_check.c.
 *
 * Each follows the CPU's loop for one result element (or one group's statistics, or one row
 * of a loss) in the CPU's order and precision (statistics in f64, two passes), so the
 * normalizations give the CPU's bits; softplus and cross_entropy differ by the device's
 * exp and log. Order-dependent work runs on one thread (cross_entropy's mean over the rows,
 * scatter, whose repeated positions keep the CPU's last write or sum), and an index or label
 * out of range is found in the CPU's order and reported through *bad.
 *
 * Pure C with no CUDA dependency. */
#ifndef TSL_CUDA_GEN_NN_H
#define TSL_CUDA_GEN_NN_H

/* total: the elements (rows, groups) the kernel covers. Normalizations: groups of k elements
 * (rows mode), or channels of x [n, c, s] (channels != 0: n * s elements each); group_norm's
 * affine index from groups, c, s; stats: [mean, 1 / sqrt(var + eps)] per group in f64.
 * cross_entropy: x [n, k], idx the labels, stats the rows' losses. gather/scatter: x's, idx's
 * and src's row-major strides xs, is, ss over ndim axes, axis, extent (x's size along it);
 * src_scalar: src is one element. bad: the first failing row or index element, or -1.
 * masked_fill: x's shape xs, the mask's strides ss over it (0 where broadcast), the value
 * src[0] or, src NULL, the bits of value. */
#define GEN_NN_ARGS_FIELDS \
    long long total; long long rows; long long k; long long n; long long c; long long s; long long groups; \
    int center; int channels; int ndim; int axis; int add; int src_scalar; long long extent; \
    double eps; double beta; double threshold; long long xs[32]; long long is[32]; long long ss[32]; \
    const void *x; const void *w; const void *b; const void *rm; const void *rv; const long long *idx; \
    const void *src; void *y; double *stats; long long *bad; const unsigned char *mask; unsigned long long value;

typedef struct { GEN_NN_ARGS_FIELDS } GenNnArgs;

/* The module: tsl_softplus_{f32,f64}, tsl_norm_stats_{f32,f64}, tsl_norm_apply_{f32,f64},
 * tsl_xent_rows_{f32,f64}, tsl_xent_sum_{f32,f64}, tsl_gather_axis_{1,4,8}, tsl_idx_check,
 * tsl_scatter_axis_{b8,i64,f32,f64}, tsl_masked_fill_{1,4,8}. */
const char *gen_nn_source(void);

#endif
