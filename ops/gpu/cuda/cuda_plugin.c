/* cuda_plugin.c - the CUDA plugin's entry point, start-up and memory: the table
 * tsl_cuda_plugin() hands to ops/gpu/gpu.c (plugin.h), the runtime and cuBLAS started on
 * one device (device 0, or under mpirun the local rank mod the device count) with one
 * stream, and the caching device allocator.
 *
 * The kernels live in cuda_kernels.c; the compiled-module cache in nvrtc.c. This file and
 * those are the only ones that include CUDA headers, and only libtsl_cuda.so links them. */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_impl.h"

CudaState cuda;

/* ---------- errors ---------- */

/* The errors after which the context is unusable (a kernel faulted): the device is lost.
 * The others (a bad argument, out of memory) leave it working. */
static bool sticky_rt(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress: case cudaErrorLaunchFailure: case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction: case cudaErrorMisalignedAddress: case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc: case cudaErrorLaunchTimeout: case cudaErrorECCUncorrectable: case cudaErrorAssert:
    case cudaErrorContextIsDestroyed: case cudaErrorDevicesUnavailable: case cudaErrorUnknown: return true;
    default: return false;
    }
}

static bool sticky_drv(CUresult e) {
    switch (e) {
    case CUDA_ERROR_ILLEGAL_ADDRESS: case CUDA_ERROR_LAUNCH_FAILED: case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: case CUDA_ERROR_MISALIGNED_ADDRESS: case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC: case CUDA_ERROR_LAUNCH_TIMEOUT: case CUDA_ERROR_ECC_UNCORRECTABLE: case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: case CUDA_ERROR_UNKNOWN: return true;
    default: return false;
    }
}

int cuda_fail_rt(cudaError_t e, const char *what, char *err, size_t n) {
    snprintf(err, n, "CUDA error in %s: %s", what, cudaGetErrorString(e));
    if (sticky_rt(e)) cuda.lost = 1;
    else cudaGetLastError();   /* not sticky: cleared, so the next call does not report it again */
    return -1;
}

int cuda_fail_drv(CUresult e, const char *what, char *err, size_t n) {
    const char *s = NULL;
    cuGetErrorString(e, &s);
    snprintf(err, n, "CUDA error in %s: %s", what, s ? s : "unknown error");
    if (sticky_drv(e)) cuda.lost = 1;
    return -1;
}

/* ---------- start-up ---------- */

/* The device this process uses: its local rank (the launcher's, Open MPI, MPICH or Slurm)
 * modulo the device count, so one process per GPU gets a GPU each; device 0 otherwise. */
static int device_of_process(int count) {
    static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID" };
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++) {
        const char *v = getenv(vars[k]);
        if (v && *v) return (int)(strtol(v, NULL, 10) % count + count) % count;
    }
    return 0;
}

