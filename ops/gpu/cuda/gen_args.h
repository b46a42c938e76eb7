/* gen_args.h - the launch arguments of generated kernels, written once: the host (C) and
 * the generated source (CUDA C++, through gen.c's stringizing) use these very fields, so
 * the two layouts cannot drift apart. */
#ifndef TSL_CUDA_GEN_ARGS_H
#define TSL_CUDA_GEN_ARGS_H

/* an elementwise launch (see CudaEw in plugin.h); bad: where an integer kernel reports an
 * operand the CPU's kernel raises an error for (division by zero, a negative power) */
#define GEN_EW_ARGS_FIELDS \
    long long n; int ndim; long long shape[32]; long long st0[32]; long long st1[32]; \
    long long inner0; long long inner1; const void *in0; const void *in1; \
    double num0; double num1; double p; int q; void *out; int *bad;

/* a fused chain: inputs contiguous or one element (inner 0), numbers where in[k] is NULL */
#define GEN_FUSED_ARGS_FIELDS \
    long long n; const void *in[8]; long long inner[8]; double num[8]; void *out; int *bad;

/* a reduction of [outer, len, inner] to [outer, inner] */
#define GEN_REDUCE_ARGS_FIELDS \
    long long outer; long long len; long long inner; const void *in; void *out;

/* a strided gather: out[i] = in[sum of index_d * stride_d] */
#define GEN_GATHER_ARGS_FIELDS \
    long long n; int ndim; long long shape[32]; long long stride[32]; const void *in; void *out;

/* where: out[i] = cond[...] ? a[...] : b[...], each input through its own strides */
#define GEN_WHERE_ARGS_FIELDS \
    long long n; int ndim; long long shape[32]; long long st0[32]; long long st1[32]; long long st2[32]; \
    const void *cond; const void *a; const void *b; void *out;

/* cumsum, cumprod (lines of [outer, len, inner]) and trace (len elements step apart, for
 * each of inner positions) */
#define GEN_LINE_ARGS_FIELDS \
    long long outer; long long len; long long inner; long long step; const void *in; void *out;

/* tile and repeat: the input index along axis d is (out index / div[d]) % mod[d] */
#define GEN_REMAP_ARGS_FIELDS \
    long long n; int ndim; long long shape[32]; long long div[32]; long long mod[32]; long long stride[32]; \
    const void *in; void *out;

typedef struct { GEN_EW_ARGS_FIELDS } GenEwArgs;
typedef struct { GEN_REMAP_ARGS_FIELDS } GenRemapArgs;
typedef struct { GEN_LINE_ARGS_FIELDS } GenLineArgs;
typedef struct { GEN_WHERE_ARGS_FIELDS } GenWhereArgs;
typedef struct { GEN_FUSED_ARGS_FIELDS } GenFusedArgs;
typedef struct { GEN_REDUCE_ARGS_FIELDS } GenReduceArgs;
typedef struct { GEN_GATHER_ARGS_FIELDS } GenGatherArgs;

#endif
