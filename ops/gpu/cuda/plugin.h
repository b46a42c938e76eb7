/* plugin.h - what the CUDA plugin (bin/libtsl_cuda.so, built from ops/gpu/cuda/ where nvcc is
 * installed) gives the library: device memory, copies and the kernels of the op families
 * the GPU covers, as plain C calls on device pointers.
 *
 * bin/tsl never links CUDA; ops/gpu/gpu.c dlopens the plugin on the first use of the GPU and
 * looks up tsl_cuda_plugin(). The plugin knows nothing of tensors or of the op layer: the
 * host side (ops/gpu/gpu.c) validates and infers a call, converts operands, lays out strides
 * and calls one of these. Every call returns 0, or -1 with a message in err; kernels are
 * launched on one stream and not waited for, so a failure of a launched kernel surfaces at
 * the next call that synchronizes (a sticky error: the device is then lost, ops/gpu/gpu.c).
 * Element offsets are 64-bit everywhere. */
#ifndef TSL_CUDA_PLUGIN_H
#define TSL_CUDA_PLUGIN_H
#include <stddef.h>
#include <stdint.h>
#include "gen_nn.h"

#define TSL_CUDA_ABI 13
#define TSL_CUDA_MAX_RANK 32   /* TSL_MAX_RANK */
#define TSL_CUDA_MAX_IN 8      /* inputs of one fused elementwise kernel */
#define TSL_NCCL_ID_BYTES 128  /* NCCL_UNIQUE_ID_BYTES: the communicator's id, sent over MPI */

/* init's results */
enum { CUDA_OK = 0, CUDA_NO_RUNTIME = 1, CUDA_NO_DEVICE = 2 };

/* One elementwise kernel launch: out[i] = op(in0[...], in1[...]) over n elements of the
 * output shape. Operands are already in the compute dtype ct (the host converts them, as
 * the CPU does); a NULL in[k] is the number num[k]. form 'c': each input is contiguous or
 * a single element (inner[k] 1 or 0); form 's': element strides per axis of shape
 * (0 where broadcast). */
typedef struct {
    int op, ct, out_dt;       /* OpCode, DType */
    int nin;                  /* 1 or 2 */
    char form;                /* 'c' or 's' */
    int64_t n;
    int ndim;
    int64_t shape[TSL_CUDA_MAX_RANK];
    int64_t stride[2][TSL_CUDA_MAX_RANK];
    int64_t inner[2];
    const void *in[2];
    double num[2];
    double p;                 /* round: the power of ten; q: decimals >= 0 */
    int q;
    void *out;
} CudaEw;

/* A fused elementwise chain (the static VM's fused group) as one generated kernel: step s
 * is t[dst] := op(a, b) as gen.h's GenStep; operands are earlier temporaries (>= 0) or
 * inputs (-(k+1)), b -1000000 for a unary step. Inputs are contiguous of n elements or
 * single elements (inner 0); a NULL input is the number num[k]. All in ct; the last
 * step's result is written to out. */
typedef struct {
    int op, dst, a, b;
} CudaStep;
typedef struct {
    int ct;
    int nsteps, nin;
    const CudaStep *steps;
    const void *in[TSL_CUDA_MAX_IN];
    int64_t inner[TSL_CUDA_MAX_IN];
    double num[TSL_CUDA_MAX_IN];
    void *out;
    int64_t n;
} CudaFused;

/* A reduction of a contiguous [outer, len, inner] view to [outer, inner]. */
typedef struct {
    int op, dt, out_dt;       /* OpCode (sum mean max min prod argmax argmin all any), DType */
    int64_t outer, len, inner;
    const void *in;
    void *out;
} CudaReduce;

/* C[b] = op(A[b]) @ B[b], row-major, f32 or f64; a_stride/b_stride 0 broadcasts one matrix
 * over the batch. trans_a: A is stored k x m. */
typedef struct {
    int dt;
    int64_t batch, m, n, k;
    int trans_a;
    const void *a, *b;
    void *c;
    int64_t a_stride, b_stride;
} CudaGemm;

/* C[batch] = op(A) @ B in i64 (wrapping), row-major, over a broadcast batch of nbd axes
 * (bshape); a_stride[d] / b_stride[d]: elements between A's / B's matrices along batch axis
 * d, 0 where broadcast. trans_a: A's matrices are stored k x m. */