static int plugin_init(char *err, size_t n) {
    CUresult r = cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) return CUDA_NO_DEVICE;
    if (r == CUDA_ERROR_STUB_LIBRARY) {   /* the toolkit's stand-in, found where no driver is installed */
        snprintf(err, n, "the CUDA driver library is the toolkit's stub (no NVIDIA driver is installed)");
        return CUDA_NO_RUNTIME;
    }
    if (r != CUDA_SUCCESS) {
        const char *s = NULL;
        if (cuGetErrorString(r, &s) != CUDA_SUCCESS) s = NULL;
        if (s) snprintf(err, n, "cuInit: %s", s);
        else snprintf(err, n, "cuInit failed with CUDA error %d", (int)r);
        return CUDA_NO_RUNTIME;
    }
    int count = 0;
    if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) return CUDA_NO_DEVICE;
    int device = device_of_process(count);
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaFree(NULL);   /* starts the runtime on the primary context */
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&cuda.stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(err, n, "%s", cudaGetErrorString(e));
        return e == cudaErrorNoDevice ? CUDA_NO_DEVICE : CUDA_NO_RUNTIME;
    }
    cuCtxGetCurrent(&cuda.ctx);   /* the runtime's primary context: kernels launch in it */
    CUdevice dev;
    cuDeviceGet(&dev, device);
    cuDeviceGetAttribute(&cuda.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&cuda.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    cuDeviceGetAttribute(&cuda.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    /* cuBLAS: its own workspace (so it never allocates behind the allocator's back) and the
     * pedantic math mode (no reduced-precision or split-k shortcuts chosen per call) */
    if (cublasCreate(&cuda.blas) != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, n, "cublasCreate failed");
        return CUDA_NO_RUNTIME;
    }
    e = cudaMalloc(&cuda.workspace, CUDA_BLAS_WORKSPACE);
    if (e == cudaSuccess) e = cudaMalloc((void **)&cuda.flag, sizeof(int));
    if (e == cudaSuccess) e = cudaMalloc((void **)&cuda.badk, sizeof *cuda.badk);
    if (e != cudaSuccess) {
        snprintf(err, n, "%s", cudaGetErrorString(e));
        return CUDA_NO_RUNTIME;
    }
    if (cublasSetStream(cuda.blas, cuda.stream) != CUBLAS_STATUS_SUCCESS ||
        cublasSetWorkspace(cuda.blas, cuda.workspace, CUDA_BLAS_WORKSPACE) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(cuda.blas, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, n, "cuBLAS could not be configured");
        return CUDA_NO_RUNTIME;
    }
    return CUDA_OK;
}

/* ---------- the caching allocator ----------
 * Blocks are rounded up to a power of two (at least 512 bytes); a freed block goes on its
 * class's list and the next request of that class takes it, so a loop that allocates the
 * same shapes every iteration stops calling cudaMalloc after its first one. */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct Cached {
    void *p;
    struct Cached *next;
} Cached;
static Cached *cache[64];
static int64_t mallocs, cached_bytes;

static int size_class(size_t bytes) {
    int c = 9;
    while (c < 63 && ((size_t)1 << c) < bytes) c++;
    return c;
}

/* Gives every cached block back to the device. */
static void cache_release(void) {
    for (int c = 0; c < 64; c++)
        while (cache[c]) {
            Cached *b = cache[c];
            cache[c] = b->next;
            cudaFree(b->p);
            free(b);
        }
    cached_bytes = 0;
}

static int plugin_alloc(void **p, size_t bytes, char *err, size_t n) {
    int c = size_class(bytes);
    pthread_mutex_lock(&pool_lock);
    Cached *b = cache[c];
    if (b) {
        cache[c] = b->next;
        cached_bytes -= (int64_t)1 << c;
        pthread_mutex_unlock(&pool_lock);
        *p = b->p;
        free(b);
        return 0;
    }
    cudaError_t e = cudaMalloc(p, (size_t)1 << c);
    if (e == cudaErrorMemoryAllocation) {   /* free the cache and try once more */
        cudaGetLastError();
        cache_release();
        e = cudaMalloc(p, (size_t)1 << c);
    }
    if (e == cudaSuccess) mallocs++;
    pthread_mutex_unlock(&pool_lock);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        snprintf(err, n, "out of GPU memory (%zu bytes requested)", bytes);
        return -1;
    }
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "cudaMalloc", err, n);
}

void cuda_pool_free(void *p, size_t bytes) {
    if (!p) return;
    Cached *b = malloc(sizeof *b);
    if (!b) {   /* no host memory to remember it: give it back */
        cudaFree(p);
        return;
    }
    int c = size_class(bytes);
    pthread_mutex_lock(&pool_lock);
    b->p = p;
    b->next = cache[c];
    cache[c] = b;
    cached_bytes += (int64_t)1 << c;
    pthread_mutex_unlock(&pool_lock);
}

/* While a CUDA Graph is being captured, a freed block may still be read or written by the
 * captured kernels at every replay: the graph keeps it (graph.c). */
static void plugin_free(void *p, size_t bytes) {
    if (p && !cuda_capture_keep(p, bytes)) cuda_pool_free(p, bytes);
}

