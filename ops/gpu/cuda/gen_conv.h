/* gen_conv.h - CUDA source of the convolution and pooling kernels: im2col and col2im (the
 * columns a convolution multiplies, ops/cpu/conv.c's layout), a bias added per channel, and
 * the pools forward and backward. One module of hand-written kernels, compiled by
 * ops/gpu/cuda/nvrtc.c with the prelude of gen.h and by tests/gpu/ptx_check.c.
 *
 * The geometry is ops/conv.h's ConvGeom. Every kernel is a gather (one thread per element
 * it writes, no atomics) whose per-element order is the CPU's: col2im sums an image pixel's
 * taps in (ki, kj) order, a pool's backward sums the windows holding a pixel in (oy, ox)
 * order, as the CPU's scatters add them. So given the same columns the bits are the CPU's.
 *
 * Pure C with no CUDA dependency. */
#ifndef TSL_CUDA_GEN_CONV_H
#define TSL_CUDA_GEN_CONV_H

/* total: the elements the kernel writes. x: the image [n, c, h, w] (im2col, pools) or the
 * columns [n, c * kh * kw, oh * ow] (col2im); gy: a pool's result gradient [n, c, oh, ow];
 * y: what it writes. max, adaptive: the pool's kind. */
#define GEN_CONV_ARGS_FIELDS \
    long long total; long long n; long long c; long long h; long long w; long long oh; long long ow; \
    long long kh; long long kw; long long sh; long long sw; long long dh; long long dw; \
    long long pt; long long pb; long long pl; long long pr; int max; int adaptive; \
    const void *x; const void *gy; void *y;

typedef struct { GEN_CONV_ARGS_FIELDS } GenConvArgs;

/* The module: tsl_im2col_{f32,f64}, tsl_col2im_{f32,f64}, tsl_bias_{f32,f64} (y [m, ch, len]
 * += b [ch]: x is b, c is ch, h is len), tsl_pool_{f32,f64}, tsl_pool_back_{f32,f64}. */
const char *gen_conv_source(void);

#endif