typedef struct {
    int64_t m, n, k;
    int trans_a, nbd;
    int64_t bshape[TSL_CUDA_MAX_RANK], a_stride[TSL_CUDA_MAX_RANK], b_stride[TSL_CUDA_MAX_RANK];
    const int64_t *a, *b;
    int64_t *c;
} CudaImatmul;

/* A convolution or pooling kernel (ops/gpu/cuda/conv.c; the host side is ops/gpu/gpu_conv.c),
 * f32 or f64 (dt), over the geometry of ops/conv.h: kind CUDA_IM2COL writes x's columns
 * [n, c * kh * kw, oh * ow] to y; CUDA_COL2IM sums the columns x back into the image y
 * [n, c, h, w]; CUDA_BIAS adds x [c] to y [total / (c * h), c, h]; CUDA_POOL writes each
 * window's max or mean of x to y [n, c, oh, ow]; CUDA_POOL_BACK writes x's gradient y from the
 * result's gy. total: the elements written. Kernels of gen_conv.c (gen_conv.h). */
enum { CUDA_IM2COL, CUDA_COL2IM, CUDA_BIAS, CUDA_POOL, CUDA_POOL_BACK };
typedef struct {
    int kind, dt, max, adaptive;
    int64_t total, n, c, h, w, oh, ow, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
    const void *x, *gy;
    void *y;
} CudaConv;

/* A neural-network kernel (ops/gpu/cuda/nn.c; the host side is ops/gpu/gpu_nn.c): kind picks
 * the kernel of gen_nn.c (its arguments a, gen_nn.h), dt the dtype (gather: the element
 * size's dtype). Launched, not waited for; the sequential kernels run on one thread. */
enum { CUDA_SOFTPLUS, CUDA_NORM_STATS, CUDA_NORM_APPLY, CUDA_XENT_ROWS, CUDA_XENT_SUM, CUDA_GATHER_AXIS,
       CUDA_IDX_CHECK, CUDA_SCATTER_AXIS, CUDA_MASKED_FILL };
typedef struct {
    int kind, dt;
    GenNnArgs a;
} CudaNn;

/* Dense linear algebra through cuSOLVER (f32 or f64): batch matrices, each column-major
 * (LAPACK's layout) and contiguous after the previous one, overwritten.
 *   solve:    a n x n, b n x k: b becomes the solution
 *   inv:      a n x n; out[0] n x n, the inverse
 *   det:      a n x n; out[0] one value per matrix (0 for a singular one, as the CPU)
 *   cholesky: a becomes l (its lower triangle; the upper one zeroed)
 *   qr:       a m x n becomes q (its first k = min(m, n) columns); out[0] r, k x n ROW-major
 *   svd:      a m x n; out[0] u (m x k), out[1] s (k, descending), out[2] v (n x k: vt row-major)
 *   eigh:     a n x n (its lower triangle read) becomes the eigenvectors; out[0] the values,
 *             ascending */
typedef struct {
    int op, dt;     /* OpCode, DType */
    int64_t batch, m, n, k;
    void *a, *b, *out[3];
} CudaSolve;

