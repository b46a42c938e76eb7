/* gpu.h - the GPU device (ops/gpu.c): the CUDA plugin loaded on first use.
 *
 * bin/tsl never links CUDA. The first use of the GPU (to(t, "gpu"), device("gpu"),
 * --device gpu, :device gpu, tsl_set_device) calls gpu_start(), which dlopens
 * bin/libtsl_cuda.so (TSL_CUDA_PLUGIN names another), checks that it was built with this
 * op table, starts CUDA on device 0 and registers the GPU in the device registry. The
 * plugin and its CUDA context belong to the process: started once, under pthread_once.
 * Errors: -1 / NULL with the message in op_error(): "CUDA runtime not available: <reason>"
 * (no plugin, no driver, ...) or "no CUDA device found". */
#ifndef TSL_GPU_H
#define TSL_GPU_H
#include <stddef.h>
#include <stdint.h>
#include "opcall.h"

/* Starts the GPU (first call only); 0, or -1 with the reason, every time it is asked. */
int gpu_start(void);
/* t on device d: t itself (retained) when it is there already, else a NEW copy. */
Tensor *gpu_to(const Tensor *t, Device d);

/* Indexing of a tensor on any device (t[items], or t with v assigned at items when set):
 * indexing runs on the host (ops/cpu/index.c), so a GPU tensor is indexed through a host
 * copy and the NEW result goes back to t's device. */
Tensor *gpu_index_any(Tensor *t, const void *items, int n, const Tensor *v, bool set);
/* Same dtype, shape and element bits, for tensors on any device (compared on the host). */
bool gpu_equal_any(const Tensor *a, const Tensor *b);

/* cudaMalloc calls of the process so far (the caching allocator's count), 0 before the GPU
 * started: memstats().device_mallocs, for checking that steady state allocates nothing. */
int64_t gpu_device_mallocs(void);

/* A fused elementwise group (the static VM's) as one generated kernel (ops/gpu_fused.c).
 * Step s is t[dst] := op(a, b): operands are earlier temporaries (>= 0) or inputs -(k+1),
 * b GPU_FUSED_NONE for a unary step; the last step's temporary is the result. The kernel
 * evaluates each step with the expression row the eager kernel of its op uses, keeping
 * temporaries in the compute dtype, so its bits are the eager ops' bits. */
#define GPU_FUSED_MAX_IN 8
#define GPU_FUSED_NONE (-1000000)
typedef struct {
    int op, dst, a, b;
} GpuFusedStep;
/* in[k]: a GPU tensor of out's dtype with out's size or one element, or NULL for the
 * number num[k] (a weak scalar, converted to the dtype as the eager kernel converts it).
 * 0 when it ran; 1 when the GPU has no kernel for it (nothing ran: the caller runs the
 * steps one by one); -1 on an error (message in op_error()). */
int gpu_fused_run(const GpuFusedStep *steps, int nsteps, const Tensor *const *in, const double *num, int nin,
                  Tensor *out);

/* CUDA Graph capture of the plugin's stream (ops/gpu_graph.c; the static VM's segments,
 * vm/vm_seg.c). Between gpu_capture_begin and gpu_capture_end kernels are recorded, not run,
 * and every device buffer freed is kept by the graph being captured (its kernels may use it
 * at each replay) until gpu_graph_free. gpu_capture_end is called after every begin that
 * succeeded, even when the work in between failed: it gives the instantiated graph, or -1
 * (capture invalidated by a call that needs the host, ...; nothing was launched, the buffers
 * are free again). */
int gpu_capture_begin(void);
/* dst's elements := src's (two GPU tensors of the same size): a device-to-device copy on the
 * stream, not waited for (so it can be captured). */
int gpu_copy_into(Tensor *dst, const Tensor *src);
int gpu_capture_end(void **graph);
int gpu_graph_launch(void *graph);   /* enqueued on the stream, not waited for */
void gpu_graph_free(void *graph);

#endif
