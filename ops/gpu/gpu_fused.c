/* gpu_fused.c - what static graphs on the GPU ask of the device: a fused elementwise group
 * as one kernel (the plugin generates it from the op table's expression rows,
 * ops/gpu/cuda/gen.c gen_fused_kernel, and compiles it with NVRTC once per chain), and the
 * allocator's cudaMalloc count for steady-state checks. See gpu.h. */
#include "gpu_impl.h"

/* Whether the plugin can run the chain over these inputs in one kernel. */
static bool fusable(const DevFusedStep *steps, int nsteps, const Tensor *const *in, int nin, const Tensor *out) {
    if (nsteps < 1 || nsteps > 256 || nin < 1 || nin > DEV_FUSED_MAX_IN || out->device != DEV_GPU) return false;
    for (int s = 0; s < nsteps; s++)
        if (steps[s].op == OP_ROUND || !gpu_cu->has_ew(steps[s].op, out->dtype) ||
            op_info[steps[s].op].kind == K_COMPARE)   /* a truth value is a bool tensor eagerly */
            return false;
    for (int k = 0; k < nin; k++)
        if (in[k] && (in[k]->device != DEV_GPU || in[k]->dtype != out->dtype || (in[k]->size != out->size && in[k]->size != 1)))
            return false;
    return true;
}

int gpu_fused_run(const DevFusedStep *steps, int nsteps, const Tensor *const *in, const double *num, int nin,
                  Tensor *out) {
    if (!gpu_cu || !fusable(steps, nsteps, in, nin, out)) return 1;
    CudaStep cs[256];
    for (int s = 0; s < nsteps; s++) cs[s] = (CudaStep){ steps[s].op, steps[s].dst, steps[s].a, steps[s].b };
    CudaFused job = { .ct = out->dtype, .nsteps = nsteps, .nin = nin, .steps = cs, .out = out->data, .n = out->size };
    for (int k = 0; k < nin; k++) {
        job.in[k] = in[k] ? in[k]->data : NULL;
        job.inner[k] = in[k] && in[k]->size == out->size ? 1 : 0;
        job.num[k] = num[k];
    }
    char err[400] = "";
    return GPU_CALL(fused, &job);
}

int64_t gpu_device_mallocs(void) {
    int64_t mallocs = 0, cached = 0;
    if (gpu_cu) gpu_cu->alloc_stats(&mallocs, &cached);
    return mallocs;
}
