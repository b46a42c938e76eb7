/* gpu_impl.h - what the GPU device's files share (ops/gpu/), inside the library: the
 * started plugin, GPU tensors' memory, and each op family's supports / run functions that
 * gpu.c's registry entry dispatches to.
 *
 * Ownership as in tensor.h: functions returning Tensor* return a NEW reference; arguments
 * are BORROWED. Errors: -1 / NULL with the message in op_error(). */
#ifndef TSL_GPU_IMPL_H
#define TSL_GPU_IMPL_H
#include <stdbool.h>
#include <stdint.h>
#include "gpu.h"
#include "cuda/plugin.h"

/* The started plugin (device_start(DEV_GPU)), NULL before. */
extern const TslCudaPlugin *gpu_cu;

/* A plugin call's result: 0, or -1 with its message err as the op error. */
int gpu_result(int rc, const char *err);
/* Calls plugin entry fn with a message buffer named err that the caller declares. */
#define GPU_CALL(fn, ...) (gpu_result(gpu_cu->fn(__VA_ARGS__, err, sizeof err), err))

/* ---------- memory (gpu.c) ---------- */
Tensor *gpu_alloc(DType dt, const Shape *s);        /* uninitialised, from the caching allocator */
Tensor *gpu_from_host(const Tensor *h);             /* a GPU copy of CPU tensor h */
Tensor *gpu_clone(const Tensor *a);                 /* a GPU copy of GPU tensor a */
Tensor *gpu_as_dtype(const Tensor *a, DType dt);    /* a itself (retained) or a converted copy */
size_t gpu_nbytes(const Tensor *t);
int64_t gpu_device_mallocs(void);   /* cudaMalloc calls so far (the caching allocator's count) */

/* ---------- building blocks ---------- */
/* out[i] = t[sum of index_d * stride[d]] over out's shape (gpu_shape.c) */
int gpu_gather(const Tensor *t, const int64_t *stride, Tensor *out);
/* t's axes permuted (out's axis d is t's axis perm[d]): into out, or a new tensor (gpu_axis.c) */
int gpu_permute_into(const Tensor *t, const int *perm, Tensor *out);
Tensor *gpu_permuted(const Tensor *t, const int *perm);
/* element strides of t broadcast to out's shape, 0 on stretched axes (gpu_ew.c) */
void gpu_broadcast_strides(const Tensor *t, const Tensor *out, int64_t *stride);
/* one elementwise launch over operands already in ct: x[k], or the number num[k] where x[k]
 * is NULL (gpu_ew.c) */
int gpu_ew_launch(OpCode op, DType ct, int nin, Tensor *const *x, const double *num, Tensor *out, int64_t decimals);
/* operand k of c in dtype dt on the GPU (NULL for a number, its value in num[k]); *ok
 * false when a conversion failed */
Tensor *gpu_operand(const OpCall *c, int k, DType dt, double *num, bool *ok);
/* a one-element GPU tensor holding x */
Tensor *gpu_number_tensor(DType dt, double x);

/* ---------- the op families: whether the GPU runs the call, and running it ---------- */
bool gpu_ew_supported(const OpCall *c);
int gpu_run_ew(const OpCall *c, Tensor *out);
int gpu_run_clip(const OpCall *c, Tensor *out);
int gpu_run_where(const OpCall *c, Tensor *out);
int gpu_run_attention(const OpCall *c, Tensor *out);   /* gpu_attention.c */
bool gpu_reduce_op(OpCode op);
int gpu_run_reduce(const OpCall *c, Tensor *out);
bool gpu_softmax_supported(const OpCall *c);
int gpu_run_softmax(const OpCall *c, Tensor *out);
int gpu_run_cum(const OpCall *c, Tensor *out);
int gpu_run_trace(const OpCall *c, Tensor *out);
int gpu_run_diff(const OpCall *c, Tensor *out);
int gpu_run_take(const OpCall *c, Tensor *out);
int gpu_run_scatter_add(const OpCall *c, Tensor *out);
int gpu_run_outer(const OpCall *c, Tensor *out);
bool gpu_matmul_supported(const OpCall *c);
int gpu_run_matmul(const OpCall *c, Tensor *out);
int gpu_run_view(const OpCall *c, Tensor **out);
int gpu_run_transpose(const OpCall *c, Tensor *out);
int gpu_run_broadcast(const OpCall *c, Tensor *out);
int gpu_run_astype(const OpCall *c, Tensor *out);
int gpu_run_join(const OpCall *c, Tensor *out);
int gpu_run_equal(const OpCall *c, Tensor *out);
int gpu_run_random(const OpCall *c, Tensor *out);
int gpu_run_tile(const OpCall *c, Tensor *out);
int gpu_run_repeat(const OpCall *c, Tensor *out);
int gpu_run_one_hot(const OpCall *c, Tensor *out);
int gpu_run_full(const OpCall *c, Tensor *out);   /* full with a GPU tensor value (gpu_shape.c) */
/* sort, argsort, topk, unique (allocates out[0]: F_DYNAMIC) and pad (gpu_sort.c) */
int gpu_run_sort(const OpCall *c, Tensor **out);
int gpu_run_unique(const OpCall *c, Tensor **out);
int gpu_run_pad(const OpCall *c, Tensor *out);
/* solve, inv, det, cholesky, qr, svd, eigh through cuSOLVER (gpu_linalg.c) */
bool gpu_linalg_op(OpCode op);
int gpu_run_linalg(const OpCall *c, Tensor **out);
/* the convolutions and their gradients' rows, the pools forward and backward (gpu_conv.c) */
int gpu_run_conv(const OpCall *c, Tensor *out);
int gpu_run_pool(const OpCall *c, Tensor *out);
/* softplus, the normalizations, cross_entropy, gather / scatter along an axis, masked_fill (gpu_nn.c) */
int gpu_run_softplus(const OpCall *c, Tensor *out);
int gpu_run_norm(const OpCall *c, Tensor *out);
int gpu_run_xent(const OpCall *c, Tensor *out);
int gpu_run_gather_axis(const OpCall *c, Tensor *out);
int gpu_run_masked_fill(const OpCall *c, Tensor *out);
/* allreduce, broadcast, allgather over NCCL (gpu_dist.c) */
int gpu_run_dist(const OpCall *c, Tensor *out);

#endif
