/* gen_sort.h - CUDA source of the ordering and padding kernels (sort, argsort, topk,
 * unique, pad): one module of hand-written kernels, compiled by ops/gpu/cuda/nvrtc.c with the
 * prelude of gen.h, and by tests/gpu/ptx_check.c on a machine without a GPU.
 *
 * Ordering follows ops/cpu/axis.c exactly: each element maps to the CPU's unsigned 64-bit
 * key (NaN above +inf, -0 tied with +0, i64 and bool exact; descending complements it), and
 * lines are sorted on (key, position). That pair order is total, so the bitonic network the
 * GPU uses gives the one result the CPU's stable merge sort gives: ties in input order.
 *
 * Pure C with no CUDA dependency. */
#ifndef TSL_CUDA_GEN_SORT_H
#define TSL_CUDA_GEN_SORT_H

/* pad: out (oshape) is value except where every index lies in [before, before + ishape):
 * there it is in[index - before] (elements of the kernel's size, value its bits) */
#define GEN_PAD_ARGS_FIELDS \
    long long n; int ndim; long long oshape[32]; long long ishape[32]; long long before[32]; \
    unsigned long long value; const void *in; void *out;

typedef struct { GEN_PAD_ARGS_FIELDS } GenPadArgs;

/* The module: tsl_sort_keys_{b8,i64,f32,f64}, tsl_sort_step, tsl_sort_tile, tsl_sort_write_{1,4,8},
 * tsl_unique_flags, tsl_unique_scan, tsl_unique_write_{1,4,8}, tsl_pad_{1,4,8}. */
const char *gen_sort_source(void);

#endif
