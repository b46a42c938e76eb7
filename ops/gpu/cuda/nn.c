/* nn.c - the plugin's neural-network kernels: launches of the module in gen_nn.c. The host
 * side (the plans, the checks read back) is ops/gpu/gpu_nn.c. */
#include <stdio.h>
#include "cuda_impl.h"
#include "gen_nn.h"

static const char *nn_suffix(int kind, int dt) {
    if (kind == CUDA_GATHER_AXIS || kind == CUDA_MASKED_FILL) return dt == DT_BOOL ? "1" : dt == DT_F32 ? "4" : "8";
    return dt == DT_BOOL ? "b8" : dt == DT_I64 ? "i64" : dt == DT_F32 ? "f32" : "f64";
}

int cuda_nn(const CudaNn *j, char *err, size_t n) {
    static const char *const kinds[] = { "softplus", "norm_stats", "norm_apply", "xent_rows", "xent_sum",
                                         "gather_axis", "idx_check", "scatter_axis", "masked_fill" };
    if (j->kind < CUDA_SOFTPLUS || j->kind > CUDA_MASKED_FILL) return snprintf(err, n, "nn: no such kernel"), -1;
    bool one = j->kind == CUDA_XENT_SUM || j->kind == CUDA_IDX_CHECK || j->kind == CUDA_SCATTER_AXIS;
    int64_t count = one ? 1 : j->kind == CUDA_XENT_ROWS ? j->a.n : j->a.total;
    if (count == 0) return 0;
    char name[40];
    if (j->kind == CUDA_IDX_CHECK) snprintf(name, sizeof name, "tsl_idx_check");
    else snprintf(name, sizeof name, "tsl_%s_%s", kinds[j->kind], nn_suffix(j->kind, j->dt));
    CUfunction f = cuda_kernel(gen_nn_source(), name, err, n);
    if (!f) return -1;
    GenNnArgs a = j->a;
    void *params[] = { &a };
    return cuda_launch(f, count, params, err, n);
}
