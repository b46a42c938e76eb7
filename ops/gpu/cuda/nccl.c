/* nccl.c - the plugin's collectives over NCCL (plugin.h's nccl_* entries and rank_combine).
 *
 * libnccl is dlopen'ed on the first GPU collective, never linked: the plugin (and every
 * single-GPU or CPU run) works where NCCL is not installed, and only a collective on GPU
 * tensors reports "NCCL not available: <reason>". The communicator is the process's one,
 * over MPI_COMM_WORLD's ranks (ops/gpu/gpu_dist.c sends rank 0's id over MPI). Only gather and
 * broadcast move data; sums are combined in rank order by a generated kernel (gen_coll.h),
 * never by an NCCL reduction, whose order of additions is not fixed. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nccl.h>
#include "cuda_impl.h"
#include "gen.h"
#include "gen_coll.h"

_Static_assert(TSL_NCCL_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "plugin.h's id size is NCCL's");

/* The NCCL functions used, looked up in the dlopen'ed library. */
static struct {
    pthread_mutex_t lock;
    int loaded;
    char why[300];   /* why NCCL could not be loaded (every later call reports it) */
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*async_error)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*comm_abort)(ncclComm_t);
    const char *(*error_string)(ncclResult_t);
    ncclComm_t comm;
} nccl = { PTHREAD_MUTEX_INITIALIZER, 0, "", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };

static int nccl_fail(ncclResult_t r, const char *what, char *err, size_t n) {
    snprintf(err, n, "NCCL error in %s: %s", what, nccl.error_string ? nccl.error_string(r) : "unknown");
    return -1;
}

/* dlopen and look up every function; 0, or -1 with the reason in nccl.why */
static int load_library(void) {
    const char *env = getenv("TSL_NCCL_LIB");   /* another libnccl (and how the tests make it missing) */
    void *h = dlopen(env ? env : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h && !env) h = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(nccl.why, sizeof nccl.why, "%.280s", dlerror());
        return -1;
    }
    struct { void **slot; const char *name; } syms[] = {
        { (void **)&nccl.get_unique_id, "ncclGetUniqueId" }, { (void **)&nccl.comm_init_rank, "ncclCommInitRank" },
        { (void **)&nccl.all_gather, "ncclAllGather" },       { (void **)&nccl.broadcast, "ncclBroadcast" },
        { (void **)&nccl.async_error, "ncclCommGetAsyncError" }, { (void **)&nccl.comm_abort, "ncclCommAbort" },
        { (void **)&nccl.error_string, "ncclGetErrorString" },
    };
    for (size_t k = 0; k < sizeof syms / sizeof *syms; k++)
        if (!(*syms[k].slot = dlsym(h, syms[k].name))) {
            snprintf(nccl.why, sizeof nccl.why, "%s is not in the NCCL library", syms[k].name);
            return -1;
        }
    return 0;
}

int cuda_nccl_load(void *id, char *err, size_t n) {
    pthread_mutex_lock(&nccl.lock);
    if (!nccl.loaded) nccl.loaded = load_library() ? -1 : 1;
    int ok = nccl.loaded == 1;
    pthread_mutex_unlock(&nccl.lock);
    if (!ok) {
        snprintf(err, n, "NCCL not available: %s", nccl.why);
        return -1;
    }
    if (!id) return 0;
    ncclUniqueId u;
    ncclResult_t r = nccl.get_unique_id(&u);
    if (r != ncclSuccess) return nccl_fail(r, "ncclGetUniqueId", err, n);
    memcpy(id, u.internal, sizeof u.internal);
    return 0;
}

/* NCCL calls use the runtime's current device: the plugin's context on this thread */
static int bind(char *err, size_t n) {
    if (cuda.lost) {
        snprintf(err, n, "the GPU was lost after an earlier error");
        return -1;
    }
    CUresult r = cuCtxSetCurrent(cuda.ctx);
    return r == CUDA_SUCCESS ? 0 : cuda_fail_drv(r, "cuCtxSetCurrent", err, n);
}

int cuda_nccl_init(const void *id, int rank, int size, char *err, size_t n) {
    if (cuda_nccl_load(NULL, err, n) || bind(err, n)) return -1;
    ncclUniqueId u;
    memcpy(u.internal, id, sizeof u.internal);
    ncclResult_t r = nccl.comm_init_rank(&nccl.comm, size, u, rank);
    return r == ncclSuccess ? 0 : nccl_fail(r, "ncclCommInitRank", err, n);
}

/* Waits for the stream, watching the communicator: a peer that failed surfaces as NCCL's
 * asynchronous error (the communicator is aborted then) instead of a wait without end. */
static int finish(const char *what, char *err, size_t n) {
    for (;;) {
        cudaError_t e = cudaStreamQuery(cuda.stream);
        if (e == cudaSuccess) return 0;
        if (e != cudaErrorNotReady) return cuda_fail_rt(e, what, err, n);
        ncclResult_t a = ncclSuccess;
        nccl.async_error(nccl.comm, &a);
        if (a != ncclSuccess && a != ncclInProgress) {
            nccl.comm_abort(nccl.comm);
            nccl.comm = NULL;
            return nccl_fail(a, what, err, n);
        }
        sched_yield();
    }
}

static int comm_ready(char *err, size_t n) {
    if (!nccl.comm) {
        snprintf(err, n, "NCCL: the communicator was aborted after an earlier error");
        return -1;
    }
    return bind(err, n);
}

int cuda_nccl_allgather(const void *send, void *recv, size_t nbytes, char *err, size_t n) {
    if (comm_ready(err, n)) return -1;
    ncclResult_t r = nccl.all_gather(send, recv, nbytes, ncclUint8, nccl.comm, cuda.stream);
    return r != ncclSuccess ? nccl_fail(r, "ncclAllGather", err, n) : finish("ncclAllGather", err, n);
}

int cuda_nccl_bcast(void *buf, size_t nbytes, int root, char *err, size_t n) {
    if (comm_ready(err, n)) return -1;
    ncclResult_t r = nccl.broadcast(buf, buf, nbytes, ncclUint8, root, nccl.comm, cuda.stream);
    return r != ncclSuccess ? nccl_fail(r, "ncclBroadcast", err, n) : finish("ncclBroadcast", err, n);
}

int cuda_rank_combine(int redop, int dt, const void *parts, int size, int64_t count, void *out, char *err, size_t n) {
    static CUfunction known[4][4];
    if (redop < 0 || redop > REDOP_MIN || dt < 0 || dt > DT_F64 || !gen_rank_combine_has((RedOp)redop, (DType)dt)) {
        snprintf(err, n, "no GPU kernel to combine ranks for this allreduce");
        return -1;
    }
    CUfunction *slot = &known[redop][dt], f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        char name[64], src[2048];
        if (gen_rank_combine_kernel((RedOp)redop, (DType)dt, name, sizeof name, src, sizeof src)) {
            snprintf(err, n, "the rank-combine kernel could not be generated");
            return -1;
        }
        if (!(f = cuda_kernel(src, name, err, n))) return -1;
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    long long cnt = count;
    void *params[] = { &parts, &out, &cnt, &size };
    return cuda_launch(f, count, params, err, n);
}
