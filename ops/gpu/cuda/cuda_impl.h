/* cuda_impl.h - what the plugin's files share: the device state and the kernels behind
 * the plugin table (plugin.h). Inside libtsl_cuda.so only. */
#ifndef TSL_CUDA_IMPL_H
#define TSL_CUDA_IMPL_H
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include "opcall.h"
#include "plugin.h"

#define CUDA_BLAS_WORKSPACE (32u << 20)
/* n axes of a shape or strides (int64_t) into a launch argument's array (long long) */
#define AXES(to, from, n) memcpy(to, from, sizeof(int64_t) * (size_t)(n))

typedef struct {
    cudaStream_t stream;
    cublasHandle_t blas;
    void *workspace;
    int *flag;              /* a device int kernels raise (astype's bad conversions) */
    unsigned long long *badk;   /* the first bad position of take / scatter_add */
    int cc_major, cc_minor, sms;
    int lost;               /* a sticky error happened: every later call fails */
    CUcontext ctx;          /* device 0's primary context, made current on any thread that launches */
} CudaState;
extern CudaState cuda;

/* Error text into err; marks the device lost unless the error was out of memory. -1. */
int cuda_fail_rt(cudaError_t e, const char *what, char *err, size_t n);
int cuda_fail_drv(CUresult e, const char *what, char *err, size_t n);

/* The kernel `name` of the module compiled from prelude + src (nvrtc.c): compiled once per
 * source hash, kept in memory and on disk. NULL with the message in err. */
CUfunction cuda_kernel(const char *src, const char *name, char *err, size_t n);
/* Launches f over `count` elements (grid-stride loops: the grid is capped) with params. */
int cuda_launch(CUfunction f, int64_t count, void **params, char *err, size_t n);
/* One block per item (reductions, softmax rows). */
int cuda_launch_blocks(CUfunction f, int64_t items, void **params, char *err, size_t n);

int cuda_has_ew(int op, int ct);
int cuda_ew(const CudaEw *job, char *err, size_t n);
int cuda_fused(const CudaFused *job, char *err, size_t n);
int cuda_astype(int dt_in, int dt_out, const void *in, void *out, int64_t count, char *err, size_t n);
int cuda_reduce(const CudaReduce *job, char *err, size_t n);
int cuda_softmax(int op, int dt, const void *in, void *out, int64_t rows, int64_t len, char *err, size_t n);
int cuda_gemm(const CudaGemm *job, char *err, size_t n);
int cuda_gather_strided(int esz, int ndim, const int64_t *shape, const int64_t *stride, const void *in, void *out,
                        int64_t count, char *err, size_t n);
int cuda_where(int esz, int ndim, const int64_t *shape, const int64_t (*stride)[TSL_CUDA_MAX_RANK], const void *cond,
               const void *a, const void *b, void *out, int64_t count, char *err, size_t n);
int cuda_lines(int kind, int dt, int64_t outer, int64_t len, int64_t inner, int64_t step, const void *in, void *out,
               char *err, size_t n);
int cuda_take(int esz, const void *t, int64_t nt, const int64_t *idx, void *out, int64_t count, int64_t *bad_k,
              char *err, size_t n);
int cuda_scatter_add(int dt, void *y, int64_t ny, const int64_t *idx, const void *v, int64_t count, int one,
                     int64_t *bad_k, char *err, size_t n);
int cuda_remap(int esz, int ndim, const int64_t *shape, const int64_t *div, const int64_t *mod, const int64_t *stride,
               const void *in, void *out, int64_t count, char *err, size_t n);
int cuda_one_hot(const int64_t *labels, int64_t count, int64_t n, float *out, int64_t *bad_k, char *err, size_t en);
int cuda_random(int kind, uint64_t key, uint64_t counter, int64_t lo, int64_t hi, void *out, int64_t count, char *err,
                size_t n);
/* ordering and padding (sort.c; plugin.h says what each does) */
int cuda_sort(int dt, const void *in, int64_t outer, int64_t len, int64_t inner, int desc, int64_t kout, void *vals,
              int64_t *idx, uint64_t *key, int64_t *pos, int64_t P, char *err, size_t n);
int cuda_unique(int dt, const void *in, int64_t count, void *out, int64_t *m, uint64_t *key, int64_t *pos,
                int64_t *rank, int64_t P, char *err, size_t n);
int cuda_pad(int esz, int ndim, const int64_t *oshape, const int64_t *ishape, const int64_t *before,
             const void *value, const void *in, void *out, int64_t count, char *err, size_t n);
int cuda_imatmul(const CudaImatmul *job, char *err, size_t n);
int cuda_solve(const CudaSolve *job, int64_t *failed, char *err, size_t n);
int cuda_conv(const CudaConv *job, char *err, size_t n);
int cuda_nn(const CudaNn *job, char *err, size_t n);
/* the caching allocator (cuda_plugin.c), for the plugin's own scratch */
int cuda_alloc(void **p, size_t bytes, char *err, size_t n);
void cuda_free(void *p, size_t bytes);

/* collectives over NCCL and allreduce's ordered combine (nccl.c; plugin.h says what each does) */
int cuda_nccl_load(void *id, char *err, size_t n);
int cuda_nccl_init(const void *id, int rank, int size, char *err, size_t n);
int cuda_nccl_allgather(const void *send, void *recv, size_t nbytes, char *err, size_t n);
int cuda_nccl_bcast(void *buf, size_t nbytes, int root, char *err, size_t n);
int cuda_rank_combine(int redop, int dt, const void *parts, int size, int64_t count, void *out, char *err, size_t n);

/* CUDA Graph capture (graph.c; plugin.h says what each does). cuda_capture_keep: called by
 * the allocator's free, 1 when a capture is under way and it kept the block for the graph. */
int cuda_capture_begin(int mode, char *err, size_t n);
int cuda_capture_end(void **graph, char *err, size_t n);
int cuda_graph_launch(void *graph, char *err, size_t n);
void cuda_graph_free(void *graph);
int cuda_capture_keep(void *p, size_t bytes);
/* The allocator's free without the capture's hold (graph.c gives kept blocks back with it). */
void cuda_pool_free(void *p, size_t bytes);

#endif
