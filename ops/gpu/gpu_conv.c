/* gpu_conv.c - the convolutions and pools on the GPU, as the CPU computes them
 * (ops/cpu/conv.c): im2col into columns [n, groups, K, L] (K = c / groups * kh * kw taps,
 * L = oh * ow positions), then the product with the weight's [groups, o / groups, K]
 * blocks through the device's matmul (cuBLAS, batched over images and groups); the
 * transposed convolution multiplies by the blocks' transposes and sums the columns back
 * (col2im); the weight's gradient is one product per group over the whole batch. The
 * column and pool kernels are ops/gpu/cuda/gen_conv.c's, gathers in the CPU's order, so
 * the pools give the CPU's bits and the convolutions differ only by cuBLAS's sums. */
#include "gpu_impl.h"
#include "conv.h"
#include "grad.h"

static Shape dims(int nd, const int64_t *d) {
    Shape s = { .ndim = nd };
    for (int k = 0; k < nd; k++) s.d[k] = d[k];
    return s;
}

/* One conv module kernel over geometry g: x in, y out (gy: a pool's result gradient). */
static int conv_kernel(int kind, const ConvGeom *g, DType dt, const void *x, const void *gy, void *y, int64_t total,
                       bool max, bool adaptive) {
    CudaConv j = { .kind = kind, .dt = dt, .max = max, .adaptive = adaptive, .total = total, .n = g->n, .c = g->c,
                   .h = g->h, .w = g->w, .oh = g->oh, .ow = g->ow, .kh = g->kh, .kw = g->kw, .sh = g->sh,
                   .sw = g->sw, .dh = g->dh, .dw = g->dw, .pt = g->pt, .pb = g->pb, .pl = g->pl, .pr = g->pr,
                   .x = x, .gy = gy, .y = y };
    char err[400];
    return GPU_CALL(conv, &j);
}

/* y [m, ch, len] += b [ch] */
static int add_bias(const Tensor *b, Tensor *y, int64_t ch, int64_t len) {
    ConvGeom g = { .c = ch, .h = len };
    return conv_kernel(CUDA_BIAS, &g, y->dtype, b->data, NULL, y->data, y->size, false, false);
}

/* x's columns [n, groups, K, L] (geometry g, c the image's channels) */
static Tensor *columns(const ConvGeom *g, const Tensor *x) {
    int64_t K = g->c / g->groups * g->kh * g->kw, L = g->oh * g->ow;
    Shape s = dims(4, (int64_t[]){ g->n, g->groups, K, L });
    Tensor *cols = gpu_alloc(x->dtype, &s);
    if (cols && conv_kernel(CUDA_IM2COL, g, x->dtype, x->data, NULL, cols->data, shape_count(&s), false, false)) {
        tensor_release(cols);
        cols = NULL;
    }
    return cols;
}

/* a @ b (the device's matmul, batches broadcast), a [.., m, k] with its last two axes
 * swapped first when ta; reshaped to nd axes rs; NULL on an error */
static Tensor *product(Tensor *a, bool ta, Tensor *b, int nd, const int64_t *rs) {
    GradBuilder gbld;
    gb_init(&gbld);
    GVal av = gb_tensor(&gbld, a), in[2] = { ta ? gb_swap_last(&gbld, av) : av, gb_tensor(&gbld, b) };
    GVal r = gb_op(&gbld, OP_MATMUL, in, 2, NULL);
    Shape s = dims(nd, rs);
    Tensor *t = gb_ok(r) ? gb_keep(r) : NULL;
    gb_free(&gbld);
    Tensor *v = t ? tensor_view(t, &s) : NULL;
    tensor_release(t);
    return v;
}

/* t's elements into out (the same count) */
static int copy_out(const Tensor *t, Tensor *out) {
    char err[400];
    return GPU_CALL(copy, out->data, t->data, gpu_nbytes(out));
}

/* y [n, o, oh, ow] = w's blocks [groups, og, K] @ x's columns [n, groups, K, L] (+ b) */
static int conv_forward(const ConvGeom *g, Tensor *x, Tensor *w, const Tensor *b, Tensor *out) {
    int64_t G = g->groups, og = g->o / G, K = g->c / G * g->kh * g->kw, L = g->oh * g->ow;
    bool direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && !g->pt && !g->pb && !g->pl && !g->pr;
    Shape cs = dims(4, (int64_t[]){ g->n, G, K, L }), ws = dims(3, (int64_t[]){ G, og, K });
    Tensor *cols = direct ? tensor_view(x, &cs) : columns(g, x), *wv = cols ? tensor_view(w, &ws) : NULL;
    Tensor *y = wv ? product(wv, false, cols, 4, (int64_t[]){ g->n, G, og, L }) : NULL;
    int rc = y ? copy_out(y, out) : -1;
    tensor_release(cols);
    tensor_release(wv);
    tensor_release(y);
    return rc || !b ? rc : add_bias(b, out, g->o, L);
}

