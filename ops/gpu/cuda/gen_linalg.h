/* gen_linalg.h - CUDA source of the GPU's own linear-algebra kernels: integer matmul (i64,
 * wrapping, as ops/cpu/linalg.c's triple loop; exact, so any summation order gives the
 * CPU's bits) over a broadcast batch, and the small kernels around cuSOLVER (det from the
 * LU factors, identity matrices, cholesky's zeroed upper triangle, qr's r). Compiled by ops/gpu/cuda/nvrtc.c with gen.h's prelude and
 * by tests/gpu/ptx_check.c. Pure C with no CUDA dependency. */
#ifndef TSL_CUDA_GEN_LINALG_H
#define TSL_CUDA_GEN_LINALG_H

/* c[batch, m, n] = op(a) @ b over the broadcast batch (nbd axes of bshape; a's and b's
 * offsets per batch axis in elements, 0 where that operand is broadcast); ta: a's matrices
 * are stored [k, m] */
#define GEN_IMATMUL_ARGS_FIELDS \
    long long total; long long m; long long n; long long k; int ta; int nbd; long long bshape[32]; \
    long long astr[32]; long long bstr[32]; const void *a; const void *b; void *c;

typedef struct { GEN_IMATMUL_ARGS_FIELDS } GenImatmulArgs;

/* The module: tsl_imatmul, and the small kernels around cuSOLVER (ops/gpu/cuda/solver.c):
 * tsl_{det,eye,tril,qr_r}_{f32,f64}. */
const char *gen_linalg_source(void);

#endif