int cuda_alloc(void **p, size_t bytes, char *err, size_t n) { return plugin_alloc(p, bytes, err, n); }
void cuda_free(void *p, size_t bytes) { plugin_free(p, bytes); }

static void plugin_alloc_stats(int64_t *m, int64_t *cached) {
    pthread_mutex_lock(&pool_lock);
    *m = mallocs;
    *cached = cached_bytes;
    pthread_mutex_unlock(&pool_lock);
}

/* ---------- copies ---------- */

static int copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, char *err, size_t n) {
    if (!bytes) return 0;
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, cuda.stream);
    /* host memory may be freed as soon as we return: wait for the copy */
    if (e == cudaSuccess && kind != cudaMemcpyDeviceToDevice) e = cudaStreamSynchronize(cuda.stream);
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "cudaMemcpy", err, n);
}

static int plugin_to_device(void *dst, const void *src, size_t bytes, char *err, size_t n) {
    return copy(dst, src, bytes, cudaMemcpyHostToDevice, err, n);
}
static int plugin_to_host(void *dst, const void *src, size_t bytes, char *err, size_t n) {
    return copy(dst, src, bytes, cudaMemcpyDeviceToHost, err, n);
}
static int plugin_copy(void *dst, const void *src, size_t bytes, char *err, size_t n) {
    return copy(dst, src, bytes, cudaMemcpyDeviceToDevice, err, n);
}

static int plugin_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         char *err, size_t n) {
    if (!width || !height) return 0;
    cudaError_t e = cudaSuccess;
    if (dpitch <= INT32_MAX && spitch <= INT32_MAX) {
        e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDeviceToDevice, cuda.stream);
    } else {   /* pitches past what cudaMemcpy2D takes: one copy per row */
        for (size_t r = 0; r < height && e == cudaSuccess; r++)
            e = cudaMemcpyAsync((char *)dst + r * dpitch, (const char *)src + r * spitch, width, cudaMemcpyDeviceToDevice,
                                cuda.stream);
    }
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "cudaMemcpy2D", err, n);
}

static int plugin_synchronize(char *err, size_t n) {
    cudaError_t e = cudaStreamSynchronize(cuda.stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "a kernel", err, n);
}

static const TslCudaPlugin plugin = {
    .abi = TSL_CUDA_ABI,
    .nops = OP__COUNT,
    .init = plugin_init,
    .alloc = plugin_alloc,
    .free = plugin_free,
    .alloc_stats = plugin_alloc_stats,
    .to_device = plugin_to_device,
    .to_host = plugin_to_host,
    .copy = plugin_copy,
    .copy2d = plugin_copy2d,
    .synchronize = plugin_synchronize,
    .has_ew = cuda_has_ew,
    .ew = cuda_ew,
    .fused = cuda_fused,
    .astype = cuda_astype,
    .reduce = cuda_reduce,
    .softmax = cuda_softmax,
    .gemm = cuda_gemm,
    .gather_strided = cuda_gather_strided,
    .where = cuda_where,
    .lines = cuda_lines,
    .remap = cuda_remap,
    .one_hot = cuda_one_hot,
    .take = cuda_take,
    .scatter_add = cuda_scatter_add,
    .random = cuda_random,
    .sort = cuda_sort,
    .unique = cuda_unique,
    .pad = cuda_pad,
    .imatmul = cuda_imatmul,
    .solve = cuda_solve,
    .conv = cuda_conv,
    .nn = cuda_nn,
    .nccl_load = cuda_nccl_load,
    .nccl_init = cuda_nccl_init,
    .nccl_allgather = cuda_nccl_allgather,
    .nccl_bcast = cuda_nccl_bcast,
    .rank_combine = cuda_rank_combine,
    .capture_begin = cuda_capture_begin,
    .capture_end = cuda_capture_end,
    .graph_launch = cuda_graph_launch,
    .graph_free = cuda_graph_free,
};

__attribute__((visibility("default"))) const TslCudaPlugin *tsl_cuda_plugin(void) { return &plugin; }
