/* graph.c - CUDA Graph capture of the plugin's stream, for the static VM's capture segments
 * (vm/run/vm_seg.c through ops/gpu/gpu_graph.c).
 *
 * A captured graph bakes every kernel's parameters, device addresses included, so any block
 * its kernels touch must stay reserved for it: while a capture is under way the allocator's
 * free (cuda_plugin.c) hands blocks here, and the instantiated graph owns them until
 * graph_free gives them back to the cache. Blocks still held by tensors are the caller's
 * business (the VM's arena: its regions never move). One capture at a time; the interpreter
 * thread that captures is the only one using the stream meanwhile (model sessions on other
 * threads do not use the GPU while a capture runs: they would be recorded into it). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "cuda_impl.h"

typedef struct Kept {
    void *p;
    size_t bytes;
    struct Kept *next;
} Kept;

typedef struct {
    cudaGraphExec_t exec;
    Kept *kept;
} Captured;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int capturing;
static Kept *kept;            /* blocks freed during the capture under way */
static int out_of_host_memory; /* a block could not be remembered: the capture must fail */

int cuda_capture_keep(void *p, size_t bytes) {
    pthread_mutex_lock(&lock);
    int on = capturing;
    if (on) {
        Kept *k = malloc(sizeof *k);
        if (k) {
            *k = (Kept){ p, bytes, kept };
            kept = k;
        } else {   /* leak the block rather than let the graph's memory be reused */
            out_of_host_memory = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return on;
}

static void give_back(Kept *k) {
    while (k) {
        Kept *next = k->next;
        cuda_pool_free(k->p, k->bytes);
        free(k);
        k = next;
    }
}

int cuda_capture_begin(int mode, char *err, size_t n) {
    (void)mode;   /* relaxed: the allocator may cudaMalloc while capturing */
    if (cuda.lost) {
        snprintf(err, n, "the CUDA device was lost after an earlier error");
        return -1;
    }
    cudaError_t e = cudaStreamBeginCapture(cuda.stream, cudaStreamCaptureModeRelaxed);
    if (e != cudaSuccess) return cuda_fail_rt(e, "cudaStreamBeginCapture", err, n);
    pthread_mutex_lock(&lock);
    capturing = 1;
    kept = NULL;
    out_of_host_memory = 0;
    pthread_mutex_unlock(&lock);
    return 0;
}

int cuda_capture_end(void **graph, char *err, size_t n) {
    *graph = NULL;
    pthread_mutex_lock(&lock);
    capturing = 0;
    Kept *mine = kept;
    kept = NULL;
    int oom = out_of_host_memory;
    pthread_mutex_unlock(&lock);
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(cuda.stream, &g);
    if (e != cudaSuccess || !g) {
        /* nothing captured ran, so the blocks are free again */
        give_back(mine);
        if (g) cudaGraphDestroy(g);
        return cuda_fail_rt(e != cudaSuccess ? e : cudaErrorStreamCaptureInvalidated, "cudaStreamEndCapture", err, n);
    }
    Captured *c = oom ? NULL : malloc(sizeof *c);
    if (!c) {
        cudaGraphDestroy(g);
        give_back(mine);
        snprintf(err, n, "out of host memory while capturing a CUDA Graph");
        return -1;
    }
    e = cudaGraphInstantiate(&c->exec, g, 0);
    cudaGraphDestroy(g);   /* the executable graph is independent of it */
    if (e != cudaSuccess) {
        free(c);
        give_back(mine);
        return cuda_fail_rt(e, "cudaGraphInstantiate", err, n);
    }
    c->kept = mine;
    *graph = c;
    return 0;
}

int cuda_graph_launch(void *graph, char *err, size_t n) {
    if (cuda.lost) {
        snprintf(err, n, "the CUDA device was lost after an earlier error");
        return -1;
    }
    cudaError_t e = cudaGraphLaunch(((Captured *)graph)->exec, cuda.stream);
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "cudaGraphLaunch", err, n);
}

void cuda_graph_free(void *graph) {
    Captured *c = graph;
    if (!c) return;
    /* a replay may still be running: its blocks go back to the cache only after it ends
     * (the stream orders later work after it; the destroy waits for nothing) */
    cudaStreamSynchronize(cuda.stream);
    cudaGraphExecDestroy(c->exec);
    give_back(c->kept);
    free(c);
}
