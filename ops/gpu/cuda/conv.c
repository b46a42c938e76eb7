/* conv.c - the plugin's convolution and pooling kernels: launches of the module in
 * gen_conv.c. The host side (the products through cuBLAS, the geometry) is ops/gpu/gpu_conv.c. */
#include <stdio.h>
#include "cuda_impl.h"
#include "gen_conv.h"

int cuda_conv(const CudaConv *j, char *err, size_t n) {
    static const char *const kinds[] = { "im2col", "col2im", "bias", "pool", "pool_back" };
    if (j->kind < CUDA_IM2COL || j->kind > CUDA_POOL_BACK || (j->dt != DT_F32 && j->dt != DT_F64))
        return snprintf(err, n, "conv: no such kernel"), -1;
    if (j->total == 0) return 0;
    GenConvArgs a = { .total = j->total, .n = j->n, .c = j->c, .h = j->h, .w = j->w, .oh = j->oh, .ow = j->ow,
                      .kh = j->kh, .kw = j->kw, .sh = j->sh, .sw = j->sw, .dh = j->dh, .dw = j->dw, .pt = j->pt,
                      .pb = j->pb, .pl = j->pl, .pr = j->pr, .max = j->max, .adaptive = j->adaptive,
                      .x = j->x, .gy = j->gy, .y = j->y };
    char name[32];
    snprintf(name, sizeof name, "tsl_%s_%s", kinds[j->kind], j->dt == DT_F32 ? "f32" : "f64");
    CUfunction f = cuda_kernel(gen_conv_source(), name, err, n);
    if (!f) return -1;
    void *params[] = { &a };
    return cuda_launch(f, a.total, params, err, n);
}