typedef struct {
    int abi;    /* TSL_CUDA_ABI: a plugin from another build is refused */
    int nops;   /* OP__COUNT of the op table it was built with */
    /* Starts the runtime on device 0 (under mpirun: the local rank mod the device count): CUDA_OK, CUDA_NO_RUNTIME (why in err) or CUDA_NO_DEVICE. */
    int (*init)(char *err, size_t n);
    /* Device memory from the caching allocator: a freed block is kept for the next request of
     * its size class; when the device is out of memory the cache is freed and the request
     * tried once more. */
    int (*alloc)(void **p, size_t bytes, char *err, size_t n);
    void (*free)(void *p, size_t bytes);
    /* cudaMalloc calls so far, and bytes held in the cache (tests count steady state). */
    void (*alloc_stats)(int64_t *mallocs, int64_t *cached);
    int (*to_device)(void *dst, const void *src, size_t bytes, char *err, size_t n);
    int (*to_host)(void *dst, const void *src, size_t bytes, char *err, size_t n);
    int (*copy)(void *dst, const void *src, size_t bytes, char *err, size_t n);
    /* height rows of width bytes, rows dpitch / spitch bytes apart (concat, stack) */
    int (*copy2d)(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, char *err,
                  size_t n);
    int (*synchronize)(char *err, size_t n);
    /* Whether the generator has a kernel for (op, ct) (elementwise and astype). */
    int (*has_ew)(int op, int ct);
    int (*ew)(const CudaEw *job, char *err, size_t n);
    /* a whole fused chain in one kernel (compiled once per chain) */
    int (*fused)(const CudaFused *job, char *err, size_t n);
    /* out (dt_out, n elements) = in (dt_in) converted as the CPU's astype; i64 from a float
     * that is NaN, infinite or out of range sets *bad (checked by the host after a sync) */
    int (*astype)(int dt_in, int dt_out, const void *in, void *out, int64_t count, char *err, size_t n);
    int (*reduce)(const CudaReduce *job, char *err, size_t n);
    /* softmax or log_softmax (op) over the last axis of rows x len, f32 or f64 */
    int (*softmax)(int op, int dt, const void *in, void *out, int64_t rows, int64_t len, char *err, size_t n);
    int (*gemm)(const CudaGemm *job, char *err, size_t n);
    /* out[i] = in[offset of output element i under the permutation]: transpose and
     * broadcast_to (strides in elements, 0 where broadcast), elements of esz bytes */
    int (*gather_strided)(int esz, int ndim, const int64_t *shape, const int64_t *stride, const void *in, void *out,
                          int64_t count, char *err, size_t n);
    /* out[i] = cond[...] ? a[...] : b[...] (cond bool; a, b, out of esz-byte elements), each
     * input through its strides over out's shape */
    int (*where)(int esz, int ndim, const int64_t *shape, const int64_t (*stride)[TSL_CUDA_MAX_RANK], const void *cond,
                 const void *a, const void *b, void *out, int64_t count, char *err, size_t n);
    /* kind 0 cumsum, 1 cumprod: each line of [outer, len, inner] in order; kind 2 trace:
     * out[r] = the sum of in[k * step + r] for k < len, r < inner. dt is the input's dtype
     * (bool and i64 give i64). */
    int (*lines)(int kind, int dt, int64_t outer, int64_t len, int64_t inner, int64_t step, const void *in, void *out,
                 char *err, size_t n);
    /* take (esz-byte elements; idx i64, negative from the end) and scatter_add (y of dtype dt
     * gets v[k], or v[0] when one, added at idx[k] in order): 0; 1 when a position is out of
     * range, *bad_k the first such k (nothing is added then); -1 on a CUDA error */
    int (*take)(int esz, const void *t, int64_t nt, const int64_t *idx, void *out, int64_t count, int64_t *bad_k,
                char *err, size_t n);
    int (*scatter_add)(int dt, void *y, int64_t ny, const int64_t *idx, const void *v, int64_t count, int one,
                       int64_t *bad_k, char *err, size_t n);
    /* out[i] = in[sum over d of ((index_d / div[d]) % mod[d]) * stride[d]] (tile, repeat) */
    int (*remap)(int esz, int ndim, const int64_t *shape, const int64_t *div, const int64_t *mod, const int64_t *stride,
                 const void *in, void *out, int64_t count, char *err, size_t n);
    /* one_hot of count i64 labels into rows of n f32: 0, or 1 with *bad_k the first label out
     * of [0, n); -1 on a CUDA error */
    int (*one_hot)(const int64_t *labels, int64_t count, int64_t n, float *out, int64_t *bad_k, char *err, size_t en);
    /* Philox draws with the CPU's stream definition (ops/cpu/random.c): kind 0 uniform f32,
     * 1 normal f32, 2 integers in [lo, hi) (i64). */
    int (*random)(int kind, uint64_t key, uint64_t counter, int64_t lo, int64_t hi, void *out, int64_t count,
                  char *err, size_t n);

    /* ---------- kern: ordering, padding (ops/gpu/cuda/sort.c; the host side is ops/gpu/gpu_sort.c) and
     * integer matmul (ops/gpu/cuda/linalg.c; ops/gpu/gpu_matmul.c), cuSOLVER (ops/gpu/cuda/solver.c;
     * ops/gpu/gpu_linalg.c) ----------
     * sort, argsort and topk: each line of the [outer, len, inner] view of in (dtype dt)
     * ordered as the CPU's stable sort (ops/cpu/axis.c: NaN above +inf, -0 tied with +0,
     * ties in input order; desc complements the keys); the first kout of each line go to
     * vals (in's dtype, [outer, kout, inner]; may be NULL) and their positions along the axis
     * to idx (may be NULL). key and pos are scratch of outer * inner * P elements, P the
     * power of two >= len. */
    int (*sort)(int dt, const void *in, int64_t outer, int64_t len, int64_t inner, int desc, int64_t kout, void *vals,
                int64_t *idx, uint64_t *key, int64_t *pos, int64_t P, char *err, size_t n);
    /* unique: the distinct values of in (count elements of dt), ascending, the first of equals
     * kept, into out (room for count); *m their number (waits for the device). key, pos,
     * rank: scratch of P elements, P the power of two >= count. */
    int (*unique)(int dt, const void *in, int64_t count, void *out, int64_t *m, uint64_t *key, int64_t *pos,
                  int64_t *rank, int64_t P, char *err, size_t n);
    /* pad: out (count elements, shape oshape) holds value (esz bytes) except where each index
     * lies in [before, before + ishape): there it holds in[index - before] */
    int (*pad)(int esz, int ndim, const int64_t *oshape, const int64_t *ishape, const int64_t *before,
               const void *value, const void *in, void *out, int64_t count, char *err, size_t n);
    /* integer matmul (ops/gpu/cuda/linalg.c) */
    int (*imatmul)(const CudaImatmul *job, char *err, size_t n);
    /* cuSOLVER (ops/gpu/cuda/solver.c): 0 with *failed the first matrix cuSOLVER reported as
     * singular / not positive definite / not converged (-1 when none; det has no such
     * failure); waits for the device */
    int (*solve)(const CudaSolve *job, int64_t *failed, char *err, size_t n);
    /* convolution and pooling kernels (ops/gpu/cuda/conv.c), launched, not waited for */
    int (*conv)(const CudaConv *job, char *err, size_t n);
    /* neural-network kernels (ops/gpu/cuda/nn.c) */
    int (*nn)(const CudaNn *job, char *err, size_t n);

    /* ---------- collectives over NCCL (ops/gpu/cuda/nccl.c; the host side is ops/gpu/gpu_dist.c) ----------
     * libnccl is dlopen'ed by nccl_load, so the plugin loads where NCCL is missing; only a
     * collective on GPU tensors needs it. One communicator per process, over the ranks of
     * MPI_COMM_WORLD, on this process's device (init's rule: local rank mod device count).
     * Each collective is enqueued on the plugin's stream and waited for, so a failure is
     * reported by the call that caused it. */
    /* Loads NCCL (first call only); with id non-NULL also makes a new unique id into it
     * (TSL_NCCL_ID_BYTES bytes, on rank 0). -1 with "NCCL not available: <reason>". */
    int (*nccl_load)(void *id, char *err, size_t n);
    /* The communicator from rank 0's id (every rank calls it, as ncclCommInitRank). */
    int (*nccl_init)(const void *id, int rank, int size, char *err, size_t n);
    /* recv (size * nbytes) gets every rank's send, in rank order (ncclAllGather) */
    int (*nccl_allgather)(const void *send, void *recv, size_t nbytes, char *err, size_t n);
    /* buf of rank root on every rank, in place (ncclBroadcast) */
    int (*nccl_bcast)(void *buf, size_t nbytes, int root, char *err, size_t n);
    /* out[i] = ((parts[0][i] op parts[1][i]) op parts[2][i]) ... over size slices of count
     * elements of dt, in rank order with the CPU's arithmetic (ops/cpu/collective.c); mean
     * divides the sum by size. redop is a RedOp (sum, mean, max, min). */
    int (*rank_combine)(int redop, int dt, const void *parts, int size, int64_t count, void *out, char *err,
                        size_t n);

    /* ---------- capt: CUDA Graph capture of the stream (ops/gpu/cuda/graph.c; host side
     * ops/gpu/gpu_graph.c, used by the static VM's capture segments, vm/run/vm_seg.c) ----------
     * capture_begin starts capturing the plugin's stream (mode 0: cudaStreamCaptureModeRelaxed,
     * so the caching allocator may still cudaMalloc); from then until capture_end, launches are
     * recorded, not run, and free() keeps every block for the graph being captured. capture_end
     * must follow every capture_begin that succeeded: it ends the capture and instantiates the
     * graph into *graph (an opaque handle owning the kept blocks), or fails (-1: the capture was
     * invalidated, e.g. by a call that needs the host; the kept blocks go back to the cache).
     * graph_launch enqueues a replay on the stream (not waited for); graph_free destroys it and
     * gives its blocks back to the cache. */
    int (*capture_begin)(int mode, char *err, size_t n);
    int (*capture_end)(void **graph, char *err, size_t n);
    int (*graph_launch)(void *graph, char *err, size_t n);
    void (*graph_free)(void *graph);
} TslCudaPlugin;

typedef const TslCudaPlugin *(*TslCudaPluginFn)(void);

#endif
