/* linalg.c - the plugin's linear algebra beyond cuBLAS's float gemm (cuda_kernels.c):
 * integer matmul, a kernel of gen_linalg.c. The host side is ops/gpu/gpu_matmul.c. */
#include <stdio.h>
#include <string.h>
#include "cuda_impl.h"
#include "gen_linalg.h"

int cuda_imatmul(const CudaImatmul *j, char *err, size_t n) {
    if (j->nbd < 0 || j->nbd > TSL_CUDA_MAX_RANK) return snprintf(err, n, "matmul: too many batch axes"), -1;
    GenImatmulArgs a;
    memset(&a, 0, sizeof a);
    a.m = j->m;
    a.n = j->n;
    a.k = j->k;
    a.ta = j->trans_a;
    a.nbd = j->nbd;
    a.total = j->m * j->n;
    for (int d = 0; d < j->nbd; d++) {
        a.bshape[d] = j->bshape[d];
        a.astr[d] = j->a_stride[d];
        a.bstr[d] = j->b_stride[d];
        a.total *= j->bshape[d];
    }
    a.a = j->a;
    a.b = j->b;
    a.c = j->c;
    if (a.total == 0) return 0;
    CUfunction f = cuda_kernel(gen_linalg_source(), "tsl_imatmul", err, n);
    if (!f) return -1;
    void *params[] = { &a };
    return cuda_launch(f, a.total, params, err, n);
}
