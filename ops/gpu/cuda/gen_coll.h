/* gen_coll.h - CUDA C source for the collectives' one kernel: the ordered combine that
 * turns every rank's gathered slice into allreduce's result on the GPU (ops/gpu/cuda/nccl.c).
 *
 * NCCL's own reductions add in an order that depends on the topology and the algorithm it
 * picks, so TSL never uses them for allreduce: the slices are gathered (ncclAllGather) and
 * this kernel combines them in rank order with the CPU's very expressions
 * (ops/cpu/collective.c), so a GPU job and a CPU job over the same ranks give the same bits.
 * Pure C (no CUDA): tests/gpu/ptx_check.c compiles every kernel it can produce. */
#ifndef TSL_CUDA_GEN_COLL_H
#define TSL_CUDA_GEN_COLL_H
#include <stddef.h>
#include "opcall.h"

/* Whether allreduce with redop on dt has a kernel (sum, max, min: i64, f32, f64; mean:
 * f32, f64 - the dtypes infer_dist accepts). */
int gen_rank_combine_has(RedOp r, DType dt);
/* The kernel's name in name[] and its source (after gen_prelude()) in src[]:
 * extern "C" void NAME(const T *parts, T *out, long long count, int size). -1 when the
 * buffers are too small or there is no such kernel. */
int gen_rank_combine_kernel(RedOp r, DType dt, char *name, size_t nn, char *src, size_t ns);

#endif