/* y [n, c, h, w] = col2im(w's blocks transposed [groups, K, og] @ x [n, groups, og, L]) (+ b) */
static int conv_transpose(const ConvGeom *g, Tensor *x, Tensor *w, const Tensor *b, Tensor *out) {
    int64_t G = g->groups, og = g->o / G, K = g->c / G * g->kh * g->kw, L = g->oh * g->ow;
    Shape xs = dims(4, (int64_t[]){ g->n, G, og, L }), ws = dims(3, (int64_t[]){ G, og, K });
    Tensor *xv = tensor_view(x, &xs), *wv = xv ? tensor_view(w, &ws) : NULL;
    Tensor *cols = wv ? product(wv, true, xv, 4, (int64_t[]){ g->n, G, K, L }) : NULL;
    int rc = cols ? conv_kernel(CUDA_COL2IM, g, out->dtype, cols->data, NULL, out->data, out->size, false, false) : -1;
    tensor_release(xv);
    tensor_release(wv);
    tensor_release(cols);
    return rc || !b ? rc : add_bias(b, out, g->c, g->h * g->w);
}

/* dw [groups, og, K] = gy [groups, og, n * L] @ x's columns [groups, n * L, K] */
static int conv_weight_grad(const ConvGeom *g, Tensor *x, Tensor *gy, Tensor *out) {
    int64_t G = g->groups, og = g->o / G, K = g->c / G * g->kh * g->kw, L = g->oh * g->ow;
    Shape gs = dims(4, (int64_t[]){ g->n, G, og, L }), gs3 = dims(3, (int64_t[]){ G, og, g->n * L });
    Shape cs3 = dims(3, (int64_t[]){ G, g->n * L, K });
    Tensor *cols = columns(g, x), *gyv = cols ? tensor_view(gy, &gs) : NULL;
    Tensor *gyp = gyv ? gpu_permuted(gyv, (int[]){ 1, 2, 0, 3 }) : NULL;
    Tensor *colp = gyp ? gpu_permuted(cols, (int[]){ 1, 0, 3, 2 }) : NULL;
    Tensor *a = colp ? tensor_view(gyp, &gs3) : NULL, *bm = a ? tensor_view(colp, &cs3) : NULL;
    Tensor *dw = bm ? product(a, false, bm, 3, (int64_t[]){ G, og, K }) : NULL;
    int rc = dw ? copy_out(dw, out) : -1;
    Tensor *all[] = { cols, gyv, gyp, colp, a, bm, dw };
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) tensor_release(all[k]);
    return rc;
}

int gpu_run_conv(const OpCall *c, Tensor *out) {
    ConvGeom g;
    if (conv_geom(c, &g)) return -1;
    if (out->size == 0) return 0;
    Tensor *x = gpu_as_dtype(c->in[0].t, out->dtype), *w = x ? gpu_as_dtype(c->in[1].t, out->dtype) : NULL;
    Tensor *b = w && c->nin > 2 && c->in[2].kind == ARG_TENSOR ? gpu_as_dtype(c->in[2].t, out->dtype) : NULL;
    bool b_ok = !(w && c->nin > 2 && c->in[2].kind == ARG_TENSOR) || b;
    int rc = -1;
    if (w && b_ok) {
        if (c->op == OP_CONV2D_WEIGHT_GRAD) rc = conv_weight_grad(&g, x, w, out);
        else if (c->op == OP_CONV_TRANSPOSE2D) rc = conv_transpose(&g, x, w, b, out);
        else rc = conv_forward(&g, x, w, b, out);
    }
    tensor_release(x);
    tensor_release(w);
    tensor_release(b);
    return rc;
}

int gpu_run_pool(const OpCall *c, Tensor *out) {
    ConvGeom g;
    if (conv_geom(c, &g)) return -1;
    if (out->size == 0) return 0;
    bool max = c->op == OP_MAX_POOL2D || c->op == OP_MAX_POOL2D_BACKWARD;
    bool adaptive = c->op == OP_ADAPTIVE_AVG_POOL2D || c->op == OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    bool back = c->op == OP_MAX_POOL2D_BACKWARD || c->op == OP_AVG_POOL2D_BACKWARD ||
                c->op == OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    Tensor *x = gpu_as_dtype(c->in[0].t, out->dtype), *gy = x && back ? gpu_as_dtype(c->in[1].t, out->dtype) : NULL;
    int rc = !x || (back && !gy) ? -1
           : conv_kernel(back ? CUDA_POOL_BACK : CUDA_POOL, &g, out->dtype, x->data, gy ? gy->data : NULL, out->data,
                         out->size, max, adaptive);
    tensor_release(x);
    tensor_release(gy);
    return rc;
}
