/* linalg.c - the plugin's linear algebra beyond cuBLAS's float gemm (cuda_kernels.c):
 * integer matmul, a kernel of gen_linalg.c. The host side is ops/gpu/gpu_matmul.c. */
#include <stdio.h>
#include <string.h>
#include "cuda_impl.h"
#include "gen_linalg.h"

int cuda_imatmul(const CudaImatmul *j, char *err, size_t n) {
    if (j->nbd < 0 || j->nbd > TSL_CUDA_MAX_RANK) return snprintf(err, n, "matmul: too many batch axes"), -1;
    GenImatmulArgs a = { .total = j->m * j->n, .m = j->m, .n = j->n, .k = j->k, .ta = j->trans_a, .nbd = j->nbd,
                         .a = j->a, .b = j->b, .c = j->c };
    AXES(a.bshape, j->bshape, j->nbd);
    AXES(a.astr, j->a_stride, j->nbd);
    AXES(a.bstr, j->b_stride, j->nbd);
    for (int d = 0; d < j->nbd; d++) a.total *= j->bshape[d];
    if (a.total == 0) return 0;
    CUfunction f = cuda_kernel(gen_linalg_source(), "tsl_imatmul", err, n);
    if (!f) return -1;
    void *params[] = { &a };
    return cuda_launch(f, a.total, params, err, n);
}
