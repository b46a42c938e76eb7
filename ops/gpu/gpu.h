/* gpu.h - the GPU device (ops/gpu/gpu.c): the CUDA plugin loaded on first use, and the hooks of
 * its registry row (opcall.h's DeviceImpl) that the static VM's device executor calls. Everything
 * reaches the GPU through the device registry and the device-neutral calls of tops.h.
 *
 * bin/tsl never links CUDA. The first use of the GPU (to(t, "gpu"), device("gpu"),
 * --device gpu, :device gpu, tsl_set_device) calls device_start(DEV_GPU), which dlopens
 * bin/libtsl_cuda.so (TSL_CUDA_PLUGIN names another), checks that it was built with this
 * op table and starts CUDA on device 0; the registry then counts the GPU started. The
 * plugin and its CUDA context belong to the process: started once, under pthread_once.
 * Errors: -1 / NULL with the message in op_error(): "CUDA runtime not available: <reason>"
 * (no plugin, no driver, ...) or "no CUDA device found". */
#ifndef TSL_GPU_H
#define TSL_GPU_H
#include <stddef.h>
#include <stdint.h>
#include "opcall.h"

/* A fused elementwise group (the static VM's; DevFusedStep in opcall.h) as one generated kernel
 * (ops/gpu/gpu_fused.c), the row's fused_run. The kernel evaluates each step with the
 * expression row the eager kernel of its op uses, keeping temporaries in the compute dtype, so
 * its bits are the eager ops' bits. in[k]: a GPU tensor of out's dtype with out's size or one element, or NULL for the
 * number num[k] (a weak scalar, converted to the dtype as the eager kernel converts it).
 * 0 when it ran; 1 when the GPU has no kernel for it (nothing ran: the caller runs the
 * steps one by one); -1 on an error (message in op_error()). */
int gpu_fused_run(const DevFusedStep *steps, int nsteps, const Tensor *const *in, const double *num, int nin,
                  Tensor *out);

/* CUDA Graph capture of the plugin's stream (ops/gpu/gpu_graph.c; the row's capture hooks, for
 * the static VM's segments, vm/run/vm_seg.c). Between gpu_capture_begin and gpu_capture_end kernels are recorded, not run,
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
